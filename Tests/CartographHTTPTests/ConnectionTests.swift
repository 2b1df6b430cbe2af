// Connections, late binding, deletion predicates, snapshots and dynamic mappings through the routes, in
// process (docs/mapping.md#connections-r-c1r-c4, R-D1, R-D5, R-P9). The connection cases follow RestKit's RKConnectionDescription and
// RKRelationshipConnectionOperation tests: connect by one attribute, by several (AND), by a
// collection of values (OR), with predicates, through sub-entities and by key path.
import Foundation
import Testing
import CartographCore
import CartographTesting

let connectionsModel: JSONValue = ["entities": [
    ["name": "Organization", "attributes": [["name": "orgID", "type": "integer64"], ["name": "name", "type": "string"]],
     "userInfo": ["identityAttributes": "orgID"],
     "relationships": [["name": "members", "destination": "User", "toMany": true, "inverse": "organization"]]],
    ["name": "User",
     "attributes": [["name": "userID", "type": "integer64"], ["name": "name", "type": "string"],
                    ["name": "orgID", "type": "integer64"], ["name": "active", "type": "boolean", "default": true]],
     "relationships": [["name": "organization", "destination": "Organization", "inverse": "members"],
                       ["name": "projects", "destination": "Project", "toMany": true, "inverse": "user"],
                       ["name": "teamProjects", "destination": "Project", "toMany": true, "inverse": "teamMembers"]]],
    ["name": "Admin", "parent": "User", "attributes": [["name": "level", "type": "integer32"]]],
    ["name": "Project",
     "attributes": [["name": "projectID", "type": "integer64"], ["name": "name", "type": "string"],
                    ["name": "userID", "type": "string"], ["name": "teamMemberIDs", "type": "transformable"],
                    ["name": "reviewerName", "type": "string"], ["name": "orgID", "type": "integer64"],
                    ["name": "connect", "type": "boolean", "default": true], ["name": "shouldBeDeleted", "type": "boolean", "default": false]],
     "relationships": [["name": "user", "destination": "User", "inverse": "projects"],
                       ["name": "teamMembers", "destination": "User", "toMany": true, "inverse": "teamProjects"],
                       ["name": "reviewer", "destination": "User"],
                       ["name": "organization", "destination": "Organization"],
                       ["name": "tasks", "destination": "Task", "toMany": true, "inverse": "project", "deleteRule": "cascade"]]],
    ["name": "Task", "attributes": [["name": "taskID", "type": "integer64"], ["name": "assigneeID", "type": "integer64"]],
     "relationships": [["name": "project", "destination": "Project", "inverse": "tasks"], ["name": "assignee", "destination": "User"]]],
]]

let usersMapping: JSONValue = [
    "entity": "User", "keyPath": "users", "attributes": ["id": "userID", "name": "name", "org": "orgID", "active": "active"],
    "dynamic": ["keyPath": "kind", "map": ["admin": ["entity": "Admin", "attributes": ["id": "userID", "name": "name", "org": "orgID", "level": "level"]]]],
]

func projectsMapping(_ extra: [(String, JSONValue)] = [], connections: [JSONValue]) -> JSONValue {
    var document = JSONObject([
        ("entity", "Project"), ("keyPath", "projects"),
        ("attributes", ["id": "projectID", "name": "name", "userID": "userID", "team": "teamMemberIDs",
                        "reviewer": "reviewerName", "org": "orgID", "connect": "connect", "deleted": "shouldBeDeleted"]),
        ("relationships", [
            ["from": "tasks", "to": "tasks", "mapping": ["entity": "Task", "attributes": ["id": "taskID", "assignee": "assigneeID"],
                                                         "connections": [["relationship": "assignee", "connectedBy": ["assigneeID": "userID"]]]]],
        ]),
        ("connections", .array(connections)),
    ])
    for (key, value) in extra { document[key] = value }
    return .object(document)
}

@Suite(.serialized) struct ConnectionTests {
    static let byUserID: JSONValue = ["relationship": "user", "connectedBy": "userID"]

    @Test func R_C1_connectionsRunAfterTheWholePayloadSoOrderDoesNotMatter() throws {
        // The task names its assignee before the payload's users mapping (nested later) inserts it.
        let mapping = projectsMapping([("relationships", [
            ["from": "tasks", "to": "tasks", "mapping": ["entity": "Task", "attributes": ["id": "taskID", "assignee": "assigneeID"],
                                                         "connections": [["relationship": "assignee", "connectedBy": ["assigneeID": "userID"]]]]],
            ["from": "team", "to": "teamMembers", "mapping": ["entity": "User", "attributes": ["id": "userID", "name": "name"]]],
        ])], connections: [])
        try ModelAPI.with(model: connectionsModel, mappings: ["projects": mapping]) { api in
            try api.map("projects", ["projects": [["id": 1, "tasks": [["id": 10, "assignee": 5]], "team": [["id": 5, "name": "Ann"]]]]])
            #expect(try api.object("Task", "10")["assignee"] == 5)
        }
    }

    @Test func R_C1_connectionsFindObjectsStoredByEarlierPayloads() throws {
        try ModelAPI.with(model: connectionsModel, mappings: ["users": usersMapping, "projects": projectsMapping(connections: [Self.byUserID])]) { api in
            try api.map("users", ["users": [["id": 7, "name": "Blake"]]])
            let result = try api.map("projects", ["projects": [["id": 1, "userID": "7"]]])
            #expect(result["inserted"] == 1)
            #expect(try api.object("Project", "1")["user"] == 7, "the string \"7\" is coerced to the destination's integer (R-I2)")
            #expect(try api.object("User", "7")["projects"] == [1], "the inverse is kept")
        }
    }

    @Test func R_C2_toOneTakesTheOldestMatchAndNoMatchEmptiesTheRelationship() throws {
        let byName: JSONValue = ["relationship": "reviewer", "connectedBy": ["reviewerName": "name"]]
        try ModelAPI.with(model: connectionsModel, mappings: ["users": usersMapping, "projects": projectsMapping(connections: [byName])]) { api in
            try api.map("users", ["users": [["id": 9, "name": "Sam"], ["id": 3, "name": "Sam"]]])
            try api.map("projects", ["projects": [["id": 1, "reviewer": "Sam"]]])
            #expect(try api.object("Project", "1")["reviewer"] == 9, "user 9 was stored first")
            try api.map("projects", ["projects": [["id": 1, "reviewer": "Nobody"]]])
            #expect(try api.object("Project", "1")["reviewer"] == .null, "no match empties the relationship")
            try api.map("projects", ["projects": [["id": 1, "reviewer": "Sam"]]])
            try api.map("projects", ["projects": [["id": 1, "reviewer": nil]]])
            #expect(try api.object("Project", "1")["reviewer"] == .null, "a nil source value empties it too (RestKit would keep it)")
        }
    }

    @Test func R_C2_attributePairsAreANDedAndCollectionValuesORed() throws {
        let byNameAndOrg: JSONValue = ["relationship": "reviewer", "connectedBy": ["reviewerName": "name", "orgID": "orgID"]]
        let byTeam: JSONValue = ["relationship": "teamMembers", "connectedBy": ["teamMemberIDs": "userID"]]
        try ModelAPI.with(model: connectionsModel, mappings: ["users": usersMapping, "projects": projectsMapping(connections: [byNameAndOrg, byTeam])]) { api in
            try api.map("users", ["users": [["id": 1, "name": "Sam", "org": 1], ["id": 2, "name": "Sam", "org": 2], ["id": 3, "name": "Kim", "org": 2]]])
            try api.map("projects", ["projects": [["id": 1, "reviewer": "Sam", "org": 2, "team": [1, 3, 99]]]])
            let project = try api.object("Project", "1")
            #expect(project["reviewer"] == 2, "both name and orgID must match")
            #expect(project["teamMembers"] == [1, 3], "each member of the collection matches; 99 matches nothing")
        }
    }

    @Test func R_C2_sourceValuesAreReadAfterMappingSoAbsentKeysKeepStoredValues() throws {
        try ModelAPI.with(model: connectionsModel, mappings: ["users": usersMapping, "projects": projectsMapping(connections: [Self.byUserID])]) { api in
            try api.map("users", ["users": [["id": 7, "name": "Blake"]]])
            try api.map("projects", ["projects": [["id": 1, "userID": "7"]]])
            try api.map("projects", ["projects": [["id": 1, "name": "renamed"]]])
            #expect(try api.object("Project", "1")["user"] == 7)
        }
    }

    @Test func R_C3_sourcePredicateDestinationPredicateAndSubentities() throws {
        let guarded: JSONValue = ["relationship": "user", "connectedBy": "userID", "sourcePredicate": "connect == YES",
                                  "destinationPredicate": "active == YES", "includesSubentities": false]
        try ModelAPI.with(model: connectionsModel, mappings: ["users": usersMapping, "projects": projectsMapping(connections: [guarded])]) { api in
            try api.map("users", ["users": [["id": 1, "name": "on"], ["id": 2, "name": "off", "active": false],
                                            ["id": 3, "name": "boss", "kind": "admin", "level": 9]]])
            #expect(try api.object("User", "3")["_entity"] == "Admin")
            try api.map("projects", ["projects": [["id": 1, "userID": "1"], ["id": 2, "userID": "2"], ["id": 3, "userID": "3"]]])
            #expect(try api.object("Project", "1")["user"] == 1)
            #expect(try api.object("Project", "2")["user"] == .null, "the destinationPredicate filters inactive users")
            #expect(try api.object("Project", "3")["user"] == .null, "includesSubentities false leaves out Admin")
            // A false sourcePredicate leaves the relationship as it is.
            try api.map("projects", ["projects": [["id": 1, "userID": "2", "connect": false]]])
            #expect(try api.object("Project", "1")["user"] == 1)
        }
    }

    @Test func R_C4_keyPathConnectionSeesForeignKeyConnectionsOfTheSamePayload() throws {
        let viaUser: JSONValue = ["relationship": "organization", "keyPath": "user.organization"]
        let orgMapping: JSONValue = ["entity": "User", "keyPath": "users", "attributes": ["id": "userID", "org": "orgID"],
                                     "relationships": [["from": "organization", "to": "organization",
                                                        "mapping": ["entity": "Organization", "attributes": ["id": "orgID", "name": "name"]]]]]
        try ModelAPI.with(model: connectionsModel, mappings: ["users": orgMapping, "projects": projectsMapping(connections: [viaUser, Self.byUserID])]) { api in
            try api.map("users", ["users": [["id": 7, "organization": ["id": 40, "name": "Acme"]]]])
            try api.map("projects", ["projects": [["id": 1, "userID": "7"]]])
            let project = try api.object("Project", "1")
            #expect(project["user"] == 7)
            #expect(project["organization"] == 40, "the key path ran after the foreign-key connection, whatever the document order")
        }
    }

    @Test(arguments: [1, 2, 10])
    func R_C5_lateBindingCompletesWhenTheDestinationArrivesPayloadsLater(later: Int) throws {
        let byTeam: JSONValue = ["relationship": "teamMembers", "connectedBy": ["teamMemberIDs": "userID"]]
        try ModelAPI.with(model: connectionsModel, mappings: ["users": usersMapping, "projects": projectsMapping(connections: [Self.byUserID, byTeam])]) { api in
            try api.map("projects", ["projects": [["id": 1, "userID": "100", "team": [100, 101]], ["id": 2, "userID": "100"]]])
            #expect(try api.object("Project", "1")["user"] == .null)
            for filler in 0..<(later - 1) { try api.map("users", ["users": [["id": .number(JSONNumber(Int64(500 + filler)))]]]) }
            let arrival = try api.map("users", ["users": [["id": 100, "name": "late"]]])
            #expect(arrival["updated"] == 2, "the two waiting projects count as updated")
            #expect(try api.object("Project", "1")["user"] == 100)
            #expect(try api.object("Project", "2")["user"] == 100)
            #expect(try api.object("Project", "1")["teamMembers"] == [100])
            // A to-many gains each later arriving match; a completed to-one waits no more.
            try api.map("users", ["users": [["id": 101, "kind": "admin", "level": 1]]])
            // The Admin sub-entity infers no identification attribute of its own (as in RestKit), so its key is its `_id`.
            let admin = try #require(try api.get("entities/Admin/objects")["items"]?.arrayValue?.first?["_id"])
            #expect(try api.object("Project", "1")["teamMembers"] == [100, admin])
            #expect(try api.object("User", "100")["projects"] == [1, 2])
            let feed = try api.changes()
            #expect(feed.contains { $0["entity"] == "Project" && $0["key"] == 2 && $0["object"]?["user"] == 100 },
                    "late binding writes change-feed entries for the sources")
        }
    }

    @Test func R_C5_aSourceThatConnectsElsewhereStopsWaiting() throws {
        try ModelAPI.with(model: connectionsModel, mappings: ["users": usersMapping, "projects": projectsMapping(connections: [Self.byUserID])]) { api in
            try api.map("projects", ["projects": [["id": 1, "userID": "100"]]])
            try api.map("users", ["users": [["id": 5]]])
            try api.map("projects", ["projects": [["id": 1, "userID": "5"]]])
            #expect(try api.object("Project", "1")["user"] == 5)
            try api.map("users", ["users": [["id": 100]]])
            #expect(try api.object("Project", "1")["user"] == 5, "the old value no longer waits")
            // A deleted source stops waiting too.
            try api.map("projects", ["projects": [["id": 2, "userID": "200"]]])
            #expect(try api.client.send("DELETE", api.base + "/entities/Project/objects/2", token: api.key).status == 204)
            let arrival = try api.map("users", ["users": [["id": 200]]])
            #expect(arrival["updated"] == 0)
        }
    }

    @Test func R_C5_explainReportsConnections() throws {
        try ModelAPI.with(model: connectionsModel, mappings: ["users": usersMapping, "projects": projectsMapping(connections: [Self.byUserID])]) { api in
            try api.map("users", ["users": [["id": 7]]])
            let explained = try api.map("projects", ["projects": [["id": 1, "userID": "7"], ["id": 2, "userID": "8"]]], query: "?explain=true")
            let connects = (explained["explain"]?.arrayValue ?? []).filter { $0["action"] == "connect" }
            #expect(connects.count == 2)
            #expect(connects.first { $0["key"] == 2 }?["reason"]?.stringValue?.contains("waiting") == true)
            #expect(explained["timings"]?["connect"]?.numberValue != nil)
            #expect(try api.get("entities/Project/objects")["items"] == [], "explain stores nothing")
        }
    }
}

@Suite(.serialized) struct MappingLifecycleTests {
    @Test func R_S2_objectsPerPayloadAreLimitedWith413AndNothingStored() throws {
        try ModelAPI.with(model: connectionsModel, mappings: ["users": usersMapping], serverArguments: ["--max-objects-per-payload", "10"]) { api in
            func users(_ count: Int) -> JSONValue { ["users": .array((0..<count).map { ["id": .number(JSONNumber(Int64($0)))] })] }
            let over = try api.post("users", users(11))
            #expect(over.status == 413, "\(over.text)")
            #expect(try over.json()["errors"]?.arrayValue?.first?["pointer"] == "/users/10")
            #expect(try api.get("entities/User/objects?count=true")["total"] == 0)
            #expect(try api.map("users", users(10))["inserted"] == 10)
        }
    }
}

@Suite(.serialized) struct DeletionTests {
    @Test func R_D1_deletionPredicateDeletesMatchesThroughDeleteRulesWithTombstones() throws {
        let mapping = projectsMapping([("deletionPredicate", "shouldBeDeleted == YES")], connections: [])
        try ModelAPI.with(model: connectionsModel, mappings: ["projects": mapping]) { api in
            try api.map("projects", ["projects": [["id": 1, "tasks": [["id": 10], ["id": 11]]], ["id": 2]]])
            let result = try api.map("projects", ["projects": [["id": 1, "deleted": true], ["id": 3, "deleted": true]]])
            #expect(result["deleted"] == 4, "projects 1 and 3 and project 1's two tasks (cascade)")
            #expect(result["objects"] == [["entity": "Project", "key": 1], ["entity": "Project", "key": 3]])
            #expect(try api.get("entities/Project/objects")["items"]?.arrayValue?.map { $0["projectID"] } == [2])
            #expect(try api.get("entities/Task/objects")["items"] == [])
            let tombstones = try api.changes().filter { $0["op"] == "delete" }.map { "\($0["entity"]?.stringValue ?? "")/\($0["key"]?.jsonText ?? "")" }
            #expect(Set(tombstones) == ["Project/1", "Task/10", "Task/11"], "project 3 never committed, so it has no tombstone")
        }
    }

    @Test func R_D5_deleteMissingDeletesWhatTheSnapshotOmitsWithinScope() throws {
        let mapping = projectsMapping([("deleteMissing", ["scope": "orgID == 1", "maxDeletes": 3])], connections: [])
        try ModelAPI.with(model: connectionsModel, mappings: ["projects": mapping]) { api in
            try api.map("projects", ["projects": [["id": 1, "org": 1], ["id": 2, "org": 1, "tasks": [["id": 20]]], ["id": 3, "org": 2]]])
            let result = try api.map("projects", ["projects": [["id": 1, "org": 1], ["id": 4, "org": 1]]])
            #expect(result["deleted"] == 2, "project 2 and its cascaded task")
            let ids = try api.get("entities/Project/objects?orderBy=projectID")["items"]?.arrayValue?.compactMap { $0["projectID"] }
            #expect(ids == [1, 3, 4], "project 3 is outside the scope")
        }
    }

    @Test func R_D5_maxDeletesRefusesTheWholePayloadWith409() throws {
        let mapping = projectsMapping([("deleteMissing", ["scope": "orgID == 1", "maxDeletes": 1])], connections: [])
        try ModelAPI.with(model: connectionsModel, mappings: ["projects": mapping]) { api in
            try api.map("projects", ["projects": [["id": 1, "org": 1], ["id": 2, "org": 1, "tasks": [["id": 20]]]]])
            for query in ["", "?dryRun=true", "?explain=true"] {
                let response = try api.post("projects", ["projects": [["id": 1, "org": 1, "name": "changed"]]], query: query)
                #expect(response.status == 409, "\(query): \(response.text)")
                #expect(try response.json()["detail"]?.stringValue?.contains("maxDeletes") == true)
            }
            #expect(try api.get("entities/Project/objects?count=true")["total"] == 2)
            #expect(try api.object("Project", "1")["name"] == .null, "nothing of the refused payload was stored")
            #expect(try api.get("entities/Task/objects?count=true")["total"] == 1)
        }
    }

    @Test func R_D5_aSnapshotWithoutItsKeyPathIs422() throws {
        let mapping = projectsMapping([("deleteMissing", ["scope": "TRUEPREDICATE", "maxDeletes": 100])], connections: [])
        try ModelAPI.with(model: connectionsModel, mappings: ["projects": mapping]) { api in
            try api.map("projects", ["projects": [["id": 1]]])
            let response = try api.post("projects", ["other": []])
            #expect(response.status == 422)
            #expect(try api.get("entities/Project/objects?count=true")["total"] == 1)
            #expect(try api.map("projects", ["projects": []])["deleted"] == 1, "an explicit empty snapshot is a snapshot")
        }
    }
}

let messagesModel: JSONValue = ["entities": [
    ["name": "Message", "abstract": true, "attributes": [["name": "id", "type": "integer64"], ["name": "sentAt", "type": "date"]]],
    ["name": "TextMessage", "parent": "Message", "attributes": [["name": "text", "type": "string"]]],
    ["name": "PictureMessage", "parent": "Message", "attributes": [["name": "url", "type": "uri"]]],
]]

@Suite(.serialized) struct DynamicMappingTests {
    static let mapping: JSONValue = [
        "entity": "Message", "keyPath": "messages", "attributes": ["id"], "discardsInvalidObjectsOnInsert": true,
        "dynamic": ["keyPath": "type", "map": [
            "text": ["entity": "TextMessage", "attributes": ["id", "text"]],
            "picture": ["entity": "PictureMessage", "attributes": ["id", "url"]],
        ]],
    ]

    @Test func R_P9_dynamicMappingChoosesTheSubEntityByDiscriminator() throws {
        try ModelAPI.with(model: messagesModel, mappings: ["messages": Self.mapping]) { api in
            let result = try api.map("messages", ["messages": [
                ["id": 1, "type": "text", "text": "hi"], ["id": 2, "type": "picture", "url": "https://x.io/a.png"],
                ["id": 3, "type": "video"],
            ]])
            #expect(try api.object("Message", "1")["_entity"] == "TextMessage")
            #expect(try api.object("Message", "1")["text"] == "hi")
            #expect(try api.object("Message", "2")["url"] == "https://x.io/a.png")
            let discarded = try #require(result["discarded"]?.arrayValue)
            #expect(discarded.count == 1)
            #expect(discarded.first?["pointer"] == "/messages/2")
            #expect(discarded.first?["errors"]?.arrayValue?.first?["message"]?.stringValue?.contains("abstract") == true)
        }
    }

    @Test func R_P9_anExistingObjectIsUpdatedInPlaceWhateverTheDiscriminator() throws {
        try ModelAPI.with(model: messagesModel, mappings: ["messages": Self.mapping]) { api in
            try api.map("messages", ["messages": [["id": 1, "type": "text", "text": "hi"]]])
            // Unknown and different discriminators update the stored TextMessage: no insert, no error.
            let result = try api.map("messages", ["messages": [["id": 1, "type": "video"]]])
            #expect(result["discarded"] == [])
            #expect(result["unchanged"] == 1)
            try api.map("messages", ["messages": [["id": 1, "type": "picture", "url": "https://x.io/b.png"]]])
            let message = try api.object("Message", "1")
            #expect(message["_entity"] == "TextMessage")
            #expect(message["text"] == "hi")
            #expect(try api.get("entities/Message/objects?count=true")["total"] == 1)
        }
    }

    @Test func R_P9_dictionaryTransformerPreprocessesEachRepresentation() throws {
        var model = messagesModel.objectValue ?? JSONObject()
        model["dictionaryTransformers"] = ["Legacy": [["op": "move", "from": "legacy_id", "to": "id"], ["op": "default", "key": "type", "value": "text"]]]
        var mapping = Self.mapping.objectValue ?? JSONObject()
        mapping["dictionaryTransformer"] = "Legacy"
        try ModelAPI.with(model: .object(model), mappings: ["messages": .object(mapping)]) { api in
            try api.map("messages", ["messages": [["legacy_id": 5, "text": "old"]]])
            #expect(try api.object("Message", "5")["_entity"] == "TextMessage")
            #expect(try api.object("Message", "5")["text"] == "old")
        }
    }
}
