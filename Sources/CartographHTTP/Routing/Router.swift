// The routing table: method + path template -> handler, with validated path parameters.
public import CartographCore
public import CartographStore

/// Who may call a route.
public enum Access: Sendable, Equatable {
    /// No token needed (health, metrics, the spec).
    case anyone
    /// Only the admin token.
    case admin
    /// A key of the tenant named in the path with at least this scope, or the admin token.
    case tenant(KeyScope)
    /// Any valid token, a key of any tenant or the admin token: the route answers about its caller.
    case anyToken
}

/// Whether a route reads a JSON body.
public enum RequestBody: Sendable, Equatable {
    case none
    case json
    /// A payload: JSON, or newline-delimited JSON (`application/x-ndjson`, one representation a line).
    case payload
    /// A JSON model document or a Core Data model (`application/xml`).
    case modelDocument
}

/// Who is calling, once authenticated.
public enum Principal: Sendable, Equatable {
    case anonymous
    case admin
    case key(APIKeyInfo)
}

/// What a handler is told about its request: the request, what routing and authentication found in
/// it, and its id. The services a handler uses are its route group's, given when the table is built.
public struct RequestContext: Sendable {
    public let request: HTTPRequest
    public let parameters: PathParameters
    public let principal: Principal
    public let requestID: String
    /// The route that matched: the query parameters it takes, for `refuseQueryParameters(except:)`.
    let route: Route

    /// A path parameter the router has already validated.
    public func parameter(_ name: String) -> String { parameters[name] ?? "" }

    /// The body parsed as JSON by `reader` (the router has checked the content type).
    public func jsonBody(_ reader: JSONReader) throws(CartographError) -> JSONValue {
        let body = try nonEmptyBody()
        do { return try reader.parse(body) } catch { throw CartographError(error) }
    }

    /// R-P1: on a route that `takesMappingQuery`, refuses the query parameters the route does not take
    /// and its mapping does not read (`mappingReads`, asked only when there are such parameters), as the
    /// router refuses them on any other route.
    public func refuseQueryParameters(except mappingReads: () throws(CartographError) -> Set<String>) throws(CartographError) {
        let unknown = route.unknownQueryParameters(in: request)
        guard !unknown.isEmpty else { return }
        let read = try mappingReads()
        let refused = unknown.filter { !read.contains($0) }
        guard refused.isEmpty else { throw route.refusal(ofQueryParameters: refused, method: request.method) }
    }

    /// The body bytes, refused with 400 when there are none.
    public func nonEmptyBody() throws(CartographError) -> [UInt8] {
        guard !request.body.isEmpty else {
            throw CartographError(.badRequest, "The request body is empty: send a JSON document.")
        }
        return request.body
    }
}

/// A route: a method, a path template with `{parameter}` segments, its access rule and its handler.
/// A class: every request is tried against most of the table, and copying a struct of these members
/// cost a retain and a release of each per route tried.
public final class Route: Sendable {
    public typealias Handler = @Sendable (RequestContext) throws -> HTTPResponse

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    public let method: String
    public let template: String
    public let access: Access
    public let body: RequestBody
    /// The query parameters the route takes (openapi.yaml documents the same): any other is a 400, so a
    /// misspelled or misplaced `dryRun` never goes unnoticed on a write.
    public let query: Set<String>
    /// Whether the route also takes the query parameters its payload's mapping reads
    /// (`@metadata.query.<name>`, R-P1): the router leaves the others to the handler, which knows the
    /// mapping and calls `RequestContext.refuseQueryParameters(except:)` before anything is written.
    public let takesMappingQuery: Bool
    let segments: [Segment]
    /// The index of the `{key}` segment, if the template has one.
    let keyIndex: Int?
    let handler: Handler

    public init(_ method: String, _ template: String, access: Access, body: RequestBody = .none, query: Set<String> = [],
                takesMappingQuery: Bool = false, handler: @escaping Handler) {
        self.method = method
        self.template = template
        self.access = access
        self.body = body
        self.query = query
        self.takesMappingQuery = takesMappingQuery
        self.handler = handler
        let segments: [Segment] = template.split(separator: "/").map { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? .parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
        }
        self.segments = segments
        self.keyIndex = segments.firstIndex(of: .parameter("key"))
    }

    /// The query parameters of `request` the route does not take, each once, sorted.
    func unknownQueryParameters(in request: HTTPRequest) -> [String] {
        // Every request asks: one that names only what the route takes builds no set.
        guard request.query.contains(where: { !query.contains($0.name) }) else { return [] }
        return Array(Set(request.query.map(\.name).filter { !query.contains($0) })).sorted()
    }

    /// The 400 for query parameters the route does not take, one JSON Pointer each.
    func refusal(ofQueryParameters unknown: [String], method: String) -> CartographError {
        var takes = query.isEmpty ? "no query parameters" : "only " + query.sorted().joined(separator: ", ")
        if takesMappingQuery { takes += (query.isEmpty ? ", and" : " and") + " those its mapping reads (@metadata.query.<name>)" }
        return CartographError(.badRequest, "Unknown query parameter\(unknown.count == 1 ? "" : "s") \(unknown.map { "'\($0)'" }.joined(separator: ", ")): "
            + "\(method) \(template) takes \(takes).", errors: unknown.map { .init(pointer: JSONPointer.root.appending($0).description, message: "unknown query parameter") })
    }
}

/// A matched route's path parameters by name. A template has at most five, so they are kept in its
/// order and found by comparing names: a dictionary hashed each name on every request (building and
/// reading it was about 2% of a get's CPU).
public struct PathParameters: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    private var pairs: [(name: String, value: String)] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { self[name] = value }
    }

    public subscript(name: String) -> String? {
        get { pairs.first { $0.name == name }?.value }
        set {
            let index = pairs.firstIndex { $0.name == name }
            switch (index, newValue) {
            case (let index?, let value?): pairs[index].value = value
            case (let index?, nil): pairs.remove(at: index)
            case (nil, let value?): pairs.append((name, value))
            case (nil, nil): break
            }
        }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { pairs.makeIterator() }

    /// The same names with the same values, in any order.
    public static func == (a: PathParameters, b: PathParameters) -> Bool {
        a.pairs.count == b.pairs.count && a.pairs.allSatisfy { b[$0.name] == $0.value }
    }
}

/// The result of matching a request against the table.
public enum RouteMatch: Sendable {
    case matched(Route, parameters: PathParameters)
    /// The path is a route's (`template`, the first of them), but not with this method.
    case methodNotAllowed(allowed: [String], template: String)
    case notFound
}

/// A fixed table of routes.
public struct Router: Sendable {
    public let routes: [Route]
    /// The routes by their number of segments (the index), in table order: only those can take a path.
    private let routesBySegmentCount: [[Route]]

    public init(routes: [Route]) {
        self.routes = routes
        let byCount = Dictionary(grouping: routes, by: \.segments.count)
        self.routesBySegmentCount = (0...(byCount.keys.max() ?? 0)).map { byCount[$0] ?? [] }
    }

    /// Matches a raw (percent-encoded) path. Throws 400 for an undecodable segment, an encoded
    /// '/' or NUL anywhere but in `{key}` (an identity value may hold either), or a parameter that
    /// breaks its naming rule (docs/api.md#names).
    public func match(method: String, path: String) throws(CartographError) -> RouteMatch {
        guard path.hasPrefix("/") else { return .notFound }
        // "/" has no segment (as the template "/"); any other path keeps its empty ones ("/v1/" has two).
        // Split on the bytes, '/' being ASCII: the generic split by Character was 2% of a get's CPU, and
        // splitting the UTF-8 view into an array of slices first still 1%.
        let raw = path == "/" ? [] : Self.split(path)
        var segments: [String] = []
        segments.reserveCapacity(raw.count)
        // The segments holding an escape, with whether it hides a '/' or NUL (most paths have none).
        var escaped: [(index: Int, hidesSeparator: Bool)] = []
        for (index, segment) in raw.enumerated() {
            // Only a segment with a '%' can hide an encoded '/' or NUL: the others skip the substring
            // search (a generic `contains` that cost a tenth of a request's CPU) and the decoding.
            guard segment.utf8.contains(UInt8(ascii: "%")) else { segments.append(segment); continue }
            let lowered = segment.lowercased()
            escaped.append((index, lowered.contains("%2f") || lowered.contains("%00")))
            guard let decoded = PercentDecoding.decode(segment) else {
                throw CartographError(.badRequest, "A path segment has a malformed percent-encoding.")
            }
            segments.append(decoded)
        }
        func refuseHiddenSeparators(except keyIndex: Int?) throws(CartographError) {
            if escaped.contains(where: { $0.hidesSeparator && $0.index != keyIndex }) {
                throw CartographError(.badRequest, "A path segment other than an object key contains an encoded '/' or NUL.")
            }
        }
        var allowed: [String] = []
        var template: String?
        for route in segments.count < routesBySegmentCount.count ? routesBySegmentCount[segments.count] : [] {
            guard var parameters = route.bind(segments) else { continue }
            // `{key}` stays percent-encoded: a compound key's parts are split on ',' before decoding.
            try refuseHiddenSeparators(except: route.keyIndex)
            if let keyIndex = route.keyIndex { parameters["key"] = raw[keyIndex] }
            guard route.method == method else {
                allowed.append(route.method)
                template = template ?? route.template
                continue
            }
            try Self.validate(parameters)
            return .matched(route, parameters: parameters)
        }
        try refuseHiddenSeparators(except: nil)
        guard let template else { return .notFound }
        return .methodNotAllowed(allowed: allowed, template: template)
    }

    /// A path's segments after its leading '/', empty ones kept, each made a String straight from the bytes.
    private static func split(_ path: String) -> [String] {
        var path = path
        path.makeContiguousUTF8()
        return path.utf8.withContiguousStorageIfAvailable { bytes in
            var segments: [String] = []
            segments.reserveCapacity(12)
            var start = 1
            for index in 1...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "/") {
                segments.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
                start = index + 1
            }
            return segments
        } ?? []
    }

    /// Checks each path parameter against the naming rule for its kind.
    static func validate(_ parameters: PathParameters) throws(CartographError) {
        for (name, value) in parameters {
            switch name {
            case "tenant", "model", "mapping", "keyId", "webhook":
                guard Names.isResourceName(value) else {
                    throw CartographError(.badRequest, "Invalid \(name) name: names match ^[a-z0-9][a-z0-9_-]{0,62}$.",
                                          errors: [.init(pointer: "", message: "invalid \(name) name")])
                }
            case "entity":
                guard Names.isPropertyName(value) else {
                    throw CartographError(.badRequest, "Invalid entity name: names match ^[A-Za-z][A-Za-z0-9_]{0,127}$.",
                                          errors: [.init(pointer: "", message: "invalid entity name")])
                }
            case "archiveId":
                guard let id = Int64(value), id > 0, value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                    throw CartographError(.badRequest, "Invalid archived payload id: ids are positive integers (GET …/archive lists them).",
                                          errors: [.init(pointer: "", message: "invalid archived payload id")])
                }
            case "asset":
                guard ConsoleRoutes.isFileName(value) else {
                    throw CartographError(.badRequest, "Invalid console file name: names match ^[a-z0-9][a-z0-9_-]{0,62}\\.[a-z]{1,8}$.",
                                          errors: [.init(pointer: "", message: "invalid asset name")])
                }
            default:
                continue
            }
        }
    }
}

extension Route {
    /// The parameters if `segments` fit this route's template.
    func bind(_ pathSegments: [String]) -> PathParameters? {
        guard pathSegments.count == segments.count else { return nil }
        // Literals first, so a route the path does not take builds no dictionary (a request is tried
        // against most of the table).
        for (segment, value) in zip(segments, pathSegments) {
            if case .literal(let literal) = segment, literal != value { return nil }
        }
        var parameters = PathParameters()
        for (segment, value) in zip(segments, pathSegments) {
            if case .parameter(let name) = segment { parameters[name] = value }
        }
        return parameters
    }
}
