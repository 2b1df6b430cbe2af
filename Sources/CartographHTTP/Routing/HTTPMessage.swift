// Plain values for one HTTP exchange. The router works on these, so most route tests need no socket.
public import CartographCore

/// Header fields with case-insensitive lookup; names are stored lowercased.
public struct HTTPHeaders: Sendable, Sequence {
    public private(set) var fields: [(name: String, value: String)] = []

    public init(_ fields: [(String, String)] = []) {
        for (name, value) in fields { add(name, value) }
    }

    public mutating func add(_ name: String, _ value: String) { fields.append((name.lowercased(), value)) }

    /// The first value of `name`.
    public subscript(name: String) -> String? {
        let lowered = name.lowercased()
        return fields.first { $0.name == lowered }?.value
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}

/// A request as the router sees it: the raw path, decoded query parameters, headers and the whole body.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path exactly as sent, still percent-encoded (so an encoded '/' can be told from a real one).
    public var path: String
    /// Query parameters, percent-decoded, in order.
    public var query: [(name: String, value: String)]
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(method: String, path: String, query: [(name: String, value: String)] = [],
                headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// Builds a request from a request target such as `/v1/tenants?x=1` (query decoded here).
    public init(method: String, target: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [(name: String, value: String)] = []
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") where !pair.isEmpty {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = PercentDecoding.decodeQueryComponent(String(kv[0])) ?? String(kv[0])
                let value = kv.count == 2 ? (PercentDecoding.decodeQueryComponent(String(kv[1])) ?? String(kv[1])) : ""
                query.append((name, value))
            }
        }
        self.init(method: method, path: String(parts[0]), query: query, headers: headers, body: body)
    }

    /// The last value of query parameter `name`.
    public func queryValue(_ name: String) -> String? { query.last { $0.name == name }?.value }
}

/// A response: status, extra headers, body bytes.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON document with `Content-Type: application/json`, newline-terminated so that curl output
    /// ends its line.
    public static func json(_ value: JSONValue, status: Int = 200, contentType: String = "application/json") -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", contentType)], body: value.jsonBytes + [0x0A])
    }

    /// 204 with no body.
    public static let noContent = HTTPResponse(status: 204)

    /// The first value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }
}

/// Percent-decoding for path segments and query components.
public enum PercentDecoding {
    /// Decodes `%XX` escapes; nil when an escape is malformed or the result is not UTF-8.
    public static func decode(_ text: String) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Decodes a query component: `+` is a space (application/x-www-form-urlencoded), then `%XX`.
    public static func decodeQueryComponent(_ text: String) -> String? {
        decode(text.contains("+") ? String(text.map { $0 == "+" ? " " : $0 }) : text)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
