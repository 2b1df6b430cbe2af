// R-S2's request time limit (`--request-time-limit`, 120 s by default, docs/configuration.md): work past it stops — in
// the engine, inside SQLite, inside a backtracking regular expression — the answer is a 503
// problem, nothing is stored, and the server goes on answering. The catastrophic pattern `(a+)+$`
// against thirty a's and a '!' backtracks until ICU's own backtracking limit ends it as "no match"
// (about 0.6 s here): five such values keep a request busy well past a 1 s limit.
import Foundation
import Testing
import CartographCore
import CartographTesting

@Suite struct RequestTimeLimitTests {
    static let model: JSONValue = ["entities": [
        ["name": "Item", "userInfo": ["identityAttributes": "id"],
         "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"],
                        ["name": "code", "type": "string", "regex": "(a+)+$"]]],
    ]]
    static let mapping: JSONValue = ["entity": "Item", "keyPath": "items", "attributes": ["id": "id", "name": "name", "code": "code"]]
    static let catastrophic = String(repeating: "a", count: 30) + "!"

    @Test func R_S2_aQueryPastTheTimeLimitIsStoppedWith503() throws {
        try ModelAPI.with(model: Self.model, mappings: ["items": Self.mapping], serverArguments: ["--request-time-limit", "1"]) { api in
            try api.map("items", ["items": .array((1...5).map { ["id": .number(JSONNumber($0)), "name": .string(Self.catastrophic)] }
                                                  + [["id": 6, "name": "plain"]])])
            let started = ContinuousClock.now
            let query = "name MATCHES '(a+)+$'".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let stopped = try api.client.send("GET", api.base + "/entities/Item/objects?where=" + query, token: api.key)
            let elapsed = ContinuousClock.now - started
            #expect(stopped.status == 503, "\(stopped.text)")
            #expect(try stopped.json()["type"] == "urn:cartograph:problem:time-limit-exceeded")
            #expect(try stopped.json()["detail"]?.stringValue?.contains("limit of 1 s") == true)
            #expect(elapsed < .seconds(20), "stopped near the 1 s limit, not when the regex gave up (\(elapsed))")
            // The interrupted read left no connection inside a transaction: reads go on answering, with data.
            for _ in 0..<4 {
                let items = try api.get("entities/Item/objects?orderBy=id")["items"]?.arrayValue?.map { $0["id"] }
                #expect(items == [1, 2, 3, 4, 5, 6] as [JSONValue?])
            }
            let plain = "name MATCHES 'pl.*'".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            #expect(try api.get("entities/Item/objects?where=" + plain)["items"]?.arrayValue?.map { $0["id"] } == [6])
        }
    }

    @Test func R_S2_aPayloadPastTheTimeLimitStoresNothing() throws {
        try ModelAPI.with(model: Self.model, mappings: ["items": Self.mapping], serverArguments: ["--request-time-limit", "1"]) { api in
            try api.map("items", ["items": [["id": 1, "code": "aaa"]]])
            let started = ContinuousClock.now
            // The model's regex constraint (R-P8) backtracks on every code but the first.
            let stopped = try api.post("items", ["items": .array([["id": 2, "code": "aa"]]
                + (3...7).map { ["id": .number(JSONNumber($0)), "code": .string(Self.catastrophic)] })])
            let elapsed = ContinuousClock.now - started
            #expect(stopped.status == 503, "\(stopped.text)")
            #expect(try stopped.json()["type"] == "urn:cartograph:problem:time-limit-exceeded")
            #expect(elapsed < .seconds(20), "\(elapsed)")
            #expect(try api.get("entities/Item/objects?count=true")["total"] == 1, "nothing of the stopped payload is stored")
            #expect(try api.changes().count == 1, "and nothing of it is in the change feed")
            // Within the limit the same constraint works as before.
            let invalid = try api.post("items", ["items": [["id": 4, "code": "ab"]]])
            #expect(invalid.status == 422)
            #expect(try invalid.json()["errors"]?.arrayValue?.first?["pointer"] == "/items/0/code")
            #expect(try api.map("items", ["items": [["id": 5, "code": "aaaa"]]])["inserted"] == 1)
        }
    }

    @Test func R_S2_theTimeLimitFlagIsValidated() throws {
        let (status, _, stderr) = try CommandTests().run(["serve", "--request-time-limit", "0", "--port", "0"])
        #expect(status != 0)
        #expect(stderr.contains("request-time-limit must be a whole number in 1...86400, not '0'"), "\(stderr)")
    }
}
