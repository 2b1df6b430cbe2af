// A minimal blocking HTTP/1.1 client over POSIX sockets, for tests that must send exactly the bytes
// they mean (encoded slashes, invalid UTF-8, lying Content-Length) — things URLSession normalizes.
import Foundation
import Glibc
public import CartographCore

/// A parsed HTTP response.
public struct RawResponse: Sendable {
    public let status: Int
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The body parsed as JSON (tests fail loudly if it is not).
    public func json() throws -> JSONValue { try JSONReader().parse(body) }

    public var text: String { String(decoding: body, as: UTF8.self) }
}

public struct RawHTTPError: Error, CustomStringConvertible {
    public let description: String
}

/// What a test needs to talk to a server, over a socket (`RawHTTPClient`) or in process (the HTTP tests'
/// `InProcessServer`): the same test code runs against either.
public protocol HTTPTestClient: Sendable {
    /// Sends a request built from parts.
    func send(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]?, token: String?) throws -> RawResponse
}

extension HTTPTestClient {
    public func send(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
                     token: String? = nil) throws -> RawResponse {
        try send(method, target, headers: headers, body: body, token: token)
    }

    /// Sends JSON with `Content-Type: application/json`.
    public func sendJSON(_ method: String, _ target: String, _ value: JSONValue, token: String? = nil) throws -> RawResponse {
        try send(method, target, headers: [("Content-Type", "application/json")], body: value.jsonBytes, token: token)
    }
}

/// Sends one request per connection (`Connection: close`) and reads the response to EOF.
public struct RawHTTPClient: HTTPTestClient {
    public let port: Int

    public init(port: Int) { self.port = port }

    /// Sends a request built from parts; `Content-Length` is added for a body unless given.
    /// `halfClose` shuts the socket's write side once the request is sent (most tests); the long-poll
    /// tests keep it open, as HTTP clients do, and check the half-closed case on its own.
    public func send(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
                     token: String? = nil, halfClose: Bool) throws -> RawResponse {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body, !headers.contains(where: { $0.0.lowercased() == "content-length" }) {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        return try sendRaw(Array(head.utf8) + (body ?? []), halfClose: halfClose)
    }

    public func send(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]?, token: String?) throws -> RawResponse {
        try send(method, target, headers: headers, body: body, token: token, halfClose: true)
    }

    /// Writes `bytes` as they are and parses whatever comes back. Write errors (the server may close
    /// early, e.g. after a 413) do not stop the read.
    public func sendRaw(_ bytes: [UInt8], timeoutSeconds: Int = 30, halfClose: Bool = true) throws -> RawResponse {
        let socket = try connect()
        defer { close(socket) }
        _ = writeAll(socket, bytes)
        if halfClose { shutdown(socket, Int32(SHUT_WR)) }
        return try readResponse(socket, timeoutSeconds: timeoutSeconds)
    }

    /// An open connection for tests that send a request in pieces.
    public func connect(timeoutSeconds: Int = 30) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError(description: "socket() failed") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Foundation.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw RawHTTPError(description: "connect to 127.0.0.1:\(port) failed (errno \(errno))")
        }
        return fd
    }

    /// Writes every byte unless the peer closes; returns false on a write error.
    @discardableResult
    public func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// Reads until EOF and parses status line, headers and body (Content-Length or to EOF).
    public func readResponse(_ fd: Int32, timeoutSeconds: Int = 30) throws -> RawResponse {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return try Self.parse(data)
    }

    static func parse(_ data: [UInt8]) throws -> RawResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let headerEnd = data.firstRange(of: separator) else {
            throw RawHTTPError(description: "no complete response (\(data.count) bytes received)")
        }
        let head = String(decoding: data[..<headerEnd.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw RawHTTPError(description: "bad status line")
        }
        let headers: [(name: String, value: String)] = lines.compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body = Array(data[headerEnd.upperBound...])
        if let length = headers.first(where: { $0.name.lowercased() == "content-length" }).flatMap({ Int($0.value) }),
           body.count > length {
            body = Array(body[..<length])
        }
        return RawResponse(status: status, headers: headers, body: body)
    }
}
