// The incremental cursor through the routes (R-P16, docs/mapping.md "Incremental cursors"): payloads
// raise it in their own transaction, per scope; `GET …/cursor` answers where a fetcher resumes.
import Testing
import CartographCore
import CartographTesting

struct MappingCursorRoutesTests {
    private static let model: JSONValue = ["entities": [
        ["name": "Issue", "userInfo": ["identityAttributes": "number"],
         "attributes": [["name": "number", "type": "integer64"], ["name": "title", "type": "string"],
                        ["name": "updatedAt", "type": "date"]]],
    ]]
    private static let mappings: [String: JSONValue] = [
        "issues": ["entity": "Issue", "keyPath": "items", "attributes": ["number", "title", "updatedAt"],
                   "cursor": ["attribute": "updatedAt", "scope": ["repo"]]],
        "plain": ["entity": "Issue", "attributes": ["number", "title"]],
    ]

    private static func page(_ issues: [(Int, String)]) -> JSONValue {
        ["items": .array(issues.map { ["number": .number(JSONNumber($0.0)), "title": "t", "updatedAt": .string($0.1)] })]
    }

    private static func cursors(_ api: ModelAPI, _ query: String = "") throws -> [JSONValue] {
        let answer = try api.client.send("GET", api.base + "/mappings/issues/cursor" + query, token: api.key)
        #expect(answer.status == 200, "\(answer.text)")
        return try answer.json()["cursors"]?.arrayValue ?? []
    }

    @Test func R_P16_committedPayloadsRaiseTheCursorOfTheirScopeAndNothingElseMovesIt() throws {
        try ModelAPI.with(model: Self.model, mappings: Self.mappings) { (api) throws in
            #expect(try Self.cursors(api).isEmpty, "nothing committed yet")
            #expect(try api.post("issues", Self.page([(1, "2026-11-01T10:00:00Z"), (2, "2026-11-03T08:00:00Z")]), query: "?repo=octo/hello").status == 200)
            #expect(try api.post("issues", Self.page([(3, "2026-10-01T00:00:00Z")]), query: "?repo=octo/world").status == 200)
            // An older page of the same repository, a dry run with a later value, and a refused payload move nothing.
            #expect(try api.post("issues", Self.page([(1, "2026-11-01T10:00:00Z")]), query: "?repo=octo/hello").status == 200)
            #expect(try api.post("issues", Self.page([(4, "2026-12-24T00:00:00Z")]), query: "?repo=octo/hello&dryRun=true").status == 200)
            #expect(try api.post("issues", ["items": [["number": 5, "title": "t", "updatedAt": "2026-12-25T00:00:00Z"],
                                                      ["number": "five", "updatedAt": "2026-12-26T00:00:00Z"]]], query: "?repo=octo/hello").status == 422)

            let all = try Self.cursors(api)
            #expect(all.map { $0["scope"] } == [["repo": "octo/hello"], ["repo": "octo/world"]])
            #expect(all.map { $0["value"] } == ["2026-11-03T08:00:00.000Z", "2026-10-01T00:00:00.000Z"])
            #expect(try Self.cursors(api, "?repo=octo/world").map { $0["value"] } == ["2026-10-01T00:00:00.000Z"])

            // A later page raises it; a payload without the scope's parameter counts for `null`.
            #expect(try api.post("issues", Self.page([(6, "2026-11-20T00:00:00Z")]), query: "?repo=octo/hello").status == 200)
            #expect(try api.post("issues", Self.page([(7, "2026-01-01T00:00:00Z")])).status == 200)
            #expect(try Self.cursors(api, "?repo=octo/hello").map { $0["value"] } == ["2026-11-20T00:00:00.000Z"])
            #expect(try Self.cursors(api).contains { $0["scope"] == ["repo": .null] && $0["value"] == "2026-01-01T00:00:00.000Z" })
        }
    }

    @Test func R_P16_theCursorRouteRefusesWhatItCannotAnswer() throws {
        try ModelAPI.with(model: Self.model, mappings: Self.mappings) { (api) throws in
            let noCursor = try api.client.send("GET", api.base + "/mappings/plain/cursor", token: api.key)
            #expect(noCursor.status == 404)
            #expect(noCursor.text.contains("keeps no cursor"))
            let unknown = try api.client.send("GET", api.base + "/mappings/issues/cursor?repository=x", token: api.key)
            #expect(unknown.status == 400)
            #expect(try unknown.json()["errors"]?.arrayValue?.first?["pointer"] == "/repository")
            // The payload route takes the scope's parameter, and still refuses others, writing nothing.
            let misnamed = try api.post("issues", Self.page([(1, "2026-11-01T10:00:00Z")]), query: "?repository=x")
            #expect(misnamed.status == 400)
            #expect(try misnamed.json()["errors"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } == ["/repository"])
            #expect(try api.client.send("GET", api.base + "/entities/Issue/objects/1", token: api.key).status == 404)
            #expect(try Self.cursors(api).isEmpty, "a refused payload raises no cursor")
        }
    }

    @Test func R_P16_registeringAnotherCursorOrDeletingTheMappingForgetsTheKeptOne() throws {
        try ModelAPI.with(model: Self.model, mappings: Self.mappings) { (api) throws in
            #expect(try api.post("issues", Self.page([(1, "2026-11-01T10:00:00Z")]), query: "?repo=a").status == 200)
            let same: JSONValue = ["entity": "Issue", "keyPath": "items", "attributes": ["number", "updatedAt", "title"],
                                   "cursor": ["attribute": "updatedAt", "scope": ["repo"]]]
            #expect(try api.client.sendJSON("PUT", api.base + "/mappings/issues", same, token: api.key).status == 200)
            #expect(try Self.cursors(api).count == 1, "the same cursor registered again keeps its value")
            let other: JSONValue = ["entity": "Issue", "keyPath": "items", "attributes": ["number", "updatedAt", "title"], "cursor": "title"]
            #expect(try api.client.sendJSON("PUT", api.base + "/mappings/issues", other, token: api.key).status == 200)
            #expect(try Self.cursors(api).isEmpty)
            #expect(try api.post("issues", Self.page([(2, "2026-11-02T10:00:00Z")])).status == 200)
            #expect(try Self.cursors(api).map { $0["value"] } == ["t"])
            #expect(try api.client.send("DELETE", api.base + "/mappings/issues", token: api.key).status == 204)
            #expect(try api.client.sendJSON("PUT", api.base + "/mappings/issues", other, token: api.key).status == 201)
            #expect(try Self.cursors(api).isEmpty, "a mapping registered again under the name starts with none")
        }
    }
}
