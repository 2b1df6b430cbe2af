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

    /// Issues with labels through a join table: the commonest filter of issue-tracker data.
    static let issuesModel: JSONValue = ["entities": [
        ["name": "Issue", "userInfo": ["identityAttributes": "id"],
         "attributes": [["name": "id", "type": "integer64"], ["name": "state", "type": "string"], ["name": "updatedAt", "type": "integer64"]],
         "relationships": [["name": "labels", "destination": "Label", "toMany": true, "inverse": "issues"]]],
        ["name": "Label", "userInfo": ["identityAttributes": "name"],
         "attributes": [["name": "name", "type": "string"]],
         "relationships": [["name": "issues", "destination": "Issue", "toMany": true, "inverse": "labels"]]],
    ]]

    @Test func R_Q2_R_Q5_anyOverAToManyWithAnEqualityIsASemiJoinFromTheDestinationsAndThePlanSaysSo() throws {
        let mapping: JSONValue = ["entity": "Issue", "attributes": ["id": "id", "state": "state", "updatedAt": "updatedAt"],
                                  "relationships": [["from": "labels", "to": "labels", "mapping": ["entity": "Label", "attributes": ["name": "name"]]]]]
        try ModelAPI.with(model: Self.issuesModel, mappings: ["issues": mapping]) { api in
            let names = ["bug", "docs", "ui", "perf"]
            let payload: JSONValue = .array((1...200).map { n in
                ["id": .number(JSONNumber(n)), "state": .string(n % 3 == 0 ? "closed" : "open"), "updatedAt": .number(JSONNumber(n * 37 % 1000)),
                 "labels": .array((0..<(n % 3)).map { ["name": .string(names[(n + $0) % names.count])] })]
            })
            try api.map("issues", payload)
            func id(_ object: JSONValue) -> Int64? { object["id"]?.numberValue?.int64Value }
            func ids(_ predicate: String) throws -> (ids: [Int64], plan: JSONValue?) {
                let query = try api.client.sendJSON("POST", api.base + "/entities/Issue/query",
                                                    ["where": .string(predicate), "orderBy": ["-updatedAt"], "limit": 500, "explain": true], token: api.key).json()
                return ((query["items"]?.arrayValue ?? []).compactMap(id), query["plan"])
            }
            // What the payload says, computed here: open, labelled bug, newest first.
            let issues = payload.arrayValue ?? []
            let labelledBug = Set(issues.filter { $0["labels"]?.arrayValue?.contains { $0["name"] == "bug" } == true }.compactMap(id))
            let expected = issues.filter { $0["state"] == "open" && labelledBug.contains(id($0) ?? 0) }
                .sorted { ($0["updatedAt"]?.numberValue?.int64Value ?? 0) > ($1["updatedAt"]?.numberValue?.int64Value ?? 0) }.compactMap(id)
            let any = try ids("state == 'open' AND ANY labels.name == 'bug'")
            #expect(!expected.isEmpty)
            #expect(any.ids == expected)
            let steps = any.plan?["steps"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(steps.contains { $0.hasPrefix("LIST SUBQUERY") }, "the labelled issues are found once: \(steps)")
            #expect(!steps.contains { $0.hasPrefix("CORRELATED") }, "no subquery per issue: \(steps)")
            #expect(any.plan?["summary"]?.stringValue?.contains("relationship condition") == true)

            // NONE is the complement, the issues without labels included.
            let none = try ids("NONE labels.name == 'bug'")
            #expect(Set(none.ids) == Set(issues.compactMap(id)).subtracting(labelledBug))
            #expect(none.ids.contains(3), "issue 3 has no labels")
            // A condition that reads the issue itself stays a subquery per issue, and still answers right.
            let correlated = try ids("ANY labels.name == state")
            #expect(correlated.ids.isEmpty)
            #expect(correlated.plan?["steps"]?.arrayValue?.contains { $0.stringValue?.hasPrefix("CORRELATED") == true } == true)
        }
    }

    /// Issues whose to-many relationships are stored each way: `labels` in a join table (many-to-many),
    /// `comments` as the comment's foreign key (the inverse is a to-one), `steps` ordered (a join table
    /// with positions, though its inverse is a to-one).
    static let countedModel: JSONValue = ["entities": [
        ["name": "Issue", "userInfo": ["identityAttributes": "id"],
         "attributes": [["name": "id", "type": "integer64"], ["name": "state", "type": "string"]],
         "relationships": [["name": "labels", "destination": "Label", "toMany": true, "inverse": "issues"],
                           ["name": "comments", "destination": "Comment", "toMany": true, "inverse": "issue"],
                           ["name": "steps", "destination": "Step", "toMany": true, "ordered": true, "inverse": "issue"]]],
        ["name": "Label", "userInfo": ["identityAttributes": "name"], "attributes": [["name": "name", "type": "string"]],
         "relationships": [["name": "issues", "destination": "Issue", "toMany": true, "inverse": "labels"]]],
        ["name": "Comment", "userInfo": ["identityAttributes": "id"], "attributes": [["name": "id", "type": "integer64"]],
         "relationships": [["name": "issue", "destination": "Issue", "inverse": "comments"]]],
        ["name": "Step", "userInfo": ["identityAttributes": "id"], "attributes": [["name": "id", "type": "integer64"]],
         "relationships": [["name": "issue", "destination": "Issue", "inverse": "steps"]]],
    ]]

    /// 24 issues with 0-3 labels, 0-2 comments and 0-4 steps (issue n has n % 4, n % 3 and n % 5), so
    /// every count from 0 up is held by some issue, and each relationship leaves some issues without any.
    static func withCountedIssues(_ body: (ModelAPI, _ counts: [Int64: [String: Int]]) throws -> Void) throws {
        let member: (String) -> JSONValue = { ["entity": .string($0), "attributes": ["id": "id"]] }
        let mapping: JSONValue = ["entity": "Issue", "attributes": ["id": "id", "state": "state"],
                                  "relationships": [["from": "labels", "to": "labels", "mapping": ["entity": "Label", "attributes": ["name": "name"]]],
                                                    ["from": "comments", "to": "comments", "mapping": member("Comment")],
                                                    ["from": "steps", "to": "steps", "mapping": member("Step")]]]
        try ModelAPI.with(model: countedModel, mappings: ["issues": mapping, "comments": member("Comment")]) { api in
            let names = ["bug", "docs", "ui", "perf"]
            var counts: [Int64: [String: Int]] = [:]
            let payload: JSONValue = .array((1...24).map { n in
                counts[Int64(n)] = ["labels": n % 4, "comments": n % 3, "steps": n % 5]
                return ["id": .number(JSONNumber(n)), "state": .string(n % 2 == 0 ? "open" : "closed"),
                        "labels": .array((0..<(n % 4)).map { ["name": .string(names[(n + $0) % names.count])] }),
                        "comments": .array((0..<(n % 3)).map { ["id": .number(JSONNumber(n * 10 + $0))] }),
                        "steps": .array((0..<(n % 5)).map { ["id": .number(JSONNumber(n * 10 + $0))] })]
            })
            try api.map("issues", payload)
            try body(api, counts)
        }
    }

    /// The issues a predicate selects, read twice: the page (a `@count` counted per row) and its total
    /// (`count`, which reads every match: grouped), which must agree.
    static func query(_ api: ModelAPI, _ predicate: String, count: Bool = true) throws -> (ids: [Int64], plan: JSONValue?) {
        let response = try api.client.sendJSON("POST", api.base + "/entities/Issue/query",
                                               ["where": .string(predicate), "orderBy": ["id"], "limit": 500, "explain": true, "count": .bool(count)],
                                               token: api.key)
        try #require(response.status == 200, "«\(predicate)»: \(response.text)")
        let page = try response.json()
        let ids = (page["items"]?.arrayValue ?? []).compactMap { $0["id"]?.numberValue?.int64Value }
        if count { #expect(page["total"]?.numberValue?.int64Value == Int64(ids.count), "«\(predicate)»: the total counts what the page lists") }
        return (ids, page["plan"])
    }

    @Test func R_Q2_countOverAToManyOfEachStorageAnswersEveryOperatorWithTheObjectsWithoutDestinations() throws {
        try Self.withCountedIssues { (api, counts) throws in
            let tests: [(String, (Int) -> Bool)] = [
                ("== 0", { $0 == 0 }), ("== 2", { $0 == 2 }), ("!= 0", { $0 != 0 }), ("!= 2", { $0 != 2 }),
                ("< 1", { $0 < 1 }), ("< 3", { $0 < 3 }), ("<= 1", { $0 <= 1 }), ("> 0", { $0 > 0 }), ("> 1", { $0 > 1 }),
                (">= 2", { $0 >= 2 }), ("BETWEEN {0, 1}", { (0...1).contains($0) }), ("BETWEEN {1, 2}", { (1...2).contains($0) }),
                ("IN {0, 2}", { [0, 2].contains($0) }), ("IN {1, 3}", { [1, 3].contains($0) }),
            ]
            for relationship in ["labels", "comments", "steps"] {
                for (test, holds) in tests {
                    let expected = counts.filter { holds($0.value[relationship] ?? -1) }.keys.sorted()
                    let predicate = "\(relationship).@count \(test)"
                    #expect(try Self.query(api, predicate).ids == expected, "«\(predicate)»")
                    let negated = counts.filter { !holds($0.value[relationship] ?? -1) }.keys.sorted()
                    #expect(try Self.query(api, "NOT (\(predicate))").ids == negated, "«NOT (\(predicate))»")
                }
                // Mirrored, and beside a test of the issue's own column (which keeps the count per row).
                #expect(try Self.query(api, "1 >= \(relationship).@count").ids == counts.filter { ($0.value[relationship] ?? -1) <= 1 }.keys.sorted())
                #expect(try Self.query(api, "state == 'open' AND \(relationship).@count == 0").ids
                        == counts.filter { $0.key % 2 == 0 && $0.value[relationship] == 0 }.keys.sorted())
            }
            // Facets and aggregates read every match, grouped too: the issues with fewer than 2 comments, by
            // state; those without a label (4, 8, …: all open).
            let fewComments = counts.filter { ($0.value["comments"] ?? 0) < 2 }.keys
            let byState = { (state: String) in JSONValue.number(JSONNumber(fewComments.filter { ($0 % 2 == 0 ? "open" : "closed") == state }.count)) }
            let aggregate = try api.client.sendJSON("POST", api.base + "/entities/Issue/aggregate",
                                                    ["where": "comments.@count < 2", "groupBy": "state", "aggregates": ["n": "count"]], token: api.key).json()
            #expect(aggregate["groups"] == [["state": "closed", "n": byState("closed")], ["state": "open", "n": byState("open")]], "\(aggregate)")
            let unlabelled = counts.filter { $0.value["labels"] == 0 }.count
            let faceted = try api.get("entities/Issue/objects?limit=1&facets=state&where=" + "NOT (labels.@count > 0)".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
            #expect(faceted["facets"]?["state"]?["values"] == [["value": "open", "count": .number(JSONNumber(unlabelled))]], "\(faceted)")
            // Issues without any: 4, 8, … have no label; 3, 6, … no comment; 5, 10, … no step.
            #expect(try Self.query(api, "labels.@count == 0 AND comments.@count < 1 AND steps.@count <= 0").ids == [])
            #expect(try Self.query(api, "labels.@count == 0 OR comments.@count == 0").ids.prefix(4) == [3, 4, 6, 8])
        }
    }

    @Test func R_Q2_aCountThroughAToOneThatReachesNothingIsZeroEvenUnderNOT() throws {
        try Self.withCountedIssues { (api, counts) throws in
            // Comments 901 and 902 belong to no issue: their issue's labels count zero, in the page (per row)
            // and in the grouped total, where `NULL IN (…)` is NULL and NOT must still keep them.
            try api.map("comments", [["id": 901], ["id": 902]])
            var comments: [(id: Int64, issue: Int64)] = [(901, 0), (902, 0)]
            for n in 1...24 { for k in 0..<(n % 3) { comments.append((Int64(n * 10 + k), Int64(n))) } }
            let tests: [(String, (Int) -> Bool)] = [("issue.labels.@count > 1", { $0 > 1 }), ("issue.labels.@count == 0", { $0 == 0 })]
            for (predicate, holds) in tests {
                for negated in [false, true] {
                    let condition = negated ? "NOT (\(predicate))" : predicate
                    let expected: [Int64] = comments.filter { holds(counts[$0.issue]?["labels"] ?? 0) != negated }.map(\.id).sorted()
                    let response = try api.client.sendJSON("POST", api.base + "/entities/Comment/query",
                                                           ["where": .string(condition), "orderBy": ["id"], "limit": 500, "count": true], token: api.key)
                    let page = try response.json()
                    #expect(page["items"]?.arrayValue?.compactMap { $0["id"]?.numberValue?.int64Value } == expected, "«\(condition)» page")
                    #expect(page["total"]?.numberValue?.int64Value == Int64(expected.count), "«\(condition)» total (grouped)")
                }
            }
        }
    }

    @Test func R_Q5_explainSaysWhetherACountOverAToManyIsCountedPerRowOrGroupedOnceForTheTotal() throws {
        try Self.withCountedIssues { (api, _) throws in
            func said(_ plan: JSONValue?) -> (summary: String, steps: [String]) {
                (plan?["summary"]?.stringValue ?? "", plan?["steps"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            }
            // A page may stop after its objects: it counts per row, and with no total the plan says nothing more.
            let perRowWords = "counts related objects (@count) with a subquery for every row it reads"
            let groupedWords = "counts related objects (@count) for the total and facets once per object that has any, grouped from the relationship's index"
            let page = said(try Self.query(api, "labels.@count > 1", count: false).plan)
            #expect(page.summary.contains(perRowWords) && !page.summary.contains("grouped"), "\(page.summary)")
            #expect(page.steps.contains { $0.hasPrefix("CORRELATED SCALAR SUBQUERY") }, "\(page.steps)")
            // Its total reads every match: the counts are grouped once, and the plan says so.
            let total = said(try Self.query(api, "labels.@count > 1").plan)
            #expect(total.summary.contains(perRowWords) && total.summary.contains(groupedWords), "\(total.summary)")
            // Admitting zero (comments: the destinations' foreign key), alike.
            let zero = said(try Self.query(api, "comments.@count < 2").plan)
            #expect(zero.summary.contains(groupedWords), "\(zero.summary)")
            // Beside a test of the issue's own column, SQLite tests that first and counts the rest per row,
            // the total too.
            let beside = said(try Self.query(api, "state == 'open' AND steps.@count > 1").plan)
            #expect(beside.summary.contains(perRowWords) && !beside.summary.contains("grouped"), "\(beside.summary)")
            #expect(beside.steps.contains { $0.hasPrefix("CORRELATED SCALAR SUBQUERY") }, "\(beside.steps)")
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
