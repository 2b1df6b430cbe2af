// What real API data needed of the mapping (issue 16, docs/mapping.md "Decisions from real API data"):
// event streams that are newest-first, to-many arrays that repeat a destination, labels shared by many
// issues, and payloads of the wrong shape. In process: no socket is needed.
import Foundation
import Testing
import CartographCore
import CartographTesting

/// GitHub's issues and labels, as their API sends them.
let issuesModel: JSONValue = ["entities": [
    ["name": "Issue",
     "attributes": [["name": "id", "type": "integer64"], ["name": "state", "type": "string"], ["name": "updatedAt", "type": "date"]],
     "relationships": [["name": "labels", "destination": "Label", "toMany": true, "inverse": "issues"],
                       ["name": "milestone", "destination": "Milestone", "inverse": "issues"]]],
    ["name": "Label", "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"]],
     "relationships": [["name": "issues", "destination": "Issue", "toMany": true, "inverse": "labels"]]],
    ["name": "Milestone", "attributes": [["name": "id", "type": "integer64"], ["name": "title", "type": "string"]],
     "relationships": [["name": "issues", "destination": "Issue", "toMany": true, "inverse": "milestone"]]],
]]

func issuesMapping(labels policy: String = "set", milestone milestonePolicy: String = "set") -> JSONValue {
    ["entity": "Issue", "keyPath": "issues", "modificationAttribute": "updatedAt",
     "attributes": ["id": "id", "state": "state", "updated_at": ["to": "updatedAt", "transformer": "ISO8601ToDate"]],
     "relationships": [
        ["from": "labels", "to": "labels", "assignmentPolicy": .string(policy), "mapping": ["entity": "Label", "attributes": ["id", "name"]]],
        ["from": "milestone", "to": "milestone", "assignmentPolicy": .string(milestonePolicy),
         "mapping": ["entity": "Milestone", "attributes": ["id", "title"]]],
     ]]
}

func issue(_ id: Int, _ state: String = "open", updated: String = "2018-02-19T19:49:14Z", labels: [Int] = [], milestone: Int? = nil) -> JSONValue {
    var object = JSONObject([("id", .number(JSONNumber(Int64(id)))), ("state", .string(state)), ("updated_at", .string(updated)),
                             ("labels", .array(labels.map { JSONValue.object(JSONObject([("id", .number(JSONNumber(Int64($0)))), ("name", .string("label \($0)"))])) }))])
    if let milestone { object["milestone"] = .object(JSONObject([("id", .number(JSONNumber(Int64(milestone)))), ("title", .string("v\(milestone)"))])) }
    return .object(object)
}

@Suite struct RealAPIMappingTests {
    @Test func R_I5_R_P7_theNewestCopyInOnePayloadWinsWhateverItsPosition() throws {
        try ModelAPI.with(model: issuesModel, mappings: ["issues": issuesMapping()]) { api in
            // GitHub's event stream: newest first.
            let result = try api.map("issues", ["issues": [issue(784, "closed", updated: "2018-02-24T18:11:57Z", labels: [1]),
                                                            issue(784, "open", updated: "2018-02-19T19:49:14Z", labels: [1, 2]),
                                                            issue(785, "open", updated: "2018-02-01T00:00:00Z"),
                                                            issue(785, "closed", updated: "2018-02-02T00:00:00Z")]])
            #expect(result["inserted"] == 3, "784, 785 and label 1: the older copy's label 2 is not mapped: \(result)")
            let newestFirst = try api.object("Issue", "784")
            #expect(newestFirst["state"] == "closed")
            #expect(newestFirst["labels"] == [1], "the older copy's relationships are not mapped either")
            #expect(try api.object("Issue", "785")["state"] == "closed", "oldest first: the later, newer copy wins")
            #expect(try api.get("entities/Label/objects?count=true")["total"] == 1)
        }
    }

    @Test func R_I5_withoutAModificationAttributeTheLaterCopyWins() throws {
        var mapping = try #require(issuesMapping().objectValue)
        mapping["modificationAttribute"] = nil
        try ModelAPI.with(model: issuesModel, mappings: ["issues": .object(mapping)]) { api in
            try api.map("issues", ["issues": [issue(784, "closed", updated: "2018-02-24T18:11:57Z"), issue(784, "open")]])
            #expect(try api.object("Issue", "784")["state"] == "open")
        }
    }

    @Test func R_P6_aToManyNamingOneDestinationTwiceHoldsItOnceAndAReloadIsUnchanged() throws {
        // Without a modificationAttribute every copy is compared value by value (RestKit's benchmark fixture).
        var mapping = try #require(issuesMapping().objectValue)
        mapping["modificationAttribute"] = nil
        try ModelAPI.with(model: issuesModel, mappings: ["issues": .object(mapping)]) { api in
            let payload: JSONValue = ["issues": [issue(1, labels: [7, 7, 8, 7])]]
            let first = try api.map("issues", payload)
            #expect(first["inserted"] == 3)
            #expect(try api.object("Issue", "1")["labels"] == [7, 8])
            let again = try api.map("issues", payload)
            #expect(again["updated"] == 0, "\(again)")
            #expect(again["unchanged"] == 3, "\(again)")
        }
    }

    @Test func R_P6_replaceOnAManyToManyOnlyDisconnectsADestinationAnotherObjectStillHolds() throws {
        try ModelAPI.with(model: issuesModel, mappings: ["issues": issuesMapping(labels: "replace")]) { api in
            try api.map("issues", ["issues": .array((1...9).map { issue($0, labels: [1, 2]) })])
            // Issue 1 loses the "Bug" label (1); issue 2 loses label 2, which issues 3…9 still carry.
            let result = try api.map("issues", ["issues": [issue(1, updated: "2018-03-01T00:00:00Z", labels: [2]),
                                                            issue(2, updated: "2018-03-01T00:00:00Z", labels: [1])]])
            #expect(result["deleted"] == 0, "\(result)")
            #expect(try api.object("Label", "1")["issues"] == .array((2...9).map { .number(JSONNumber(Int64($0))) }))
            #expect(try api.object("Issue", "1")["labels"] == [2])
            #expect(try api.object("Issue", "3")["labels"] == [1, 2])
            // Once no issue holds a label, replace deletes it (with a tombstone).
            let last = try api.map("issues", ["issues": .array((1...9).map { issue($0, updated: "2018-04-01T00:00:00Z", labels: [2]) })])
            #expect(last["deleted"] == 1, "\(last)")
            #expect(try api.client.send("GET", api.base + "/entities/Label/objects/1", token: api.key).status == 404)
            #expect(try api.changes().contains { $0["entity"] == "Label" && $0["key"] == 1 && $0["op"] == "delete" })
        }
    }

    @Test func R_P6_replaceOnAToOneKeepsADestinationAnotherObjectStillHolds() throws {
        try ModelAPI.with(model: issuesModel, mappings: ["issues": issuesMapping(milestone: "replace")]) { api in
            try api.map("issues", ["issues": [issue(1, milestone: 10), issue(2, milestone: 10)]])
            let moved = try api.map("issues", ["issues": [issue(1, updated: "2018-03-01T00:00:00Z", milestone: 11)]])
            #expect(moved["deleted"] == 0, "issue 2 still has milestone 10: \(moved)")
            #expect(try api.object("Milestone", "10")["issues"] == [2])
            let last = try api.map("issues", ["issues": [issue(2, updated: "2018-03-01T00:00:00Z", milestone: 11)]])
            #expect(last["deleted"] == 1, "\(last)")
            #expect(try api.get("entities/Milestone/objects")["items"]?.arrayValue?.compactMap { $0["id"] } == [11])
        }
    }

    @Test func R_P6_aDestinationDroppedByOneObjectAndTakenByALaterOneInThePayloadIsKept() throws {
        try ModelAPI.with(model: issuesModel, mappings: ["issues": issuesMapping(labels: "replace")]) { api in
            try api.map("issues", ["issues": [issue(1, labels: [5])]])
            let result = try api.map("issues", ["issues": [issue(1, updated: "2018-03-01T00:00:00Z", labels: []),
                                                            issue(2, updated: "2018-03-01T00:00:00Z", labels: [5])]])
            #expect(result["deleted"] == 0, "\(result)")
            #expect(try api.object("Label", "5")["issues"] == [2])
        }
    }

    @Test func R_P2_aMissingKeyPathIsA200ThatSaysSo() throws {
        try ModelAPI.with(model: issuesModel, mappings: ["issues": issuesMapping()]) { api in
            let result = try api.map("issues", ["items": [issue(1)]])
            #expect(result["inserted"] == 0)
            #expect(result["warnings"] == [["pointer": "", "message": "no value at keyPath 'issues'"]])
            let found = try api.map("issues", ["issues": []])
            #expect(found["warnings"] == nil, "an empty array at the key path is a complete, empty answer: \(found)")
        }
    }

    @Test func R_P5_aTopLevelScalarIsAnInvalidObjectUnlessTheMappingTakesIdentityReferences() throws {
        var references = try #require(issuesMapping().objectValue)
        references["identityReferences"] = true
        try ModelAPI.with(model: issuesModel, mappings: ["issues": issuesMapping(), "references": .object(references)]) { api in
            let scalar = try api.post("issues", ["issues": 5])
            #expect(scalar.status == 422, "\(scalar.text)")
            let error = try #require(try scalar.json()["errors"]?.arrayValue?.first)
            #expect(error["pointer"] == "/issues")
            #expect(error["message"]?.stringValue?.contains("identityReferences") == true, "\(error)")
            let mixed = try api.post("issues", ["issues": [issue(1), 2]])
            #expect(try mixed.json()["errors"]?.arrayValue?.compactMap { $0["pointer"] } == ["/issues/1"])
            #expect(try api.get("entities/Issue/objects?count=true")["total"] == 0, "nothing stored")

            let stubs = try api.map("references", ["issues": [5, 6]])
            #expect(stubs["inserted"] == 2)
            #expect(stubs["objects"] == [["entity": "Issue", "key": 5], ["entity": "Issue", "key": 6]])
            #expect(try api.get("mappings/references")["identityReferences"] == true)
            #expect(try api.get("mappings/issues")["identityReferences"] == nil)
        }
    }

    @Test func R_P5_identityReferencesIsForTopLevelMappingsOnly() throws {
        try ModelAPI.with(model: issuesModel) { api in
            let nested: JSONValue = ["entity": "Issue", "attributes": ["id"],
                                     "relationships": [["from": "labels", "to": "labels", "mapping": ["attributes": ["id"], "identityReferences": true]]]]
            let response = try api.client.sendJSON("PUT", api.base + "/mappings/nested", nested, token: api.key)
            #expect(response.status == 422)
            #expect(try response.json()["errors"]?.arrayValue?.first?["pointer"] == "/relationships/0/mapping/identityReferences")
        }
    }
}
