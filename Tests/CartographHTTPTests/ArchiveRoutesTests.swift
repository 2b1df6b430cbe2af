// A mapping's archive over HTTP (R-P18, docs/mapping.md "Archive, replay and dead letters"): list, one
// body, dead letters and replay through the real server, and the 404 of a range that expired.
import Foundation
import Testing
import CartographCore
import CartographTesting

struct ArchiveRoutesTests {
    private static let model: JSONValue = ["entities": [
        ["name": "Issue", "userInfo": ["identityAttributes": "number"],
         "attributes": [["name": "number", "type": "integer64"], ["name": "title", "type": "string"], ["name": "state", "type": "string"]]],
    ]]

    /// `state` read from `stateKey`; the bug is `status`, a key the API never sends.
    private static func mapping(stateKey: String, days: Int = 30) -> JSONValue {
        ["entity": "Issue", "keyPath": "items", "attributes": ["number": "number", "title": "title", stateKey: "state"],
         "discardsInvalidObjectsOnInsert": true, "archive": ["days": .number(JSONNumber(days))]]
    }

    private static let pages: [JSONValue] = [
        ["items": [["number": 1, "title": "one", "state": "open"], ["title": "lost", "state": "open"]]],
        ["items": [["number": 2, "title": "two", "state": "closed"]]],
    ]

    private static func replay(_ api: ModelAPI, _ range: JSONValue, query: String = "") throws -> RawResponse {
        try api.client.send("POST", api.base + "/mappings/issues/replay" + query, headers: [("Content-Type", "application/json")],
                            body: range.jsonBytes, token: api.key)
    }

    @Test func R_P18_theArchiveIsListedFetchedAndReplayedThroughTheRealServer() throws {
        try ModelAPI.with(model: Self.model, mappings: ["issues": Self.mapping(stateKey: "status")], live: true) { (api) throws in
            var ids: [Int64] = []
            for page in Self.pages {
                let response = try api.post("issues", page, headers: [("X-Fetched-By", "octo-fetcher")])
                try #require(response.status == 200, "\(response.text)")
                let answer = try response.json()
                ids.append(try #require(answer["archive"]?["id"]?.numberValue?.int64Value, "\(answer)"))
            }
            let listed = try api.get("mappings/issues/archive?limit=1")
            #expect(listed["items"]?.arrayValue?.count == 1)
            #expect(listed["items"]?[0]?["id"]?.numberValue?.int64Value == ids[0])
            #expect(listed["items"]?[0]?["bytes"]?.numberValue?.int64Value == Int64(Self.pages[0].jsonBytes.count))
            #expect(listed["items"]?[0]?["metadata"]?["header"]?["x-fetched-by"] == "octo-fetcher")
            #expect(listed["next"]?.numberValue?.int64Value == ids[0])
            let rest = try api.get("mappings/issues/archive?after=\(ids[0])")
            #expect(rest["items"]?.arrayValue?.compactMap { $0["id"]?.numberValue?.int64Value } == [ids[1]])
            #expect(rest["next"] == .null)

            let body = try api.client.send("GET", api.base + "/mappings/issues/archive/\(ids[0])", token: api.key)
            #expect(body.status == 200)
            #expect(try JSONReader().parse(body.body) == Self.pages[0], "the body as it was posted")
            #expect(try api.client.send("GET", api.base + "/mappings/issues/archive/999999", token: api.key).status == 404)

            let letters = try api.get("mappings/issues/dead-letters")
            #expect(letters["items"]?.arrayValue?.count == 1)
            #expect(letters["items"]?[0]?["pointer"] == "/items/1")
            #expect(letters["items"]?[0]?["archiveId"]?.numberValue?.int64Value == ids[0])
            #expect(letters["items"]?[0]?["representation"] == ["title": "lost", "state": "open"])

            /// The change feed's head: where the next entry goes.
            func feedHead() throws -> Int64? { try api.get("changes?since=0&limit=1000")["next"]?.numberValue?.int64Value }
            let head = try #require(try feedHead())
            let range: JSONValue = ["from": .number(JSONNumber(ids[0])), "to": .number(JSONNumber(ids[1]))]
            let unchanged = try Self.replay(api, range)
            #expect(unchanged.status == 200, "\(unchanged.text)")
            let unchangedAnswer = try unchanged.json()
            #expect(unchangedAnswer["updated"] == 0)
            #expect(unchangedAnswer["inserted"] == 0)
            #expect(unchangedAnswer["unchanged"] == 2)
            #expect(try feedHead() == head, "replaying an unchanged mapping writes no change-feed entry")

            let fixed = try api.client.sendJSON("PUT", api.base + "/mappings/issues", Self.mapping(stateKey: "state"), token: api.key)
            #expect(fixed.status == 200)
            let dry = try Self.replay(api, range, query: "?dryRun=true").json()
            #expect(dry["dryRun"] == true)
            #expect(dry["updated"] == 2)
            #expect(dry["replayed"]?[0]?["changes"] == [["pointer": "/items/0", "entity": "Issue", "key": 1, "action": "update"]])
            #expect(try api.object("Issue", "1")["state"] == .null, "a dry run stores nothing")

            let replayed = try Self.replay(api, range).json()
            #expect(replayed["updated"] == 2)
            #expect(replayed["next"] == .null, "the whole range within the time limit")
            #expect(replayed["replayed"]?.arrayValue?.compactMap { $0["archiveId"]?.numberValue?.int64Value } == ids)
            #expect(replayed["replayed"]?[1]?["changeSeq"]?.numberValue != nil)
            #expect(try api.object("Issue", "1")["state"] == "open")
            #expect(try api.object("Issue", "2")["state"] == "closed")
            #expect(try feedHead() == head + 2, "one entry per corrected issue")
            #expect(try api.get("mappings/issues/archive")["items"]?.arrayValue?.count == 2, "a replay is not archived again")

            let backwards = try Self.replay(api, ["from": .number(JSONNumber(ids[1])), "to": .number(JSONNumber(ids[0]))])
            #expect(backwards.status == 422)
            #expect(try backwards.json()["errors"]?[0]?["pointer"] == "/to")
            let wrong = try Self.replay(api, ["from": "one", "to": .number(JSONNumber(validatedText: "1.5")), "dry": true])
            #expect(wrong.status == 422)
            let pointers = try wrong.json()["errors"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } ?? []
            #expect(Set(pointers) == ["/from", "/to", "/dry"])
        }
    }

    @Test func R_P18_aReplayOfAnExpiredRangeIs404NamingWhatRemains() throws {
        let clock = TestClock()
        try ModelAPI.with(model: Self.model, mappings: ["issues": Self.mapping(stateKey: "status", days: 1)], clock: clock.clock) { (api) throws in
            let first = try #require(try api.map("issues", Self.pages[0])["archive"]?["id"]?.numberValue?.int64Value)
            clock.advance(hours: 12)
            let second = try #require(try api.map("issues", Self.pages[1])["archive"]?["id"]?.numberValue?.int64Value)
            clock.advance(hours: 13)
            let expired = try Self.replay(api, ["from": .number(JSONNumber(first)), "to": .number(JSONNumber(second))])
            #expect(expired.status == 404)
            let problem = try expired.json()
            #expect(problem["detail"]?.stringValue?.contains("archived payload \(second) remains") == true, "\(problem)")
            #expect(problem["errors"]?[0]?["pointer"] == "/from")
            #expect(try api.client.send("GET", api.base + "/mappings/issues/archive/\(first)", token: api.key).status == 404)
            #expect(try api.get("mappings/issues/dead-letters")["items"] == [], "its dead letter expired with it")

            let plain = try api.client.sendJSON("PUT", api.base + "/mappings/plain", ["entity": "Issue", "attributes": ["number"]], token: api.key)
            #expect(plain.status == 201)
            #expect(try api.client.send("GET", api.base + "/mappings/plain/archive", token: api.key).status == 404)
        }
    }
}

fileprivate extension JSONValue {
    /// The element at `index` of an array; nil for anything else.
    subscript(index: Int) -> JSONValue? { arrayValue.flatMap { $0.indices.contains(index) ? $0[index] : nil } }
}
