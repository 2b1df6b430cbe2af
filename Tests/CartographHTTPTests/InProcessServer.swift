// The HTTP tests' way to a server without a process or a socket: the real `Application` (router, handlers,
// engine, store) over a temporary data directory, answering `HTTPRequest`s directly. Tests of mapping and
// query behaviour use it; tests of connections, limits enforced by the transport, logs and signals keep
// `LiveServer`.
import Foundation
import ArgumentParser
import Logging
import CartographCore
import CartographHTTP
import CartographStore
import CartographTesting
@testable import cartograph

final class InProcessServer: HTTPTestClient {
    let application: Application
    let adminToken = "test-admin-token"
    let dataDirectory: URL

    /// - Parameters:
    ///   - arguments: `serve` flags, read as `cartograph serve` reads them (limits, sync, …).
    ///   - now: the application's wall clock (snapshot sessions expire by it).
    init(arguments: [String] = [], now: @escaping @Sendable () -> Date = { Date() }) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cartograph-inproc-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        dataDirectory = directory
        var configuration = try Settings(serve: Serve.parse(arguments), environment: [:]).configuration
        configuration.dataDirectory = directory.path
        let data = DataDirectory(path: configuration.dataDirectory)
        application = Application(configuration: configuration, control: try ControlStore(directory: data, synchronous: configuration.synchronous),
                                  stores: StoreRegistry(directory: data, synchronous: configuration.synchronous,
                                                        maxOpenStores: configuration.maxOpenStores),
                                  adminToken: adminToken, logger: Logger(label: "cartograph-test", factory: { _ in SwiftLogNoOpLogHandler() }), now: now)
        application.setServiceState(.ready)
    }

    deinit { try? FileManager.default.removeItem(at: dataDirectory) }

    func send(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]?, token: String?) throws -> RawResponse {
        var fields = HTTPHeaders(headers)
        if let token { fields.add("Authorization", "Bearer \(token)") }
        let response = application.respond(to: HTTPRequest(method: method, target: target, headers: fields, body: body ?? []))
        return RawResponse(status: response.status, headers: response.headers, body: response.body)
    }
}
