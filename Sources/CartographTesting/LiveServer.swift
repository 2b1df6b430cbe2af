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

    /// Runs the binary with `arguments` (an offline command such as `validate` or `check-store`) and
    /// waits for it: its exit status, stdout and stderr. `environment`, when given, replaces the child's.
    public static func runCommand(_ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile(), stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    /// `CARTOGRAPH_TEST_LOG_DIR`: when set, every server logs into this directory (rather than its data
    /// directory, which tests delete) and appends its admin token to `admin-tokens` there, so that a
    /// whole test run's logs can be checked for secrets (`make test-swift`, scripts/check-logs-for-secrets.sh).
    public static let logDirectory: URL? = ProcessInfo.processInfo.environment["CARTOGRAPH_TEST_LOG_DIR"]
        .flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0, isDirectory: true) }

    /// Starts a server and waits until it logs the port it listens on.
    /// - Parameters:
    ///   - arguments: extra `serve` flags (e.g. `["--max-body-bytes", "1024"]`).
    ///   - dataDirectory: reuse a directory (restarts); a new temporary one otherwise.
    public init(arguments: [String] = [], dataDirectory: URL? = nil, adminToken: String? = "test-admin-token") throws {
        let directory = dataDirectory ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("cartograph-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.dataDirectory = directory
        let logDirectory = Self.logDirectory ?? directory
        try FileManager.default.createDirectory(at: logDirectory, withIntermediateDirectories: true)
        let log = logDirectory.appendingPathComponent("server-\(UUID().uuidString).log")
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
        Self.recordAdminToken(self.adminToken)
    }

    /// Appends `token` to `admin-tokens` in the log directory (mode 0600), one `write` of a whole line
    /// to a file opened with O_APPEND, so that servers starting in parallel never interleave lines.
    private static func recordAdminToken(_ token: String) {
        guard let directory = logDirectory, !token.isEmpty else { return }
        let fd = open(directory.appendingPathComponent("admin-tokens").path, O_WRONLY | O_APPEND | O_CREAT, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let line = Array((token + "\n").utf8)
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
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
