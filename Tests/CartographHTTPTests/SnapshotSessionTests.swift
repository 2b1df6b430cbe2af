// Snapshot sessions (R-D5 across pages, docs/mapping.md "Snapshot sessions"): a listing sent as pages
// with `?snapshot=<token>`, each committed as it comes, then completed (deleting what no page
// mentioned) or abandoned; sessions unused for 24 hours expire, deleting nothing.
import Foundation
import Testing
import CartographCore
import CartographTesting

@Suite(.serialized) struct SnapshotSessionTests {
    static func mapping(scope: String = "orgID == 1", maxDeletes: Int = 10) -> JSONValue {
        projectsMapping([("deleteMissing", ["scope": .string(scope), "maxDeletes": .number(JSONNumber(maxDeletes))])], connections: [])
    }

    static func projects(_ ids: [Int], org: Int = 1) -> JSONValue {
        ["projects": .array(ids.map { ["id": .number(JSONNumber($0)), "org": .number(JSONNumber(org))] })]
    }

    @Test func R_D5_aSnapshotSessionAcrossPagesDeletesOnlyWhatNoPageMentioned() throws {
        try ModelAPI.with(model: connectionsModel, mappings: ["projects": Self.mapping()]) { api in
            try api.map("projects", ["projects": [["id": 1, "org": 1], ["id": 2, "org": 1], ["id": 3, "org": 1], ["id": 4, "org": 1],
                                                  ["id": 5, "org": 1, "tasks": [["id": 50]]], ["id": 9, "org": 2]]])
            for page in [[1, 2], [3], [6]] {
                #expect(try api.map("projects", Self.projects(page), query: "?snapshot=listing-1")["deleted"] == 0, "a page deletes nothing")
            }
            #expect(try api.projectIDs() == [1, 2, 3, 4, 5, 6, 9], "each page was committed as it came (project 6 is stored)")

            let dryRun = try api.completeSnapshot("listing-1", query: "?dryRun=true")
            #expect(dryRun.status == 200, "\(dryRun.text)")
            #expect(try dryRun.json()["deleted"] == 3 && dryRun.json()["changeSeq"] == .null)
            #expect(try api.projectIDs() == [1, 2, 3, 4, 5, 6, 9], "a dry run deletes nothing")

            let completed = try api.completeSnapshot("listing-1")
            #expect(completed.status == 200, "\(completed.text)")
            let result = try completed.json()
            #expect(result["deleted"] == 3, "projects 4 and 5 and project 5's task (cascade)")
            #expect(result["inserted"] == 0 && result["updated"] == 0 && result["changeSeq"]?.numberValue != nil)
            #expect(try api.projectIDs() == [1, 2, 3, 6, 9], "project 9 is outside the scope")
            #expect(try api.tombstones() == ["Project/4", "Project/5", "Task/50"])
            #expect(try api.completeSnapshot("listing-1").status == 404, "a completed session is gone")
        }
    }

    @Test func R_D5_aSessionPastMaxDeletesIs409AndDeletesNothing() throws {
        try ModelAPI.with(model: connectionsModel, mappings: ["projects": Self.mapping(maxDeletes: 1)]) { api in
            try api.map("projects", ["projects": [["id": 1, "org": 1], ["id": 2, "org": 1, "tasks": [["id": 20]]], ["id": 3, "org": 1]]])
            try api.map("projects", Self.projects([1]), query: "?snapshot=s")
            for query in ["", "?dryRun=true"] {
                let refused = try api.completeSnapshot("s", query: query)
                #expect(refused.status == 409, "\(query): \(refused.text)")
                #expect(try refused.json()["detail"]?.stringValue?.contains("would delete 3 objects") == true, "\(refused.text)")
            }
            #expect(try api.projectIDs() == [1, 2, 3])
            #expect(try api.tombstones() == [])
            #expect(try api.abandonSnapshot("s").status == 204, "the refused session was kept")
        }
    }

    @Test func R_D5_anAbandonedSessionDeletesNothing() throws {
        try ModelAPI.with(model: connectionsModel, mappings: ["projects": Self.mapping()]) { api in
            try api.map("projects", Self.projects([1, 2, 3]))
            try api.map("projects", Self.projects([1, 4]), query: "?snapshot=s")
            #expect(try api.abandonSnapshot("s").status == 204)
            #expect(try api.completeSnapshot("s").status == 404)
            #expect(try api.abandonSnapshot("s").status == 404)
            #expect(try api.projectIDs() == [1, 2, 3, 4], "the page stays, nothing is deleted")
            #expect(try api.tombstones() == [])
        }
    }

    @Test func R_D5_anUnknownSessionIs404() throws {
        try ModelAPI.with(model: connectionsModel, mappings: ["projects": Self.mapping()]) { api in
            try api.map("projects", Self.projects([1]))
            #expect(try api.completeSnapshot("never-begun").status == 404)
            #expect(try api.abandonSnapshot("never-begun").status == 404)
            #expect(try api.completeSnapshot("s", mapping: "absent").status == 404)
            try api.map("projects", Self.projects([1]), query: "?snapshot=s")
            #expect(try api.completeSnapshot("S").status == 404, "tokens are case-sensitive")
            #expect(try api.projectIDs() == [1])
        }
    }

    @Test func R_D5_aSessionUnusedFor24HoursExpiresDeletingNothing() throws {
        let clock = TestClock()
        try ModelAPI.with(model: connectionsModel, mappings: ["projects": Self.mapping()], clock: clock.clock) { api in
            try api.map("projects", Self.projects([1, 2, 3]))
            try api.map("projects", Self.projects([1]), query: "?snapshot=stale")
            try api.map("projects", Self.projects([1]), query: "?snapshot=alive")
            clock.advance(hours: 23)
            try api.map("projects", Self.projects([2]), query: "?snapshot=alive")
            clock.advance(hours: 1.01)
            #expect(try api.completeSnapshot("stale").status == 404, "unused for 24 hours")
            #expect(try api.projectIDs() == [1, 2, 3], "an expired session deletes nothing")
            #expect(try api.completeSnapshot("alive").status == 200, "a page 1 hour ago kept this one")
            #expect(try api.projectIDs() == [1, 2])
        }
    }

    @Test func R_D5_aMalformedSnapshotTokenIs400() throws {
        try ModelAPI.with(model: connectionsModel, mappings: ["projects": Self.mapping()]) { api in
            for token in ["", "a%20b", "a/b", String(repeating: "t", count: 129), "%C3%A9"] {
                let page = try api.post("projects", Self.projects([1]), query: "?snapshot=\(token.replacingOccurrences(of: "/", with: "%2F"))")
                #expect(page.status == 400, "\(token): \(page.text)")
                #expect(try page.json()["errors"]?.arrayValue?.first?["pointer"] == "/snapshot")
            }
            #expect(try api.completeSnapshot("a%20b").status == 400)
            #expect(try api.abandonSnapshot(String(repeating: "t", count: 129)).status == 400)
            #expect(try api.projectIDs() == [], "no page was stored")
            #expect(try api.map("projects", Self.projects([1]), query: "?snapshot=\(String(repeating: "t", count: 128))")["inserted"] == 1)
            #expect(try api.map("projects", Self.projects([2]), query: "?snapshot=A-z_0.9~")["inserted"] == 1)
        }
    }

    @Test func R_D5_aMappingWithoutDeleteMissingRefusesSnapshotPagesWith422() throws {
        try ModelAPI.with(model: connectionsModel, mappings: ["projects": projectsMapping(connections: [])]) { api in
            let page = try api.post("projects", Self.projects([1]), query: "?snapshot=s")
            #expect(page.status == 422, "\(page.text)")
            #expect(try page.json()["detail"] == "Mapping 'projects' has no deleteMissing, so it takes no snapshot sessions: post the payload without ?snapshot=.")
            #expect(try api.projectIDs() == [], "the page was not stored")
        }
    }

    @Test func R_D5_aDryRunPageRecordsNothing() throws {
        try ModelAPI.with(model: connectionsModel, mappings: ["projects": Self.mapping()]) { api in
            try api.map("projects", Self.projects([1, 2]))
            #expect(try api.map("projects", Self.projects([1]), query: "?snapshot=s&dryRun=true")["dryRun"] == true)
            #expect(try api.completeSnapshot("s").status == 404, "the dry run began no session")
            #expect(try api.projectIDs() == [1, 2])
        }
    }

    @Test func R_D5_twoSessionsOfOneMappingAreIndependent() throws {
        try ModelAPI.with(model: connectionsModel, mappings: ["projects": Self.mapping()]) { api in
            try api.map("projects", Self.projects([1, 2, 3]))
            try api.map("projects", Self.projects([1, 2]), query: "?snapshot=a")
            try api.map("projects", Self.projects([1, 3]), query: "?snapshot=b")
            #expect(try api.completeSnapshot("a").json()["deleted"] == 1, "b's mention of project 3 does not keep it for a")
            #expect(try api.projectIDs() == [1, 2])
            #expect(try api.completeSnapshot("b").json()["deleted"] == 1, "a's mention of project 2 does not keep it for b")
            #expect(try api.projectIDs() == [1])
            #expect(try api.tombstones() == ["Project/2", "Project/3"])
        }
    }

    @Test func R_D5_aSessionNeverCompletesUnderAnotherScope() throws {
        try ModelAPI.with(model: connectionsModel, mappings: ["projects": Self.mapping()]) { api in
            try api.map("projects", ["projects": [["id": 1, "org": 1], ["id": 2, "org": 1], ["id": 3, "org": 2]]])
            try api.map("projects", Self.projects([1]), query: "?snapshot=s")
            try api.putMapping("projects", Self.mapping(scope: "orgID == 2"))
            let changed = try api.completeSnapshot("s")
            #expect(changed.status == 409, "\(changed.text)")
            #expect(try changed.json()["detail"]?.stringValue?.contains("changed since snapshot session 's' began") == true)
            #expect(try api.post("projects", Self.projects([3], org: 2), query: "?snapshot=s").status == 409, "nor takes pages under it")
            #expect(try api.projectIDs() == [1, 2, 3])

            // Deleting the mapping drops its sessions: one registered again under the name starts with none.
            #expect(try api.client.send("DELETE", api.base + "/mappings/projects", token: api.key).status == 204)
            try api.putMapping("projects", Self.mapping())
            #expect(try api.completeSnapshot("s").status == 404)
            #expect(try api.projectIDs() == [1, 2, 3])
        }
    }
}

extension ModelAPI {
    func completeSnapshot(_ token: String, mapping: String = "projects", query: String = "") throws -> RawResponse {
        try client.send("POST", base + "/mappings/\(mapping)/snapshots/\(token)/complete" + query, token: key)
    }

    func abandonSnapshot(_ token: String, mapping: String = "projects") throws -> RawResponse {
        try client.send("DELETE", base + "/mappings/\(mapping)/snapshots/\(token)", token: key)
    }

    func putMapping(_ name: String, _ document: JSONValue) throws {
        let response = try client.sendJSON("PUT", base + "/mappings/" + name, document, token: key)
        try #require((200..<300).contains(response.status), "\(response.text)")
    }

    /// The stored projects' ids, ascending.
    func projectIDs() throws -> [Int] {
        try get("entities/Project/objects?orderBy=projectID&limit=1000")["items"]?.arrayValue?.compactMap { $0["projectID"]?.numberValue.flatMap { Int($0.text) } } ?? []
    }

    /// `Entity/key` of every tombstone in the change feed, sorted.
    func tombstones() throws -> [String] {
        try changes().filter { $0["op"] == "delete" }.map { "\($0["entity"]?.stringValue ?? "")/\($0["key"]?.jsonText ?? "")" }.sorted()
    }
}
