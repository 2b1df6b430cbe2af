// The integration tests' way into one model of one tenant on a live server.
import Foundation
import Testing
import CartographCore
import CartographTesting

/// A tenant `acme` with one model on a server (in process unless `live`), and helpers that speak its routes.
struct ModelAPI {
    let client: any HTTPTestClient
    let key: String
    let base: String

    /// Starts a server (with extra `serve` flags), registers `model` as `name` and each mapping, then runs `body`.
    /// `live` runs the real binary on a socket; otherwise the application answers in process, with `clock` as its clock.
    static func with(model: JSONValue, name: String = "m", mappings: [String: JSONValue] = [:], serverArguments: [String] = [],
                     live: Bool = false, clock: WallClock = .system, _ body: (ModelAPI) throws -> Void) throws {
        guard live else {
            let server = try InProcessServer(arguments: serverArguments, clock: clock)
            return try with(client: server, adminToken: server.adminToken, model: model, name: name, mappings: mappings, body)
        }
        try withLiveServer(arguments: serverArguments) { (server) throws in
            try with(client: server.client, adminToken: server.adminToken, model: model, name: name, mappings: mappings, body)
        }
    }

    private static func with(client: any HTTPTestClient, adminToken: String, model: JSONValue, name: String, mappings: [String: JSONValue],
                             _ body: (ModelAPI) throws -> Void) throws {
        let key = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: adminToken).json()["apiKey"]?.stringValue)
        let api = ModelAPI(client: client, key: key, base: "/v1/tenants/acme/models/\(name)")
        let registered = try client.sendJSON("PUT", api.base, model, token: key)
        try #require(registered.status == 201, "\(registered.text)")
        for (mapping, document) in mappings.sorted(by: { $0.key < $1.key }) {
            let response = try client.sendJSON("PUT", api.base + "/mappings/" + mapping, document, token: key)
            try #require(response.status == 201, "\(mapping): \(response.text)")
        }
        try body(api)
    }

    /// POSTs `payload` to `mapping`'s payload route (or any path under the model starting with `/`).
    func post(_ mapping: String, _ payload: JSONValue, query: String = "", headers: [(String, String)] = []) throws -> RawResponse {
        let path = mapping.hasPrefix("/") ? base + mapping : base + "/mappings/\(mapping)/payloads"
        return try client.send("POST", path + query, headers: [("Content-Type", "application/json")] + headers, body: payload.jsonBytes, token: key)
    }

    /// POSTs and requires a 200, returning the result.
    @discardableResult
    func map(_ mapping: String, _ payload: JSONValue, query: String = "") throws -> JSONValue {
        let response = try post(mapping, payload, query: query)
        try #require(response.status == 200, "\(response.text)")
        return try response.json()
    }

    func get(_ path: String) throws -> JSONValue { try client.send("GET", base + "/" + path, token: key).json() }

    func object(_ entity: String, _ key: String) throws -> JSONValue { try get("entities/\(entity)/objects/\(key)") }

    /// Every change-feed entry from the start.
    func changes() throws -> [JSONValue] { try get("changes?since=0&limit=1000")["changes"]?.arrayValue ?? [] }
}
