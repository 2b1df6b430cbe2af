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
    /// When the request's first byte arrived: its time limit counts from here (R-S2).
    public var arrival: ContinuousClock.Instant

    public init(method: String, path: String, query: [(name: String, value: String)] = [],
                headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], arrival: ContinuousClock.Instant = .now) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.arrival = arrival
    }

    /// The tenant segment of a `/v1/tenants/{tenant}/…` path as sent, "" for other paths: whose turn a
    /// request waits for among the request workers (see `TenantTurns`), before anything is authorized.
    var tenantSegment: Substring {
        let prefix = "/v1/tenants/"
        guard path.hasPrefix(prefix) else { return "" }
        let rest = path.dropFirst(prefix.count)
        return rest.prefix { $0 != "/" }
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
    /// Set on an answer whose body follows `body` piece by piece as the client reads it (R-Q7): the transport
    /// sends it with chunked transfer coding, never holding it whole.
    public var stream: ResponseStream?
    /// Set on an answer that waits for a store to change (a long poll): the transport parks the
    /// connection with `Application.park` instead of sending this response.
    public internal(set) var pending: PendingResponse?
    /// Set on a problem answer, for the request log and the problem metrics.
    var problem: ProblemSummary?

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

    /// A JSON document rendered already (objects written straight from their rows).
    public static func json(_ rendered: RenderedJSON, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: rendered.bytes + [0x0A])
    }

    /// 204 with no body.
    public static let noContent = HTTPResponse(status: 204)

    /// The first value of header `name` (ASCII case-insensitive, as header names are ASCII tokens).
    /// Compared byte by byte: lowercasing each name made a String per header, on every response.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.utf8.elementsEqual(name.utf8) { Self.asciiLowercased($0) == Self.asciiLowercased($1) } }?.value
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}

/// What the request log and `cartograph_problems_total` say about a problem answer.
struct ProblemSummary: Sendable {
    /// The problem's `type` URI.
    let type: String
    /// The problem's `detail`; nil when it quotes what the request sent (the log never holds that).
    let loggableDetail: String?
}

/// An answer that waits for a write to one model's store (`GET …/changes?wait=`, docs/change-feed.md):
/// `poll` is asked when the store is woken (`ChangeWaiters`), and a last time (`final`) at the deadline,
/// when it must answer. Requests with the same `pollKey` are answered from one call of `poll`.
public struct PendingResponse: Sendable {
    /// The store whose writes may answer it: `tenant/model`.
    let store: String
    /// Equal for requests that `poll` gives the same answer (one feed, from one `since`, with one `limit`).
    let pollKey: String
    let deadline: ContinuousClock.Instant
    /// The answer if there is one now; nil to go on waiting (never when `final`).
    let poll: @Sendable (_ final: Bool) -> HTTPResponse?
    /// What the request log needs when the answer is finally given (set by `Application`).
    var requestID = ""
    var started = ContinuousClock.now
    var labels = Application.Labels()
    /// What the request was let in as, asked again when it is answered: by then its key may have been
    /// revoked or its tenant deleted (set by `Application`).
    var access = Access.anyone

    static func waiting(for store: String, pollKey: String, until deadline: ContinuousClock.Instant,
                        poll: @escaping @Sendable (_ final: Bool) -> HTTPResponse?) -> HTTPResponse {
        var response = HTTPResponse(status: 200)
        response.pending = PendingResponse(store: store, pollKey: pollKey, deadline: deadline, poll: poll)
        return response
    }
}
