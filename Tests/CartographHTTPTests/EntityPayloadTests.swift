// The entity payload route (`POST …/entities/{entity}/payloads`, R-P10) on API data that changes under
// its clients: GitHub's events, an abstract `Event` whose entity mapper knows some `type`s.
import Testing
import CartographCore
import CartographTesting

@Suite struct EntityPayloadTests {
    /// `Event` (abstract) chooses `PushEvent` or `WatchEvent` by `type`; each event has an `Actor`, whose `login` is required.
    static let model: JSONValue = [
        "entities": [
            ["name": "Event", "abstract": true, "userInfo": ["identityAttributes": "id", "entityMapperName": "events"],
             "attributes": [["name": "id", "type": "integer64"]],
             "relationships": [["name": "actor", "destination": "Actor"]]],
            ["name": "PushEvent", "parent": "Event", "attributes": [["name": "size", "type": "integer64", "userInfo": ["JSONKeyPath": "payload.size"]]]],
            ["name": "WatchEvent", "parent": "Event"],
            ["name": "Actor", "userInfo": ["identityAttributes": "id"],
             "attributes": [["name": "id", "type": "integer64"], ["name": "login", "type": "string", "optional": false]]],
        ],
        "entityMappers": ["events": ["keyPath": "type", "map": ["PushEvent": "PushEvent", "WatchEvent": "WatchEvent"]]],
        "options": ["mapUnannotatedByName": true],
    ]

    /// A page of events: a push, a type the mapper does not know yet, a watch by an actor without a login.
    static let page: JSONValue = [
        ["id": 1, "type": "PushEvent", "payload": ["size": 3], "actor": ["id": 10, "login": "octocat"]],
        ["id": 2, "type": "SponsorshipEvent", "actor": ["id": 10, "login": "octocat"]],
        ["id": 3, "type": "WatchEvent", "actor": ["id": 11]],
    ]

    @Test func R_P8_discardInvalidOnTheEntityRouteDropsInvalidNewObjectsAtEveryLevel() throws {
        try ModelAPI.with(model: Self.model) { api in
            let failed = try api.post("/entities/Event/payloads", Self.page)
            #expect(failed.status == 422, "without discardInvalid one unknown type fails the page")
            #expect(try api.get("entities/Event/objects")["items"] == [])

            let result = try api.map("/entities/Event/payloads", Self.page, query: "?discardInvalid=true")
            #expect(result["inserted"] == 3, "event 1, its actor, event 3")
            let discarded = result["discarded"]?.arrayValue ?? []
            #expect(discarded.compactMap { $0["pointer"]?.stringValue }.sorted() == ["/1", "/2/actor"])
            #expect(discarded.first { $0["pointer"] == "/1" }?["entity"] == "Event")
            #expect(try api.object("PushEvent", "1")["size"] == 3)
            #expect(try api.object("PushEvent", "1")["actor"] == 10)
            #expect(try api.object("WatchEvent", "3")["actor"] == .null, "the invalid actor was left out, not linked")
            #expect(try api.get("entities/Actor/objects?count=true")["total"] == 1)
            #expect(try api.post("/entities/Event/payloads", Self.page, query: "?discardInvalid=maybe").status == 400)
        }
    }
}
