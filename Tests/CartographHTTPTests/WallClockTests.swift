// Issue 31, one clock: the server is given a clock that stands at a known instant, and every time it
// stamps reads that clock — a tenant's key's `createdAt`, a payload's `@metadata.receivedAt` (R-P1), a
// tombstone's `deletedAt` (R-D3). A `Date()` left on any of these paths would stamp the real time instead.
import Foundation
import Testing
import CartographCore
import CartographTesting

struct WallClockTests {
    static let model: JSONValue = ["entities": [
        ["name": "Note", "userInfo": ["identityAttributes": "id"],
         "attributes": [["name": "id", "type": "integer64"], ["name": "receivedAt", "type": "string"]]],
    ]]
    static let mapping: JSONValue = ["entity": "Note", "keyPath": "notes", "attributes": ["id": "id", "@metadata.receivedAt": "receivedAt"]]

    @Test func R_P1_R_D3_everyTimeTheServerStampsIsReadFromItsClock() throws {
        // 2025-06-01T12:00:00Z
        let time = TestClock(at: Date(timeIntervalSince1970: 1_748_779_200))
        try ModelAPI.with(model: Self.model, mappings: ["notes": Self.mapping], clock: time.clock) { api in
            let keys = try api.client.send("GET", "/v1/tenants/acme/keys", token: api.key).json()["items"]?.arrayValue ?? []
            #expect(keys.map { $0["createdAt"] } == ["2025-06-01T12:00:00.000Z"], "the tenant's first key")

            time.advance(hours: 1)
            try api.map("notes", ["notes": [["id": 1]]])
            #expect(try api.object("Note", "1")["receivedAt"] == "2025-06-01T13:00:00.000Z")

            time.advance(hours: 1)
            #expect(try api.client.send("DELETE", api.base + "/entities/Note/objects/1", token: api.key).status == 204)
            let tombstone = try #require(try api.changes().last)
            #expect(tombstone["op"] == "delete")
            #expect(tombstone["deletedAt"] == "2025-06-01T14:00:00.000Z")
        }
    }
}
