// R-S6: a fault of the server is logged with its cause — the error it was made from, an SQLite error with
// its code and message — under the request's id, while the answer says only that it happened and where
// to find it.
import Foundation
import Logging
import Synchronization
import Testing
import CartographCore
import CartographStore
import CartographTesting

/// The lines a logger was given, for a test to read.
final class CapturedLog: Sendable {
    struct Line: Sendable {
        let message: String
        let metadata: Logger.Metadata
    }

    private let lines = Mutex<[Line]>([])

    var logger: Logger { Logger(label: "captured") { _ in Handler(log: self) } }
    var all: [Line] { lines.withLock { $0 } }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let line = Line(message: event.message.description, metadata: metadata.merging(event.metadata ?? [:]) { $1 })
            log.lines.withLock { $0.append(line) }
        }
    }
}

struct FaultLogTests {
    @Test func R_S6_aServerFaultIsLoggedWithItsSQLiteCauseUnderItsRequestIDAndAnsweredWithout() throws {
        let log = CapturedLog()
        let server = try InProcessServer(logger: log.logger)
        let key = try #require(try server.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        #expect(try server.sendJSON("PUT", "/v1/tenants/acme/models/m", WallClockTests.model, token: key).status == 201)
        // The store's table goes behind the server's back: the next read fails inside SQLite.
        let file = server.dataDirectory.appendingPathComponent("data/tenants/acme/m.sqlite").path
        try SQLiteConnection(path: file).execute("DROP TABLE \"Note\"")

        let failed = try server.send("GET", "/v1/tenants/acme/models/m/entities/Note/objects", headers: [("X-Request-Id", "fault-7")], token: key)
        #expect(failed.status == 500)
        #expect(try failed.json()["detail"] == "An internal error occurred; it has been logged with request id fault-7.")
        #expect(!failed.text.contains("no such table") && !failed.text.contains("SQLite"), "\(failed.text)")

        let line = try #require(log.all.first { $0.message == "request failed" })
        #expect(line.metadata["request.id"] == "fault-7")
        #expect(line.metadata["problem.type"] == "urn:cartograph:problem:internal")
        let cause = try #require(line.metadata["cause"]?.description)
        #expect(cause.contains("no such table: Note"), "\(cause)")
    }
}
