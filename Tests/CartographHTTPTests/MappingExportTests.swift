// R-Q4 `shape=json` on entities no annotation describes, and `mapping=<name>`: export through a
// registered mapping's inverse, in process (the store's graph and the query parameters).
import Testing
import CartographCore
import CartographTesting

@Suite struct MappingExportTests {
    /// Unannotated events: an event has an actor and labels.
    static let model: JSONValue = [
        "entities": [
            ["name": "Event", "attributes": [["name": "id", "type": "integer64"], ["name": "kind", "type": "string"]],
             "relationships": [["name": "actor", "destination": "Actor"], ["name": "labels", "destination": "Label", "toMany": true]]],
            ["name": "Actor", "attributes": [["name": "id", "type": "integer64"], ["name": "login", "type": "string"]]],
            ["name": "Label", "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"]]],
        ],
    ]
    static let events: JSONValue = [
        "entity": "Event", "attributes": ["id": "id", "type": "kind"],
        "relationships": [
            ["from": "actor", "to": "actor", "mapping": ["entity": "Actor", "attributes": ["id": "id", "display.login": "login"]]],
            ["from": "label_ids", "to": "labels", "mapping": ["entity": "Label", "attributes": ["id"]]],
        ],
    ]
    static let actors: JSONValue = ["entity": "Actor", "attributes": ["id", "login"]]
    static let payload: JSONValue = [["id": 1, "type": "Push", "actor": ["id": 10, "display": ["login": "octocat"]], "label_ids": [20, 21]]]

    @Test func R_Q4_shapeJSONOnAnEntityNoAnnotationDescribesIs400UnlessAMappingIsGiven() throws {
        try ModelAPI.with(model: Self.model, mappings: ["events": Self.events, "actors": Self.actors]) { api in
            try api.map("events", Self.payload)
            let refused = try api.client.send("GET", api.base + "/entities/Event/objects?shape=json", token: api.key)
            #expect(refused.status == 400)
            let problem = try refused.json()
            #expect(problem["detail"]?.stringValue?.contains("no attribute or relationship of 'Event'") == true, "\(refused.text)")
            #expect(problem["errors"]?.arrayValue?.first?["pointer"] == "/shape")

            let page = try api.get("entities/Event/objects?shape=json&mapping=events")
            #expect(page["items"] == [["id": 1, "type": "Push", "actor": ["id": 10, "display": ["login": "octocat"]], "label_ids": [20, 21]]],
                    "the payload comes back as it was posted")
            #expect(try api.get("entities/Event/objects/1?shape=json&mapping=events") == page["items"]?.arrayValue?.first)
            let queried = try api.client.sendJSON("POST", api.base + "/entities/Event/query", ["shape": "json", "mapping": "events"], token: api.key)
            #expect(try queried.json()["items"] == page["items"])
            // Posting the export back changes nothing.
            #expect(try api.map("events", page["items"] ?? []) ["updated"] == 0)
        }
    }

    @Test func R_Q4_aMappingThatCannotExportTheEntityIsRefused() throws {
        try ModelAPI.with(model: Self.model, mappings: ["events": Self.events, "actors": Self.actors]) { api in
            try api.map("events", Self.payload)
            func status(_ query: String) throws -> (Int, JSONValue) {
                let response = try api.client.send("GET", api.base + "/entities/Event/objects" + query, token: api.key)
                return (response.status, try response.json())
            }
            let (otherEntity, otherProblem) = try status("?shape=json&mapping=actors")
            #expect(otherEntity == 400)
            #expect(otherProblem["errors"]?.arrayValue?.first?["pointer"] == "/mapping")
            #expect(try status("?shape=json&mapping=evnts").0 == 404)
            #expect(try status("?mapping=events").0 == 400, "mapping without shape=json")
        }
    }
}
