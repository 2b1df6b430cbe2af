// What real API data needed of the mapping (issue 16, docs/mapping.md "Decisions from real API data"):
// event streams that are newest-first, to-many arrays that repeat a destination, labels shared by many
// issues, and payloads of the wrong shape. Against a model store (StoreHarness.swift): none needs the
// router, a refusal is checked by its problem's code (`unprocessable`, the routes' 422) and details.
import Foundation
import Testing
import CartographCore

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
        try withStoreHarness(model: issuesModel, name: "issues", mappings: [("issues", issuesMapping())]) { store in
            // GitHub's event stream: newest first.
            let result = try store.map("issues", ["issues": [issue(784, "closed", updated: "2018-02-24T18:11:57Z", labels: [1]),
                                                            issue(784, "open", updated: "2018-02-19T19:49:14Z", labels: [1, 2]),
                                                            issue(785, "open", updated: "2018-02-01T00:00:00Z"),
                                                            issue(785, "closed", updated: "2018-02-02T00:00:00Z")]])
            #expect(result.inserted == 3, "784, 785 and label 1: the older copy's label 2 is not mapped: \(result)")
            let newestFirst = try store.object("Issue", "784")
            #expect(newestFirst["state"] == "closed")
            #expect(newestFirst["labels"] == [1], "the older copy's relationships are not mapped either")
            #expect(try store.object("Issue", "785")["state"] == "closed", "oldest first: the later, newer copy wins")
            #expect(try store.count("Label") == 1)
        }
    }

    @Test func R_I5_withoutAModificationAttributeTheLaterCopyWins() throws {
        var mapping = try #require(issuesMapping().objectValue)
        mapping["modificationAttribute"] = nil
        try withStoreHarness(model: issuesModel, name: "issues", mappings: [("issues", .object(mapping))]) { store in
            try store.map("issues", ["issues": [issue(784, "closed", updated: "2018-02-24T18:11:57Z"), issue(784, "open")]])
            #expect(try store.object("Issue", "784")["state"] == "open")
        }
    }

    @Test func R_P6_aToManyNamingOneDestinationTwiceHoldsItOnceAndAReloadIsUnchanged() throws {
        // Without a modificationAttribute every copy is compared value by value (RestKit's benchmark fixture).
        var mapping = try #require(issuesMapping().objectValue)
        mapping["modificationAttribute"] = nil
        try withStoreHarness(model: issuesModel, name: "issues", mappings: [("issues", .object(mapping))]) { store in
            let payload: JSONValue = ["issues": [issue(1, labels: [7, 7, 8, 7])]]
            let first = try store.map("issues", payload)
            #expect(first.inserted == 3)
            #expect(try store.object("Issue", "1")["labels"] == [7, 8])
            let again = try store.map("issues", payload)
            #expect(again.updated == 0, "\(again)")
            #expect(again.unchanged == 3, "\(again)")
        }
    }

    @Test func R_P6_replaceOnAManyToManyOnlyDisconnectsADestinationAnotherObjectStillHolds() throws {
        try withStoreHarness(model: issuesModel, name: "issues", mappings: [("issues", issuesMapping(labels: "replace"))]) { store in
            try store.map("issues", ["issues": .array((1...9).map { issue($0, labels: [1, 2]) })])
            // Issue 1 loses the "Bug" label (1); issue 2 loses label 2, which issues 3…9 still carry.
            let result = try store.map("issues", ["issues": [issue(1, updated: "2018-03-01T00:00:00Z", labels: [2]),
                                                            issue(2, updated: "2018-03-01T00:00:00Z", labels: [1])]])
            #expect(result.deleted == 0, "\(result)")
            #expect(try store.object("Label", "1")["issues"] == .array((2...9).map { .number(JSONNumber(Int64($0))) }))
            #expect(try store.object("Issue", "1")["labels"] == [2])
            #expect(try store.object("Issue", "3")["labels"] == [1, 2])
            // Once no issue holds a label, replace deletes it (with a tombstone).
            let last = try store.map("issues", ["issues": .array((1...9).map { issue($0, updated: "2018-04-01T00:00:00Z", labels: [2]) })])
            #expect(last.deleted == 1, "\(last)")
            #expect(try store.storedObject("Label", ["1"]) == nil)
            #expect(try store.changes().contains { $0["entity"] == "Label" && $0["key"] == 1 && $0["op"] == "delete" })
        }
    }

    @Test func R_P6_replaceOnAToOneKeepsADestinationAnotherObjectStillHolds() throws {
        try withStoreHarness(model: issuesModel, name: "issues", mappings: [("issues", issuesMapping(milestone: "replace"))]) { store in
            try store.map("issues", ["issues": [issue(1, milestone: 10), issue(2, milestone: 10)]])
            let moved = try store.map("issues", ["issues": [issue(1, updated: "2018-03-01T00:00:00Z", milestone: 11)]])
            #expect(moved.deleted == 0, "issue 2 still has milestone 10: \(moved)")
            #expect(try store.object("Milestone", "10")["issues"] == [2])
            let last = try store.map("issues", ["issues": [issue(2, updated: "2018-03-01T00:00:00Z", milestone: 11)]])
            #expect(last.deleted == 1, "\(last)")
            #expect(try store.objects("Milestone").compactMap { $0["id"] } == [11])
        }
    }

    @Test func R_P6_aDestinationDroppedByOneObjectAndTakenByALaterOneInThePayloadIsKept() throws {
        try withStoreHarness(model: issuesModel, name: "issues", mappings: [("issues", issuesMapping(labels: "replace"))]) { store in
            try store.map("issues", ["issues": [issue(1, labels: [5])]])
            let result = try store.map("issues", ["issues": [issue(1, updated: "2018-03-01T00:00:00Z", labels: []),
                                                            issue(2, updated: "2018-03-01T00:00:00Z", labels: [5])]])
            #expect(result.deleted == 0, "\(result)")
            #expect(try store.object("Label", "5")["issues"] == [2])
        }
    }

    @Test func R_P2_aMissingKeyPathIsA200ThatSaysSo() throws {
        try withStoreHarness(model: issuesModel, name: "issues", mappings: [("issues", issuesMapping())]) { store in
            let result = try store.map("issues", ["items": [issue(1)]])
            #expect(result.inserted == 0)
            #expect(result.warnings == [["pointer": "", "message": "no value at keyPath 'issues'"]])
            let found = try store.map("issues", ["issues": []])
            #expect(found.warnings == [], "an empty array at the key path is a complete, empty answer: \(found)")
        }
    }

    @Test func R_P5_aTopLevelScalarIsAnInvalidObjectUnlessTheMappingTakesIdentityReferences() throws {
        var references = try #require(issuesMapping().objectValue)
        references["identityReferences"] = true
        try withStoreHarness(model: issuesModel, name: "issues", mappings: [("issues", issuesMapping()), ("references", .object(references))]) { store in
            let scalar = store.refusal("issues", ["issues": 5])
            #expect(scalar?.code == .unprocessable, "\(String(describing: scalar))")
            let error = try #require(scalar?.errors.first)
            #expect(error.pointer == "/issues")
            #expect(error.message.contains("identityReferences"), "\(error)")
            let mixed = store.refusal("issues", ["issues": [issue(1), 2]])
            #expect(pointers(mixed) == ["/issues/1"])
            #expect(try store.count("Issue") == 0, "nothing stored")

            let stubs = try store.map("references", ["issues": [5, 6]])
            #expect(stubs.inserted == 2)
            #expect(stubs.objects == [["entity": "Issue", "key": 5], ["entity": "Issue", "key": 6]])
            #expect(try store.registeredMapping("references")?["identityReferences"] == true)
            #expect(try store.registeredMapping("issues")?["identityReferences"] == nil)
        }
    }

    @Test func R_P5_identityReferencesIsForTopLevelMappingsOnly() throws {
        try withStoreHarness(model: issuesModel, name: "issues") { store in
            let nested: JSONValue = ["entity": "Issue", "attributes": ["id"],
                                     "relationships": [["from": "labels", "to": "labels", "mapping": ["attributes": ["id"], "identityReferences": true]]]]
            let refused = #expect(throws: CartographError.self) { try store.registerMapping("nested", nested) }
            #expect(refused?.code == .unprocessable)
            #expect(pointers(refused).first == "/relationships/0/mapping/identityReferences")
        }
    }
}
