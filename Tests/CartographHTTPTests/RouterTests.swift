// The router and the application function without a socket: the table against openapi.yaml
// (the spec is the contract), path decoding, name rules and the auth matrix of docs/api.md#authentication.
import Foundation
import Testing
import CartographCore
import CartographStore
import Logging
@testable import CartographHTTP

struct RouterTests {
    /// `(method, path)` of every operation in openapi.yaml, split into served and planned.
    static func specOperations() throws -> (served: Set<String>, planned: Set<String>) {
        let specURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../openapi.yaml")
        let lines = try String(contentsOf: specURL, encoding: .utf8).components(separatedBy: "\n")
        var served = Set<String>(), planned = Set<String>()
        var path: String?, operation: String?
        var inPaths = false
        func flush() {
            if let operation { served.insert(operation) }
            operation = nil
        }
        for line in lines {
            if line == "paths:" { inPaths = true; continue }
            if inPaths, !line.hasPrefix(" "), !line.isEmpty { flush(); break }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                flush(); path = String(line.dropFirst(2).dropLast())
            } else if let method = ["get", "put", "post", "delete", "patch"].first(where: { line == "    \($0):" }), let path {
                flush(); operation = "\(method.uppercased()) \(path)"
            } else if line.trimmingCharacters(in: .whitespaces) == "x-cartograph-planned: true", let current = operation {
                planned.insert(current); operation = nil
            }
        }
        return (served, planned)
    }

    @Test func R_S7_routerTableMatchesTheServedOperationsOfTheSpec() throws {
        let spec = try Self.specOperations()
        let routes = Set(Application.servedRoutes.map { "\($0.method) \($0.template)" })
        #expect(routes == spec.served)
        #expect(spec.planned.isDisjoint(with: routes))
        #expect(spec.served.count + spec.planned.count >= 27, "every route of docs/api.md is in the spec")
    }

    /// The query parameters openapi.yaml documents for each operation (`"GET /path"`), path-level ones
    /// included, `$ref`s to components resolved. A line reader for this file's own layout.
    static func specQueryParameters() throws -> [String: Set<String>] {
        let specURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../openapi.yaml")
        let lines = try String(contentsOf: specURL, encoding: .utf8).components(separatedBy: "\n")
        func value(_ key: String, in text: Substring) -> String? {
            guard let range = text.range(of: "\(key): ") else { return nil }
            return String(text[range.upperBound...].prefix { $0 != "," && $0 != " " && $0 != "}" })
        }
        // components.parameters: reference name -> (name, in)
        var components: [String: (name: String, location: String)] = [:]
        var inComponentParameters = false, current: String?
        for line in lines {
            if line == "  parameters:" { inComponentParameters = true; continue }
            guard inComponentParameters else { continue }
            if !line.hasPrefix("    ") && !line.isEmpty { break }
            if line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") { current = String(line.dropFirst(4).dropLast()); continue }
            guard let current, let text = Optional(line.trimmingCharacters(in: .whitespaces)[...]) else { continue }
            if let name = value("name", in: text), text.hasPrefix("name:") { components[current, default: ("", "")].name = name }
            if let location = value("in", in: text), text.hasPrefix("in:") { components[current, default: ("", "")].location = location }
        }
        func queryName(_ item: Substring) -> String? {
            if let reference = item.range(of: "#/components/parameters/") {
                let name = String(item[reference.upperBound...].prefix { $0 != "'" && $0 != "\"" })
                return components[name].flatMap { $0.location == "query" ? $0.name : nil }
            }
            return value("in", in: item) == "query" ? value("name", in: item) : nil
        }
        var result: [String: Set<String>] = [:]
        var path: String?, operation: String?, pathLevel = Set<String>(), inPaths = false
        // A parameter written as a block (`- name: x` with `in: query` on a line below it).
        var blockName: String?
        func add(_ name: String) {
            if let operation { result[operation, default: []].insert(name) } else { pathLevel.insert(name) }
        }
        for line in lines {
            if line == "paths:" { inPaths = true; continue }
            if inPaths, !line.hasPrefix(" "), !line.isEmpty { break }
            guard inPaths else { continue }
            let text = line.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast()); operation = nil; pathLevel = []
            } else if let method = ["get", "put", "post", "delete", "patch"].first(where: { line == "    \($0):" }), let path {
                operation = "\(method.uppercased()) \(path)"
                result[operation!] = pathLevel
            } else if text.hasPrefix("- name: ") {
                blockName = String(text.dropFirst(8))
            } else if text == "in: query", let name = blockName {
                add(name); blockName = nil
            } else if text.hasPrefix("- ") {
                blockName = nil
                if let name = queryName(text.dropFirst(2)[...]) { add(name) }
            }
        }
        return result
    }

    /// Issue 16: a route takes exactly the query parameters openapi.yaml documents for it, so that every
    /// other one can be refused.
    @Test func theRoutesTakeTheQueryParametersTheSpecDocuments() throws {
        let spec = try Self.specQueryParameters()
        #expect(spec["GET /v1/tenants/{tenant}/models/{model}/entities/{entity}/objects"]?.contains("explain") == true, "the reader reads the spec")
        for route in Application.servedRoutes {
            #expect(route.query == spec["\(route.method) \(route.template)"] ?? [], "\(route.method) \(route.template)")
        }
    }

    /// The statuses (or `default`) each operation of openapi.yaml lists under `responses`, by "METHOD /path".
    static func specStatuses() throws -> [String: Set<String>] {
        let specURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../openapi.yaml")
        var statuses: [String: Set<String>] = [:]
        var path: String?, operation: String?, inResponses = false
        for line in try String(contentsOf: specURL, encoding: .utf8).components(separatedBy: "\n") {
            if line == "components:" { break }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast()); operation = nil
            } else if let method = ["get", "put", "post", "delete", "patch"].first(where: { line == "    \($0):" }), let path {
                operation = "\(method.uppercased()) \(path)"; inResponses = false
            } else if line == "      responses:" {
                inResponses = true
            } else if inResponses, let operation, line.hasPrefix("        "), !line.hasPrefix("         ") {
                let key = line.dropFirst(8).prefix { $0 != ":" }.filter { $0 != "'" }
                statuses[operation, default: []].insert(String(key))
            } else if !line.hasPrefix("        ") {
                inResponses = false
            }
        }
        return statuses
    }

    /// Issue 16 (every status an operation answers is documented, so generated clients can type it): each
    /// route's spec entry lists, without a catch-all `default`, the statuses its kind of route answers —
    /// 400 (an unknown query parameter) and 503 (shutting down, the time limit) everywhere; 401/403 behind
    /// a token; 404/429 under a tenant; 413/415/422 with a body; 507 (disk full) on a write to a model's
    /// store. The schemathesis run (`status_code_conformance`) checks the rest against the live server.
    @Test func everyOperationDocumentsTheStatusesItsRouteCanAnswer() throws {
        let spec = try Self.specStatuses()
        #expect(spec["POST /v1/tenants/{tenant}/models/{model}/mappings/{mapping}/payloads"]?.contains("422") == true, "the reader reads the spec")
        for route in Application.servedRoutes {
            let operation = "\(route.method) \(route.template)"
            var expected: Set<String> = ["400", "503"]
            if route.access != .anyone { expected.insert("401") }
            // Any valid token may call an `anyToken` route (it answers about its caller): no 403.
            if route.access != .anyone, route.access != .anyToken { expected.insert("403") }
            if route.template.contains("{tenant}") { expected.formUnion(["404", "429"]) }
            if route.body != .none { expected.formUnion(["413", "415", "422"]) }
            let writesStore = route.template.contains("{model}") && route.method != "GET" && route.access != .tenant(.read)
            if writesStore { expected.insert("507") }
            let documented = spec[operation] ?? []
            #expect(!documented.contains("default"), "\(operation) lists a catch-all default")
            #expect(expected.subtracting(documented).isEmpty, "\(operation) does not document \(expected.subtracting(documented).sorted())")
        }
    }

    let router = Router(routes: Application.servedRoutes)

    @Test func matchesTemplatesAndDecodesSegments() throws {
        guard case .matched(let route, let parameters) = try router.match(method: "DELETE", path: "/v1/tenants/acme/keys/k1") else {
            Issue.record("no match"); return
        }
        #expect(route.template == "/v1/tenants/{tenant}/keys/{keyId}")
        #expect(parameters == ["tenant": "acme", "keyId": "k1"])
    }

    @Test func aPathKeepsItsEmptySegments() throws {
        guard case .methodNotAllowed(_, let template) = try router.match(method: "PUT", path: "/v1/tenants/acme/models/news/entities/Article/objects/x") else {
            Issue.record("expected 405"); return
        }
        #expect(template == "/v1/tenants/{tenant}/models/{model}/entities/{entity}/objects/{key}")
        // An empty key is a segment of its own; a doubled '/' makes one more segment, which no template has.
        guard case .matched(_, let parameters) = try router.match(method: "GET", path: "/v1/tenants/acme/models/news/entities/Article/objects/") else {
            Issue.record("expected a match"); return
        }
        #expect(parameters["key"] == "")
        guard case .notFound = try router.match(method: "GET", path: "/v1//tenants") else { Issue.record("expected 404"); return }
    }

    @Test func unknownPathAndWrongMethod() throws {
        guard case .notFound = try router.match(method: "GET", path: "/v1/tenants/acme/unknown") else { Issue.record("expected 404"); return }
        guard case .methodNotAllowed(let allowed, let template) = try router.match(method: "PUT", path: "/v1/tenants/acme/keys") else {
            Issue.record("expected 405"); return
        }
        #expect(allowed == ["POST", "GET"])
        #expect(template == "/v1/tenants/{tenant}/keys")
    }

    /// An identity value may hold '/' or NUL: encoded, they are accepted in `{key}` (kept raw, decoded
    /// by the store after a compound key is split) and nowhere else.
    @Test func R_S1_anEncodedSlashOrNulIsAcceptedInAnObjectKeyOnly() throws {
        guard case .matched(let route, let parameters) = try router.match(
            method: "GET", path: "/v1/tenants/acme/models/news/entities/Article/objects/a%2Fb%00c,d%2F") else {
            Issue.record("expected a match"); return
        }
        #expect(route.template.hasSuffix("/objects/{key}"))
        #expect(parameters["key"] == "a%2Fb%00c,d%2F")
        #expect(parameters["entity"] == "Article")
        for path in ["/v1/tenants/acme/models/ne%2Fws/entities/Article/objects/a", "/v1/tenants/acme/models/news/entities/Art%00icle/objects/a",
                     "/v1/tenants/acme/models/news/entities/Article/objects%2Fa", "/v1/unknown%2F/x"] {
            #expect(throws: CartographError.self, "\(path)") { _ = try router.match(method: "GET", path: path) }
        }
    }

    @Test(arguments: ["/v1/tenants/a%2Fb", "/v1/tenants/a%00", "/v1/tenants/%zz", "/v1/tenants/Upper", "/v1/tenants/.."])
    func R_S1_rejectsEncodedSlashNulAndBadNames(path: String) {
        #expect {
            _ = try router.match(method: "GET", path: path)
        } throws: { error in
            (error as? CartographError)?.code == .badRequest
        }
    }
}

struct ApplicationTests {
    let application: Application
    let adminToken = "admin-secret"

    init() throws {
        let directory = DataDirectory(path: FileManager.default.temporaryDirectory.appendingPathComponent("cartograph-app-\(UUID().uuidString)").path)
        let control = try ControlStore(directory: directory)
        application = Application(configuration: ServerConfiguration(), control: control, stores: StoreRegistry(directory: directory),
                                  adminToken: adminToken,
                                  logger: .init(label: "test"))
        application.setServiceState(.ready)
    }

    func request(_ method: String, _ target: String, token: String? = nil, json: JSONValue? = nil) -> HTTPResponse {
        var headers = HTTPHeaders()
        if let token { headers.add("Authorization", "Bearer \(token)") }
        if json != nil { headers.add("Content-Type", "application/json") }
        return application.respond(to: HTTPRequest(method: method, target: target, headers: headers, body: json?.jsonBytes ?? []))
    }

    func body(_ response: HTTPResponse) throws -> JSONValue { try JSONReader().parse(response.body) }

    @Test func problemDocumentsHaveEveryField() throws {
        let response = request("GET", "/v1/tenants/ghost", token: adminToken)
        #expect(response.status == 404)
        #expect(response.header("Content-Type") == "application/problem+json")
        let problem = try body(response)
        #expect(problem["type"] == "urn:cartograph:problem:not-found")
        #expect(problem["title"] == "Not Found")
        #expect(problem["status"] == 404)
        #expect(problem["detail"]?.stringValue?.contains("ghost") == true)
        #expect(response.header("X-Request-Id") != nil)
    }

    @Test func authMatrix() throws {
        let created = try body(request("POST", "/v1/tenants", token: adminToken, json: ["id": "acme"]))
        let acmeAdmin = try #require(created["apiKey"]?.stringValue)
        _ = request("POST", "/v1/tenants", token: adminToken, json: ["id": "globex"])
        let write = try #require(try body(request("POST", "/v1/tenants/acme/keys", token: acmeAdmin, json: ["scope": "write"]))["apiKey"]?.stringValue)

        // admin token: everything
        #expect(request("GET", "/v1/tenants", token: adminToken).status == 200)
        #expect(request("GET", "/v1/tenants/globex/keys", token: adminToken).status == 200)
        // tenant admin key: its own tenant only, never the admin routes
        #expect(request("GET", "/v1/tenants/acme/keys", token: acmeAdmin).status == 200)
        #expect(request("GET", "/v1/tenants/globex/keys", token: acmeAdmin).status == 403)
        #expect(request("GET", "/v1/tenants", token: acmeAdmin).status == 403)
        #expect(request("GET", "/v1/tenants/acme", token: acmeAdmin).status == 403)
        // write key: below admin
        #expect(request("GET", "/v1/tenants/acme/keys", token: write).status == 403)
        // nothing: 401
        #expect(request("GET", "/v1/tenants/acme/keys").status == 401)
        // a key for a tenant that does not exist cannot be made even by the admin
        #expect(request("POST", "/v1/tenants/ghost/keys", token: adminToken, json: ["scope": "read"]).status == 404)
        #expect(try body(request("GET", "/v1/tenants/acme/keys", token: acmeAdmin))["items"]?.arrayValue?.count == 2)
    }

    /// A key alone tells its tenant and scope (`GET /v1/key`), so a client needs nothing else to know
    /// which routes it may call; a tenant's first key says its scope when it is made.
    @Test func R_S1_aKeySaysWhichTenantItBelongsToAndItsScope() throws {
        let created = try body(request("POST", "/v1/tenants", token: adminToken, json: ["id": "acme"]))
        #expect(created["scope"] == "admin")
        let acmeAdmin = try #require(created["apiKey"]?.stringValue)
        let read = try body(request("POST", "/v1/tenants/acme/keys", token: acmeAdmin, json: ["scope": "read"]))
        let readKey = try #require(read["apiKey"]?.stringValue)

        let identity = try body(request("GET", "/v1/key", token: readKey))
        #expect(identity["tenant"] == "acme" && identity["scope"] == "read" && identity["id"] == read["id"] && identity["admin"] == false)
        #expect(try body(request("GET", "/v1/key", token: acmeAdmin))["scope"] == "admin")
        #expect(try body(request("GET", "/v1/key", token: adminToken)) == ["admin": true])
        #expect(request("GET", "/v1/key").status == 401)
        #expect(request("DELETE", "/v1/tenants/acme/keys/\(read["id"]?.stringValue ?? "")", token: acmeAdmin).status == 204)
        #expect(request("GET", "/v1/key", token: readKey).status == 401, "a revoked key is nobody")
    }

    @Test func R_S5_drainingAnswers503AndReadinessFollowsState() throws {
        application.setServiceState(.starting)
        #expect(request("GET", "/readyz").status == 503)
        application.setServiceState(.ready)
        #expect(try body(request("GET", "/readyz"))["status"] == "ready")
        #expect(application.admissionError() == nil)
        application.setServiceState(.draining)
        let error = try #require(application.admissionError())
        let refused = application.reject(HTTPRequest(method: "GET", target: "/v1/tenants"), with: error)
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "1")
        #expect(try body(refused)["detail"]?.stringValue?.contains("shutting down") == true)
    }

    @Test func theBearerTokenIsReadWhateverTheSchemesCaseAndTheBlanksAroundIt() {
        #expect(Application.bearerToken("Bearer cga_1") == "cga_1")
        #expect(Application.bearerToken("bEaReR \t cga_1 \t") == "cga_1")
        #expect(Application.bearerToken(" BEARER cga_1") == "cga_1")
        #expect(Application.bearerToken("Bearer a b") == "a b")
        for refused in ["Bearer", "Bearer ", "Bearer \t ", "Bearercga_1", "Basic cga_1", "Bearex cga_1", "Bearer\tcga_1", ""] {
            #expect(Application.bearerToken(refused) == nil, "\(refused)")
        }
    }

    @Test func queryStringIsDecoded() {
        let request = HTTPRequest(method: "GET", target: "/x?where=name%20%3D%3D%20%27a%2Bb%27&flag&plus=a+b")
        #expect(request.queryValue("where") == "name == 'a+b'")
        #expect(request.queryValue("flag") == "")
        #expect(request.queryValue("plus") == "a b")
    }
}
