// The HTTP tests' way to a server without a process or a socket: the real `Application` (router, handlers,
// engine, store) over a temporary data directory, answering `HTTPRequest`s directly. Tests of what the
// application answers use it; a test keeps `LiveServer` (and its suite "Live" in its name) only for what
// the `serve` process does: connections and what libmicrohttpd enforces on them (body limits, timeouts,
// request threads and their stacks), its logs and metrics, signals, and starting again over a data directory.
import Foundation
import Synchronization
import ArgumentParser
import Logging
import CartographCore
import CartographHTTP
import CartographStore
import CartographTesting
@testable import cartograph

/// A server a test talks to, live or in process, so that a helper that sets up tenants and models takes either.
protocol TestServer {
    associatedtype Client: HTTPTestClient
    var client: Client { get }
    var adminToken: String { get }
    /// The directory laid out as a live server's: the data directory `serve` is given is its `data/`.
    var dataDirectory: URL { get }
}

extension LiveServer: TestServer {}

final class InProcessServer: HTTPTestClient, TestServer {
    let application: Application
    let adminToken = "test-admin-token"
    let dataDirectory: URL
    /// Whether the directory is this server's own, removed with it (a test's own directory is the test's).
    private let ownsDirectory: Bool

    var client: InProcessServer { self }

    /// - Parameters:
    ///   - arguments: `serve` flags, read as `cartograph serve` reads them (limits, sync, …).
    ///   - clock: the server's one wall clock, as `serve` gives it to the stores and the application.
    ///   - logger: where the application logs (nowhere unless a test reads the log).
    ///   - longPollWakeInterval: how often at most a store's long polls are woken.
    ///   - dataDirectory: a directory of the test's (a file system of its own); a new temporary one otherwise.
    init(arguments: [String] = [], clock: WallClock = .system, logger: Logger = Logger(label: "cartograph-test", factory: { _ in SwiftLogNoOpLogHandler() }),
         longPollWakeInterval: Duration = ServerConfiguration().longPollWakeInterval, dataDirectory: URL? = nil) throws {
        let directory = dataDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("cartograph-inproc-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.dataDirectory = directory
        ownsDirectory = dataDirectory == nil
        var configuration = try Settings(serve: Serve.parse(arguments), environment: [:]).configuration
        configuration.dataDirectory = directory.appendingPathComponent("data").path
        configuration.longPollWakeInterval = longPollWakeInterval
        let data = DataDirectory(path: configuration.dataDirectory)
        application = Application(configuration: configuration,
                                  control: try ControlStore(directory: data, synchronous: configuration.synchronous, clock: clock),
                                  stores: StoreRegistry(directory: data, synchronous: configuration.synchronous,
                                                        maxOpenStores: configuration.maxOpenStores, clock: clock),
                                  adminToken: adminToken, logger: logger, clock: clock)
        application.setServiceState(.ready)
    }

    deinit {
        if ownsDirectory { try? FileManager.default.removeItem(at: dataDirectory) }
    }

    func send(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]?, token: String?) throws -> RawResponse {
        var fields = HTTPHeaders(headers)
        if let token { fields.add("Authorization", "Bearer \(token)") }
        let request = HTTPRequest(method: method, target: target, headers: fields, body: body ?? [])
        // A long poll is parked as the transport parks it, and this waits for its answer.
        let answered = Answer()
        application.park(application.respond(to: request), for: request) { response in answered.give(response) }
        let response = answered.wait()
        // A streamed body (R-Q7) is read to its end, as a client reads it.
        var body = response.body
        while let piece = try response.stream?.next() { body += piece }
        return RawResponse(status: response.status, headers: response.headers, body: body)
    }

    /// The answer another thread gives a parked request, waited for.
    private final class Answer: Sendable {
        private let response = Mutex<HTTPResponse?>(nil)
        private let given = DispatchSemaphore(value: 0)

        func give(_ answer: HTTPResponse) {
            response.withLock { $0 = answer }
            given.signal()
        }

        func wait() -> HTTPResponse {
            given.wait()
            return response.withLock { $0 } ?? HTTPResponse(status: 500)
        }
    }
}

extension Application {
    /// The routes the server serves, read from an application over a temporary data directory, for the
    /// tests that check each route's method, template and rules against the spec or send something to each.
    static let servedRoutes: [Route] = {
        guard let server = try? InProcessServer() else { preconditionFailure("cannot create a temporary data directory") }
        return server.application.routes
    }()
}
