// Runs the real `cartograph serve` on an ephemeral port with a temporary data directory.
public import Foundation

/// A `cartograph serve` child process. Stop it with `stop()` (SIGTERM, then wait).
public final class LiveServer: @unchecked Sendable {
    // @unchecked: `process` is only touched by the test that owns this server, never concurrently.
    public let port: Int
    public let adminToken: String
    public let dataDirectory: URL
    public let logFile: URL
    let process: Process

    /// The `cartograph` binary: `$CARTOGRAPH_BINARY`, else the one built next to the test bundle.
    public static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["CARTOGRAPH_BINARY"] { return URL(fileURLWithPath: path) }
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return testBinary.deletingLastPathComponent().appendingPathComponent("cartograph")
    }

    /// Starts a server and waits until it logs the port it listens on.
    /// - Parameters:
    ///   - arguments: extra `serve` flags (e.g. `["--max-body-bytes", "1024"]`).
    ///   - dataDirectory: reuse a directory (restarts); a new temporary one otherwise.
    public init(arguments: [String] = [], dataDirectory: URL? = nil, adminToken: String? = "test-admin-token") throws {
        let directory = dataDirectory ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("cartograph-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.dataDirectory = directory
        let log = directory.appendingPathComponent("server-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        self.logFile = log
        let process = Process()
        process.executableURL = Self.binary
        var serveArguments = ["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", directory.appendingPathComponent("data").path]
        if let adminToken { serveArguments += ["--admin-token", adminToken] }
        process.arguments = serveArguments + arguments
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CARTOGRAPH_") }
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(60)
        var found: Int?
        while found == nil {
            if let text = try? String(contentsOf: log, encoding: .utf8), let port = Self.listeningPort(in: text) { found = port; break }
            guard process.isRunning, Date() < deadline else {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                process.terminate()
                throw LiveServerError(description: "server did not start: \(text)")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        self.port = found!
        if let adminToken {
            self.adminToken = adminToken
        } else {
            let tokenFile = directory.appendingPathComponent("data/admin.token")
            self.adminToken = ((try? String(contentsOf: tokenFile, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// A client for this server.
    public var client: RawHTTPClient { RawHTTPClient(port: port) }

    /// The server's log so far.
    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Waits until the log contains `text` (request lines are written in batches); false after `timeout`.
    public func logContains(_ text: String, timeout: TimeInterval = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if log.contains(text) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return log.contains(text)
    }

    public var isRunning: Bool { process.isRunning }
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Sends SIGTERM and waits for exit; returns the exit status.
    @discardableResult
    public func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Waits for the process to end on its own (after a signal sent elsewhere).
    public func waitForExit() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The port of the "listening" line, in the text (`port=8080 … listening`) or JSON
    /// (`"msg":"listening",…,"port":"8080"`) log format.
    static func listeningPort(in log: String) -> Int? {
        for line in log.split(separator: "\n")
        where line.hasSuffix("listening") || line.contains("] listening") || line.contains(#""msg":"listening""#) {
            if let range = line.range(of: " port=") ?? line.range(of: #""port":""#) {
                let digits = line[range.upperBound...].prefix { $0.isNumber }
                return Int(digits)
            }
        }
        return nil
    }
}

public struct LiveServerError: Error, CustomStringConvertible {
    public let description: String
}

/// Runs `body` with a fresh server and always stops it afterwards.
public func withLiveServer<T>(arguments: [String] = [], _ body: (LiveServer) throws -> T) throws -> T {
    let server = try LiveServer(arguments: arguments)
    defer { server.stop(); try? FileManager.default.removeItem(at: server.dataDirectory) }
    return try body(server)
}
