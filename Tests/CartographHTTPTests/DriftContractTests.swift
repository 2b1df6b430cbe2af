// Schema drift and contracts (R-P17, docs/mapping.md "Drift and contracts"): a payload's answer lists
// the keys its mapping did not read and the values of another JSON type than their attribute takes,
// one entry per path; the mapping's `contract` keeps (`evolve`), refuses (`freeze`) or drops
// (`discardObject`) what drifts.
import Foundation
import Testing
import CartographCore
import CartographTesting

struct DriftContractTests {
    private static let model: JSONValue = ["entities": [
        ["name": "Issue", "userInfo": ["identityAttributes": "number"],
         "attributes": [["name": "number", "type": "integer64"], ["name": "title", "type": "string"], ["name": "login", "type": "string"]],
         "relationships": [["name": "labels", "destination": "Label", "toMany": true, "inverse": "issues"]]],
        ["name": "Label", "userInfo": ["identityAttributes": "name"], "attributes": [["name": "name", "type": "string"]],
         "relationships": [["name": "issues", "destination": "Issue", "toMany": true, "inverse": "labels"]]],
    ]]

    private static func mapping(_ contract: String?, labels: String? = nil) -> JSONValue {
        var labelMapping: JSONValue = ["entity": "Label", "attributes": ["name"]]
        if let labels { labelMapping = ["entity": "Label", "attributes": ["name"], "contract": .string(labels)] }
        var document = JSONObject([("entity", "Issue"), ("keyPath", "items"),
                                   ("attributes", ["number": "number", "title": "title", "user.login": "login"]),
                                   ("relationships", [["from": "labels", "to": "labels", "mapping": labelMapping]])])
        if let contract { document["contract"] = .string(contract) }
        return .object(document)
    }

    private static let drifting: JSONValue = ["items": [
        ["number": 1, "title": "one", "user": ["login": "ann", "avatar": "a.png"], "labels": [["name": "bug", "color": "red"]], "state": "open"],
        ["number": 2, "title": 22, "user": ["login": "bob"], "labels": []],
        ["number": 3, "title": "three", "user": ["login": "cid", "avatar": "c.png"], "labels": [["name": "bug", "color": "red"]], "state": "closed"],
    ]]

    @Test func R_P17_theAnswerListsEachPathThatDriftedOnceWithItsFirstPointerAndCount() throws {
        try ModelAPI.with(model: Self.model, mappings: ["issues": Self.mapping(nil)]) { (api) throws in
            let answer = try api.map("issues", Self.drifting)
            #expect(answer["inserted"] == 4)
            #expect(answer["drift"] == [
                ["path": "/items/*/user/avatar", "kind": "unread", "example": "/items/0/user/avatar", "count": 2],
                ["path": "/items/*/state", "kind": "unread", "example": "/items/0/state", "count": 2],
                ["path": "/items/*/labels/*/color", "kind": "unread", "example": "/items/0/labels/0/color", "count": 2],
                ["path": "/items/*/title", "kind": "type", "expected": "string", "found": "number", "example": "/items/1/title", "count": 1],
            ])
            #expect(try api.object("Issue", "2")["title"] == "22", "evolve stores what drifted")
            // A payload that reads every key it holds has no drift member.
            let clean = try api.map("issues", ["items": [["number": 4, "title": "four", "user": ["login": "dan"], "labels": []]]])
            #expect(clean["drift"] == nil)
        }
    }

    @Test func R_P17_freezeRefusesADriftingPayloadNamingEachDriftAndStoresNothing() throws {
        try ModelAPI.with(model: Self.model, mappings: ["issues": Self.mapping("freeze")]) { (api) throws in
            let refused = try api.post("issues", Self.drifting)
            #expect(refused.status == 422)
            let pointers = try refused.json()["errors"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } ?? []
            #expect(Set(pointers) == ["/items/0/user/avatar", "/items/0/state", "/items/1/title", "/items/2/user/avatar", "/items/2/state"])
            #expect(try api.get("entities/Issue/objects?count=true")["total"] == 0)
            // The labels' mapping evolves: their unread color is not the issues' contract's business.
            #expect(!pointers.contains("/items/0/labels/0/color"))
            #expect(try api.map("issues", ["items": [["number": 4, "title": "four", "user": ["login": "dan"]]]])["inserted"] == 1)
        }
    }

    @Test func R_P17_discardObjectDropsNewDriftingObjectsAndLeavesStoredOnesAsTheyAre() throws {
        try ModelAPI.with(model: Self.model, mappings: ["issues": Self.mapping("discardObject"), "plain": Self.mapping(nil)]) { (api) throws in
            try api.map("plain", ["items": [["number": 3, "title": "stored", "user": ["login": "cid"]]]])
            let answer = try api.map("issues", Self.drifting)
            #expect(answer["discarded"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } == ["/items/0", "/items/1"])
            #expect(answer["discarded"]?.arrayValue?.first?["errors"]?.arrayValue?.first?["pointer"] == "/items/0/user/avatar")
            #expect(try api.get("entities/Issue/objects?count=true")["total"] == 1, "only the stored issue")
            #expect(try api.object("Issue", "3")["title"] == "stored", "a stored object that drifts is not updated")
            #expect(answer["drift"]?.arrayValue?.count == 4, "what drifted is listed as under evolve")
        }
    }

    @Test func R_P17_aNestedMappingsContractGovernsItsOwnRepresentations() throws {
        try ModelAPI.with(model: Self.model, mappings: ["issues": Self.mapping(nil, labels: "freeze")]) { (api) throws in
            let refused = try api.post("issues", Self.drifting)
            #expect(refused.status == 422)
            let pointers = try refused.json()["errors"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } ?? []
            #expect(pointers == ["/items/0/labels/0/color", "/items/2/labels/0/color"])
        }
    }

    @Test func R_P17_anUnknownContractIsRefusedAtItsPointer() throws {
        try ModelAPI.with(model: Self.model) { (api) throws in
            let refused = try api.client.sendJSON("PUT", api.base + "/mappings/issues", Self.mapping("strict"), token: api.key)
            #expect(refused.status == 422)
            #expect(try refused.json()["errors"]?.arrayValue?.first?["pointer"] == "/contract")
            let nested = try api.client.sendJSON("PUT", api.base + "/mappings/issues", Self.mapping(nil, labels: "loose"), token: api.key)
            #expect(try nested.json()["errors"]?.arrayValue?.first?["pointer"] == "/relationships/0/mapping/contract")
        }
    }

    @Test func R_P17_aMappingKeepsWhatItsCommittedPayloadsDriftedUntilItChanges() throws {
        let clock = TestClock(at: Date(timeIntervalSince1970: 1_780_000_000))
        try ModelAPI.with(model: Self.model, mappings: ["issues": Self.mapping(nil)], clock: clock.clock) { (api) throws in
            let kept = { () throws -> [JSONValue] in try api.get("mappings/issues/drift")["drift"]?.arrayValue ?? [] }
            #expect(try kept().isEmpty)
            try api.map("issues", Self.drifting)
            clock.advance(hours: 1)
            try api.map("issues", ["items": [["number": 5, "title": "five", "user": ["login": "eve"], "state": "open"]]])
            // A dry run and a refused payload keep nothing.
            try api.map("issues", ["items": [["number": 6, "title": "six", "user": ["login": "fay"], "milestone": 1]]], query: "?dryRun=true")
            #expect(try api.post("issues", ["items": [["number": "seven", "title": "x", "user": ["login": "gus"], "milestone": 2]]]).status == 422)
            let drift = try kept()
            #expect(drift.map { $0["path"] } == ["/items/*/labels/*/color", "/items/*/state", "/items/*/title", "/items/*/user/avatar"])
            let state = try #require(drift.first { $0["path"] == "/items/*/state" })
            #expect(state["count"] == 3 && state["kind"] == "unread" && state["example"] == "/items/0/state")
            #expect(state["firstSeen"] == "2026-05-28T20:26:40.000Z" && state["lastSeen"] == "2026-05-28T21:26:40.000Z")
            #expect(drift.first { $0["path"] == "/items/*/title" }?["expected"] == "string")
            // Registered again with another document, the mapping starts over; an unknown mapping is 404.
            let reading: JSONValue = ["entity": "Issue", "keyPath": "items", "attributes": ["number", "title"]]
            #expect(try api.client.sendJSON("PUT", api.base + "/mappings/issues", reading, token: api.key).status == 200)
            #expect(try kept().isEmpty)
            #expect(try api.client.send("GET", api.base + "/mappings/nothing/drift", token: api.key).status == 404)
        }
    }
}
