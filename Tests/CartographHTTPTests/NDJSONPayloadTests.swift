// R-P19: a payload posted as newline-delimited JSON (`application/x-ndjson`) maps its lines as the
// representations at the mapping's key path, in one transaction, and says what is wrong by line.
import Foundation
import Testing
import CartographCore
import CartographTesting

struct NDJSONPayloadTests {
    static let model: JSONValue = ["entities": [
        ["name": "Item", "userInfo": ["identityAttributes": "code"],
         "attributes": [["name": "code", "type": "string", "userInfo": ["JSONKeyPath": "code"]],
                        ["name": "rank", "type": "integer64", "optional": true, "userInfo": ["JSONKeyPath": "rank"]]]],
    ]]
    static let mapping: JSONValue = ["entity": "Item", "keyPath": "data.items", "attributes": ["code", "rank"]]

    func post(_ api: ModelAPI, _ path: String, _ text: String) throws -> (status: Int, json: JSONValue) {
        let response = try api.client.send("POST", api.base + path, headers: [("Content-Type", "application/x-ndjson")], body: Array(text.utf8),
                                           token: api.key)
        return (response.status, try response.json())
    }

    @Test func R_P19_eachLineIsARepresentationAtTheMappingsKeyPathMappedAsOnePayload() throws {
        try ModelAPI.with(model: Self.model, mappings: ["items": Self.mapping]) { api in
            // Blank lines and \r\n endings are skipped; a later line of one identity wins (R-I5), as in a JSON array.
            let lines = "{\"code\": \"a\", \"rank\": 1}\r\n\n  {\"code\": \"b\", \"rank\": 2}\n{\"code\": \"a\", \"rank\": 3}\n"
            let answer = try post(api, "/mappings/items/payloads", lines)
            #expect(answer.status == 200, "\(answer.json)")
            #expect(answer.json["inserted"] == 2)
            #expect(try api.object("Item", "a")["rank"] == 3)
            #expect(try api.object("Item", "b")["rank"] == 2)
            // One transaction: a bad line stores nothing, and its error names the line and the pointer in it.
            let bad = try post(api, "/mappings/items/payloads", "{\"code\": \"c\"}\n{\"code\": \"d\", \"rank\": \"high\"}\n")
            #expect(bad.status == 422)
            let detail = try #require(bad.json["errors"]?.arrayValue?.first)
            #expect(detail["pointer"] == "/1/rank")
            #expect(detail["message"]?.stringValue?.hasPrefix("line 2: ") == true, "\(detail)")
            #expect(try api.client.send("GET", api.base + "/entities/Item/objects/c", token: api.key).status == 404)
            // The entity route maps each line with the entity's annotation mapping (no key path: the lines are the array).
            let entity = try post(api, "/entities/Item/payloads", "{\"code\": \"e\", \"rank\": 5}\n{\"code\": \"f\"}")
            #expect(entity.status == 200, "\(entity.json)")
            #expect(entity.json["inserted"] == 2)
            #expect(try api.object("Item", "e")["rank"] == 5)
        }
    }

    @Test func R_P19_linesOfSeveralChunksMapWhereTheyStandAndTellTheirErrorsByLine() throws {
        // More lines than a chunk (2,048) are mapped in chunks from the body itself (no JSON copy of it).
        func lines(_ count: Int, _ line: (Int) -> String) -> String { (0..<count).map(line).joined(separator: "\n") + "\n" }
        try ModelAPI.with(model: Self.model, mappings: ["items": Self.mapping]) { api in
            let many = try post(api, "/mappings/items/payloads", lines(5000) { "{\"code\": \"c\($0)\", \"rank\": \($0)}" })
            #expect(many.status == 200, "\(many.json)")
            #expect(many.json["inserted"] == 5000)
            #expect(try api.object("Item", "c4999")["rank"] == 4999)
            // A value the mapping refuses on line 4,001 (a later chunk): nothing stored, told by line and pointer.
            let refused = try post(api, "/mappings/items/payloads", lines(5000) { "{\"code\": \"d\($0)\", \"rank\": \($0 == 4000 ? "\"high\"" : "1")}" })
            #expect(refused.status == 422, "\(refused.json)")
            let detail = try #require(refused.json["errors"]?.arrayValue?.first)
            #expect(detail["pointer"] == "/4000/rank")
            #expect(detail["message"]?.stringValue?.hasPrefix("line 4001: ") == true, "\(detail)")
            #expect(try api.client.send("GET", api.base + "/entities/Item/objects/d0", token: api.key).status == 404)
            // A syntax error on line 3,001, at its column in the body.
            let syntax = try post(api, "/mappings/items/payloads", lines(5000) { $0 == 3000 ? "  {\"code\": tru}" : "{\"code\": \"e\($0)\"}" })
            #expect(syntax.status == 400)
            #expect(syntax.json["detail"]?.stringValue?.hasPrefix("Line 3001, column 12") == true, "\(syntax.json)")
            #expect(try api.get("entities/Item/objects?count=true&limit=1")["total"] == 5000, "nothing more was stored")
        }
    }

    @Test func R_P19_aLineThatIsNotOneValueIs400AtItsLineAndColumn() throws {
        try ModelAPI.with(model: Self.model, mappings: ["items": Self.mapping]) { api in
            let two = try post(api, "/mappings/items/payloads", "{\"code\": \"a\"}\n{\"code\": \"b\"}, {\"code\": \"c\"}\n")
            #expect(two.status == 400)
            #expect(two.json["detail"]?.stringValue?.contains("Line 2, column 14") == true, "\(two.json)")
            let open = try post(api, "/mappings/items/payloads", "{\"code\": \"a\",\n\"rank\": 1}\n")
            #expect(open.status == 400)
            #expect(open.json["detail"]?.stringValue?.contains("Line 1") == true, "\(open.json)")
            let syntax = try post(api, "/mappings/items/payloads", "{\"code\": \"a\"}\n  {\"code\": tru}\n")
            #expect(syntax.status == 400)
            #expect(syntax.json["detail"]?.stringValue?.hasPrefix("Line 2, column 12") == true, "\(syntax.json)")
            let json = try api.client.send("POST", api.base + "/mappings/items/payloads", headers: [("Content-Type", "text/plain")],
                                           body: Array("{}".utf8), token: api.key)
            #expect(json.status == 415)
            #expect(try json.json()["detail"]?.stringValue?.contains("application/json' or 'application/x-ndjson'") == true, "the route says what it takes")
            #expect(try api.get("entities/Item/objects?count=true&limit=1")["total"] == 0, "nothing was stored")
        }
    }
}
