// R-Q8 facets through the list and query routes, in process: counts over the whole filtered set for an
// attribute, a to-one key path and a to-many relationship, computed here from the payload and compared.
import Foundation
import Testing
import CartographCore
import CartographTesting

struct FacetTests {
    static let model: JSONValue = ["entities": [
        ["name": "Issue", "userInfo": ["identityAttributes": "id"],
         "attributes": [["name": "id", "type": "integer64"], ["name": "state", "type": "string"], ["name": "comments", "type": "integer64"],
                        ["name": "closedAt", "type": "date", "optional": true]],
         "relationships": [["name": "author", "destination": "User", "inverse": "issues"],
                           ["name": "labels", "destination": "Label", "toMany": true, "inverse": "issues"]]],
        ["name": "User", "userInfo": ["identityAttributes": "login"], "attributes": [["name": "login", "type": "string"]],
         "relationships": [["name": "issues", "destination": "Issue", "toMany": true, "inverse": "author"]]],
        ["name": "Label", "userInfo": ["identityAttributes": "name"], "attributes": [["name": "name", "type": "string"]],
         "relationships": [["name": "issues", "destination": "Issue", "toMany": true, "inverse": "labels"]]],
    ]]
    static let mapping: JSONValue = [
        "entity": "Issue", "attributes": ["id": "id", "state": "state", "comments": "comments", "closedAt": "closedAt"],
        "relationships": [["from": "author", "to": "author", "mapping": ["entity": "User", "attributes": ["login": "login"]]],
                          ["from": "labels", "to": "labels", "mapping": ["entity": "Label", "attributes": ["name": "name"]]]],
    ]
    static let logins = ["ada", "bob", "cyd"], labels = ["bug", "docs", "ui", "perf", "help"]

    /// 90 issues: state by n % 3, an author for all but every tenth, 0-3 labels.
    static let issues: [JSONValue] = (1...90).map { n in
        let state: String = ["open", "closed", "draft"][n % 3]
        let closedAt: JSONValue = n % 3 == 1 ? .string("2024-05-0\(n % 9 + 1)T00:00:00Z") : .null
        var issue = JSONObject()
        issue.append("id", .number(JSONNumber(n)))
        issue.append("state", .string(state))
        issue.append("comments", .number(JSONNumber(n % 4)))
        issue.append("closedAt", closedAt)
        if n % 10 != 0 { issue.append("author", ["login": .string(logins[(n / 3) % 3])]) }
        issue.append("labels", .array((0..<(n % 4)).map { ["name": .string(labels[(n + $0 * 2) % labels.count])] }))
        return .object(issue)
    }

    /// Counts of `value(issue)` over the issues `keep` selects, most first then by value, as the facet lists them.
    static func expected(_ keep: (JSONValue) -> Bool, _ values: (JSONValue) -> [JSONValue]) -> [(JSONValue, Int)] {
        var counts: [String: (JSONValue, Int)] = [:]
        for issue in issues where keep(issue) {
            for value in values(issue) { counts[value.jsonText, default: (value, 0)].1 += 1 }
        }
        return counts.values.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : ($0.0.stringValue ?? "") < ($1.0.stringValue ?? "") }
    }

    static func listed(_ facet: JSONValue?) -> [(JSONValue, Int)] {
        (facet?["values"]?.arrayValue ?? []).map { ($0["value"] ?? .null, Int($0["count"]?.numberValue?.int64Value ?? -1)) }
    }

    @Test func R_Q8_facetsCountAnAttributeAToOneKeyPathAndAToManyOverTheWholeFilteredSet() throws {
        try ModelAPI.with(model: Self.model, mappings: ["issues": Self.mapping]) { api in
            try api.map("issues", .array(Self.issues))
            let notDraft: (JSONValue) -> Bool = { $0["state"] != "draft" }
            let page = try api.get("entities/Issue/objects?where=state%20!%3D%20'draft'&limit=5&facets=state,author.login,labels.name&facetLimit=3")
            #expect(page["items"]?.arrayValue?.count == 5, "the page is still a page of 5")
            let facets = try #require(page["facets"])

            let states = Self.expected(notDraft) { [$0["state"] ?? .null] }
            #expect(Self.listed(facets["state"]).map(\.0) == states.map(\.0))
            #expect(Self.listed(facets["state"]).map(\.1) == states.map(\.1))
            #expect(facets["state"]?["otherValues"] == 0)

            // Issues without an author count under null.
            let authors = Self.expected(notDraft) { [$0["author"]?["login"] ?? .null] }
            try #require(authors.count == 4)
            #expect(Self.listed(facets["author.login"]).map(\.1) == authors.prefix(3).map(\.1))
            #expect(Self.listed(facets["author.login"]).map(\.0) == authors.prefix(3).map(\.0))
            #expect(facets["author.login"]?["otherValues"] == 1)
            #expect(facets["author.login"]?["otherCount"]?.numberValue?.int64Value == Int64(authors[3].1))

            // A to-many counts an issue once under each label; issues without labels are not counted.
            let labelCounts = Self.expected(notDraft) { $0["labels"]?.arrayValue?.map { $0["name"] ?? .null } ?? [] }
            #expect(Self.listed(facets["labels.name"]).map(\.0) == labelCounts.prefix(3).map(\.0))
            #expect(Self.listed(facets["labels.name"]).map(\.1) == labelCounts.prefix(3).map(\.1))
            #expect(facets["labels.name"]?["otherValues"]?.numberValue?.int64Value == Int64(labelCounts.count - 3))
            #expect(facets["labels.name"]?["otherCount"]?.numberValue?.int64Value == Int64(labelCounts.dropFirst(3).reduce(0) { $0 + $1.1 }))

            // POST …/query takes them in the body; a date facet answers dates as the model renders them.
            let query = try api.client.sendJSON("POST", api.base + "/entities/Issue/query",
                                                ["where": "state == 'open'", "facets": ["closedAt", "comments"], "facetLimit": 100], token: api.key).json()
            let comments = Self.expected({ $0["state"] == "open" }) { [$0["comments"] ?? .null] }
            #expect(Self.listed(query["facets"]?["comments"]).map(\.1) == comments.map(\.1))
            #expect(Self.listed(query["facets"]?["closedAt"]).map(\.0) == [.null], "open issues have no closedAt")
            let closed = try api.get("entities/Issue/objects?where=state%20%3D%3D%20'closed'&limit=1&facets=closedAt&facetLimit=1")
            #expect(Self.listed(closed["facets"]?["closedAt"]).first?.0.stringValue?.hasPrefix("2024-05-0") == true)
        }
    }

    @Test func R_Q8_aBadFacetIs400AtItsParameterWithAHint() throws {
        try ModelAPI.with(model: Self.model, mappings: ["issues": Self.mapping]) { api in
            try api.map("issues", .array(Self.issues))
            func problem(_ query: String) throws -> (Int, JSONValue) {
                let response = try api.client.send("GET", api.base + "/entities/Issue/objects?" + query, token: api.key)
                return (response.status, try response.json())
            }
            let (status, typo) = try problem("facets=stat")
            #expect(status == 400)
            #expect(typo["errors"]?.arrayValue?.first?["pointer"] == "/facets")
            #expect(typo["detail"]?.stringValue?.contains("did you mean 'state'") == true)
            let mistakes: [(query: String, pointer: String)] = [
                ("facets=labels.nam", "/facets"), ("facets=state&facetLimit=0", "/facetLimit"), ("facets=state&facetLimit=many", "/facetLimit"),
                ("facets=a,b,c,d,e,f,g,h,i,j,k", "/facets"),
                ("facets=labels", "/facets"),  // a to-many without an attribute of its destinations
            ]
            for mistake in mistakes {
                let (status, answer) = try problem(mistake.query)
                #expect(status == 400, "\(mistake.query)")
                #expect(answer["errors"]?.arrayValue?.first?["pointer"] == .string(mistake.pointer), "\(mistake.query): \(answer)")
            }
            #expect(try problem("facets=labels.nam").1["detail"]?.stringValue?.contains("did you mean 'name'") == true)
            #expect(try problem("limit=1").1["facets"] == nil)
        }
    }
}
