// Indexes from the model (R-M7) and `explain=true` on queries (R-Q5) through the routes, in process:
// declaring an index changes how SQLite runs the list, the plan says so in words, re-registering without
// it drops it, and the answer is the same objects either way.
import Foundation
import Testing
import CartographCore
import CartographTesting

func articlesModel(indexed: Bool, fetchIndexes: JSONValue = []) -> JSONValue {
    ["entities": [[
        "name": "Article", "userInfo": ["identityAttributes": "id"],
        "attributes": [["name": "id", "type": "integer64"], ["name": "publishedAt", "type": "date", "indexed": .bool(indexed)],
                       ["name": "views", "type": "integer64"]],
        "fetchIndexes": fetchIndexes,
    ]]]
}

let articlesMapping: JSONValue = ["entity": "Article", "attributes": ["id": "id", "publishedAt": "publishedAt", "views": "views"]]

struct QueryPlanTests {
    @Test func R_M7_R_Q5_aDeclaredIndexServesTheOrderAndThePlanSaysSo() throws {
        try ModelAPI.with(model: articlesModel(indexed: false), mappings: ["articles": articlesMapping]) { api in
            let payload: JSONValue = .array((1...300).map { n in
                ["id": .number(JSONNumber(n)), "publishedAt": .string("2024-01-\(String(format: "%02d", n % 28 + 1))T00:00:\(String(format: "%02d", n % 60))Z"),
                 "views": .number(JSONNumber(n * 7 % 1000))]
            })
            try api.map("articles", payload)
            let list = "entities/Article/objects?where=views%20%3E%20500&orderBy=-publishedAt&limit=5&explain=true"

            let bare = try api.get(list)
            #expect(bare["plan"]?["fullScan"] == true)
            #expect(bare["plan"]?["sortsEveryMatch"] == true)
            #expect(bare["plan"]?["indexes"] == [])
            #expect(bare["plan"]?["summary"]?.stringValue?.contains("full scan") == true)
            #expect(bare["plan"]?["summary"]?.stringValue?.contains("\"indexed\": true on Article.publishedAt") == true, "the plan says what to declare")

            let migrated = try api.client.sendJSON("PUT", api.base, articlesModel(indexed: true), token: api.key)
            #expect(migrated.status == 200)
            #expect(try migrated.json()["entities"]?.arrayValue?.first?["attributes"]?.arrayValue?[1]["indexed"] == true)
            let indexed = try api.get(list)
            #expect(indexed["plan"]?["fullScan"] == false)
            #expect(indexed["plan"]?["sortsEveryMatch"] == false)
            #expect(indexed["plan"]?["indexes"] == ["ix:Article:publishedAt"])
            #expect(indexed["items"] == bare["items"], "an index changes how, not what")
            #expect(indexed["items"]?.arrayValue?.count == 5)

            // A descending fetch index on (views, publishedAt) serves `-views,publishedAt`; POST …/query explains too.
            let fetchIndex: JSONValue = [["name": "popular", "elements": [["attribute": "views", "order": "descending"], "publishedAt"]]]
            #expect(try api.client.sendJSON("PUT", api.base, articlesModel(indexed: false, fetchIndexes: fetchIndex), token: api.key).status == 200)
            let query = try api.client.sendJSON("POST", api.base + "/entities/Article/query",
                                                ["orderBy": ["-views", "publishedAt"], "limit": 3, "explain": true], token: api.key).json()
            #expect(query["plan"]?["indexes"] == ["ix:Article:-views,publishedAt"])
            #expect(query["plan"]?["sortsEveryMatch"] == false)
            let after = try api.get(list)["plan"]?["indexes"]?.arrayValue ?? []
            #expect(!after.contains("ix:Article:publishedAt"), "re-registering without `indexed` dropped the index")

            // Without explain there is no plan; a non-boolean explain is a 400.
            #expect(try api.get("entities/Article/objects?limit=1")["plan"] == nil)
            #expect(try api.client.send("GET", api.base + "/entities/Article/objects?explain=maybe", token: api.key).status == 400)
            #expect(try api.client.sendJSON("POST", api.base + "/entities/Article/query", ["explain": "yes"], token: api.key).status == 400)
        }
    }

    @Test func R_M7_anIndexOnARelationshipOrAnUnknownAttributeIs422WithAPointer() throws {
        try ModelAPI.with(model: articlesModel(indexed: false)) { api in
            let response = try api.client.sendJSON("PUT", api.base, articlesModel(indexed: false, fetchIndexes: [["name": "x", "elements": ["nope"]]]), token: api.key)
            #expect(response.status == 422)
            #expect(try response.json()["errors"]?.arrayValue?.first?["pointer"] == "/entities/0/fetchIndexes/0/elements/0")
            // `indexed` on a relationship: 422 at the relationship's member, and the registered model is unchanged.
            let model: JSONValue = ["entities": [["name": "Article", "userInfo": ["identityAttributes": "id"],
                                   "attributes": [["name": "id", "type": "integer64"]],
                                   "relationships": [["name": "parent", "destination": "Article", "indexed": true]]]]]
            let relationship = try api.client.sendJSON("PUT", api.base, model, token: api.key)
            #expect(relationship.status == 422)
            #expect(try relationship.json()["errors"]?.arrayValue?.map { $0["pointer"] }.contains("/entities/0/relationships/0/indexed") == true)
            #expect(try api.client.send("GET", api.base, token: api.key).json()["version"] == 1)
        }
    }
}
