// R-Q9 aggregates through POST …/aggregate, in process: groups and their count, sum, avg, min and max,
// computed here from the payload (FacetTests' issues) and compared; mistakes are 400s at their members.
import Foundation
import Testing
import CartographCore
import CartographTesting

struct AggregateTests {
    func aggregate(_ api: ModelAPI, _ body: JSONValue) throws -> (status: Int, json: JSONValue) {
        let response = try api.client.sendJSON("POST", api.base + "/entities/Issue/aggregate", body, token: api.key)
        return (response.status, try response.json())
    }

    @Test func R_Q9_groupsByAnAttributeAndAToOneKeyPathWithCountSumAvgMinMax() throws {
        try ModelAPI.with(model: FacetTests.model, mappings: ["issues": FacetTests.mapping]) { api in
            try api.map("issues", .array(FacetTests.issues))
            let answer = try aggregate(api, [
                "where": "state != 'draft'", "groupBy": ["state", "author.login"],
                "aggregates": ["n": "count", "comments": "sum:comments", "mean": "avg:comments", "first": "min:closedAt",
                               "most": "max:comments", "closed": "count:closedAt"],
                "orderBy": ["-n"], "limit": 100,
            ])
            #expect(answer.status == 200, "\(answer.json)")
            let groups = answer.json["groups"]?.arrayValue ?? []
            #expect(answer.json["more"] == false)
            // Expected: every (state, author) pair of the non-draft issues.
            var expected: [String: [JSONValue]] = [:]
            for issue in FacetTests.issues where issue["state"] != "draft" {
                let key = (issue["state"]?.stringValue ?? "") + "|" + (issue["author"]?["login"]?.stringValue ?? "<nil>")
                expected[key, default: []].append(issue)
            }
            #expect(groups.count == expected.count)
            let counts = groups.compactMap { $0["n"]?.numberValue?.int64Value }
            #expect(counts == counts.sorted(by: >), "ordered by -n")
            for group in groups {
                let key = (group["state"]?.stringValue ?? "") + "|" + (group["author.login"]?.stringValue ?? "<nil>")
                let members = try #require(expected[key], "group \(key)")
                let comments = members.compactMap { $0["comments"]?.numberValue?.int64Value }
                #expect(group["n"]?.numberValue?.int64Value == Int64(members.count))
                #expect(group["comments"]?.numberValue?.int64Value == comments.reduce(0, +))
                #expect(group["mean"]?.numberValue?.doubleValue.map { abs($0 - Double(comments.reduce(0, +)) / Double(comments.count)) < 1e-9 } == true)
                #expect(group["most"]?.numberValue?.int64Value == comments.max())
                let closed = members.compactMap { $0["closedAt"]?.stringValue }.sorted()
                #expect(group["closed"]?.numberValue?.int64Value == Int64(closed.count))
                #expect(group["first"]?.stringValue?.prefix(10) == closed.first?.prefix(10) || (closed.isEmpty && group["first"] == .null))
            }
            // No groupBy: one group of every match; a limit says whether more groups follow.
            let all = try aggregate(api, ["aggregates": ["n": "count"]])
            #expect(all.json["groups"] == [["n": 90]])
            let limited = try aggregate(api, ["groupBy": "state", "aggregates": ["n": "count"], "limit": 2])
            #expect(limited.json["groups"] == [["state": "closed", "n": 30], ["state": "draft", "n": 30]])
            #expect(limited.json["more"] == true)
        }
    }

    @Test func R_Q9_R_Q6_aSearchNarrowsTheGroupsToItsMatches() throws {
        let model: JSONValue = ["entities": [["name": "Article", "userInfo": ["identityAttributes": "id"],
            "attributes": [["name": "id", "type": "integer64"], ["name": "title", "type": "string", "searchable": true],
                           ["name": "section", "type": "string"], ["name": "views", "type": "integer64"]]]]]
        let mapping: JSONValue = ["entity": "Article", "attributes": ["id", "title", "section", "views"]]
        try ModelAPI.with(model: model, mappings: ["articles": mapping]) { api in
            let titles = ["a red fox", "winter foxes", "the fox and the hound", "spider webs", "a fox in town", "snow"]
            let articles: [JSONValue] = titles.enumerated().map { index, title in
                ["id": .number(JSONNumber(index + 1)), "title": .string(title), "section": .string(index % 2 == 0 ? "nature" : "city"),
                 "views": .number(JSONNumber((index + 1) * 10))]
            }
            try api.map("articles", .array(articles))
            func groups(_ body: JSONValue) throws -> JSONValue? {
                let response = try api.client.sendJSON("POST", api.base + "/entities/Article/aggregate", body, token: api.key)
                #expect(response.status == 200, "\(response.text)")
                return try response.json()["groups"]
            }
            // "fox" finds articles 1, 3 and 5 (not "foxes": words match whole): all in nature, 10 + 30 + 50 views.
            #expect(try groups(["search": "fox", "groupBy": "section", "aggregates": ["n": "count", "views": "sum:views"]])
                    == [["section": "nature", "n": 3, "views": 90]])
            // With `where` too; and "fox*" adds article 2 (city).
            #expect(try groups(["search": "fox*", "where": "views > 10", "groupBy": "section", "aggregates": ["n": "count"], "orderBy": "-n"])
                    == [["section": "nature", "n": 2], ["section": "city", "n": 1]])
            let malformed = try api.client.sendJSON("POST", api.base + "/entities/Article/aggregate",
                                                    ["search": "\"fox", "aggregates": ["n": "count"]], token: api.key)
            #expect(malformed.status == 400)
            #expect(try malformed.json()["errors"]?.arrayValue?.first?["pointer"] == "/search")
        }
    }

    @Test func R_Q9_aMistakeIs400AtItsMember() throws {
        try ModelAPI.with(model: FacetTests.model, mappings: ["issues": FacetTests.mapping]) { api in
            func pointer(_ body: JSONValue) throws -> JSONValue? {
                let answer = try aggregate(api, body)
                #expect(answer.status == 400, "\(body): \(answer.json)")
                return answer.json["errors"]?.arrayValue?.first?["pointer"]
            }
            let mistakes: [(body: JSONValue, pointer: String)] = [
                (["aggregates": ["n": "median:comments"]], "/aggregates/n"),
                (["aggregates": ["n": "sum:state"]], "/aggregates/n"),
                (["aggregates": ["n": "sum"]], "/aggregates/n"),
                (["aggregates": ["n": "max:nope"]], "/aggregates"),
                (["groupBy": ["stat"], "aggregates": ["n": "count"]], "/groupBy"),
                (["groupBy": ["labels.name"]], "/groupBy"),  // a to-many is not a group
                (["groupBy": ["state"], "orderBy": ["-m"]], "/orderBy"),
                (["groupBy": ["state"], "aggregates": ["state": "count"]], "/aggregates/state"),
                (["where": "state ==", "aggregates": ["n": "count"]], "/where"),
                (["aggregates": ["n": "count"], "limit": 0], "/limit"),
                (["aggregates": ["n": "count"], "having": 1], "/having"),
                (["aggregates": ["n": "count"], "search": "fox"], "/search"),  // no searchable attribute
                ([:], "/aggregates"),
            ]
            for mistake in mistakes {
                let found = try pointer(mistake.body)
                #expect(found == .string(mistake.pointer), "\(mistake.body)")
            }
        }
    }
}
