// Payload ingestion through the routes, in process (docs/mapping.md): identification, values,
// relationships and their policies, modification dates, validation, transactions, dry runs and
// idempotency; values that do not coerce, nesting past the depth limit; concurrent writers and readers.
import Foundation
import Synchronization
import Testing
import CartographCore
import CartographTesting

let projectsModel: JSONValue = ["entities": [
    ["name": "Project",
     "attributes": [["name": "projectID", "type": "integer64"], ["name": "name", "type": "string", "default": "untitled"],
                    ["name": "updatedAt", "type": "date"], ["name": "budget", "type": "decimal"]],
     "relationships": [["name": "tasks", "destination": "Task", "toMany": true, "ordered": true, "inverse": "project"],
                       ["name": "owner", "destination": "User", "inverse": "projects"]]],
    ["name": "Task", "attributes": [["name": "id", "type": "integer64"], ["name": "title", "type": "string", "minLength": 1]],
     "relationships": [["name": "project", "destination": "Project", "inverse": "tasks"]]],
    ["name": "User", "attributes": [["name": "userID", "type": "integer64"], ["name": "email", "type": "string", "optional": false]],
     "relationships": [["name": "projects", "destination": "Project", "toMany": true, "inverse": "owner"]]],
]]

func projectMapping(policy: String = "set", extra: [(String, JSONValue)] = []) -> JSONValue {
    var document = JSONObject([
        ("entity", "Project"), ("keyPath", "projects"),
        ("attributes", ["id": "projectID", "name": "name", "updated_at": ["to": "updatedAt", "transformer": "ISO8601ToDate"], "budget": "budget"]),
        ("relationships", [
            ["from": "tasks", "to": "tasks", "assignmentPolicy": .string(policy), "mapping": ["entity": "Task", "attributes": ["id", "title"]]],
            ["from": "owner", "to": "owner", "mapping": ["entity": "User", "attributes": ["id": "userID", "email": "email"]]],
        ]),
    ])
    for (key, value) in extra { document[key] = value }
    return .object(document)
}

/// A server with tenant acme, model `work` and mapping `projects`; `body` gets a poster and a reader.
func withProjects(policy: String = "set", extra: [(String, JSONValue)] = [],
                  _ body: (_ post: (JSONValue, [(String, String)], String) throws -> RawResponse, _ get: (String) throws -> JSONValue) throws -> Void) throws {
    try ModelAPI.with(model: projectsModel, name: "work", mappings: ["projects": projectMapping(policy: policy, extra: extra)]) { api in
        try body({ payload, headers, query in try api.post("projects", payload, query: query, headers: headers) }, api.get)
    }
}

@Suite(.serialized) struct PayloadTests {
    @Test func R_P12_insertsNestedObjectsAndReportsCountsAndObjects() throws {
        try withProjects { post, get in
            let response = try post(["projects": [
                ["id": 1, "name": "Apollo", "updated_at": "2024-01-02T03:04:05Z", "budget": .number(JSONNumber(validatedText: "12345678901234567.891")),
                 "tasks": [["id": 10, "title": "Launch"], ["id": 11, "title": "Land"]], "owner": ["id": 7, "email": "a@x.io"]],
                ["id": 2, "tasks": []],
            ]], [], "")
            #expect(response.status == 200, "\(response.text)")
            let result = try response.json()
            #expect(result["inserted"] == 5)
            #expect(result["updated"] == 0)
            #expect(result["objects"] == [["entity": "Project", "key": 1], ["entity": "Project", "key": 2]])
            #expect(result["changeSeq"]?.numberValue?.int64Value ?? 0 > 0)
            let apollo = try get("entities/Project/objects/1")
            #expect(apollo["tasks"] == [10, 11])
            #expect(apollo["owner"] == 7)
            #expect(apollo["budget"] == "12345678901234567.891", "a decimal sent as a JSON number keeps every digit")
            #expect(apollo["updatedAt"] == "2024-01-02T03:04:05.000Z")
            #expect(try get("entities/Project/objects/2")["name"] == "untitled", "a new object gets the model default (R-P4)")
        }
    }

    @Test func R_P2_aMissingKeyPathMapsNothing() throws {
        try withProjects { post, get in
            let result = try post(["other": []], [], "").json()
            #expect(result["inserted"] == 0)
            #expect(result["objects"] == [])
            #expect(try get("entities/Project/objects")["items"] == [])
        }
    }

    @Test func R_I2_R_I5_identityIsFoundAfterCoercionAndDuplicatesMerge() throws {
        try withProjects { post, get in
            _ = try post(["projects": [["id": 1, "name": "A"]]], [], "")
            let second = try post(["projects": [["id": "1", "name": "B"], ["id": 1, "name": "C"]]], [], "").json()
            #expect(second["inserted"] == 0)
            #expect(second["updated"] == 1)
            #expect(try get("entities/Project/objects?count=true")["total"] == 1)
            #expect(try get("entities/Project/objects/1")["name"] == "C", "the later representation wins")
        }
    }

    @Test func R_P3_stringsAreStoredWholeWithEmbeddedNULsAndEmpty() throws {
        try withProjects { post, get in
            let names: [String] = ["a\u{0}b", "", "\u{0}", "tail\u{0}"]
            for (index, name) in names.enumerated() {
                let response = try post(["projects": [["id": .number(JSONNumber(index + 1)), "name": .string(name)]]], [], "")
                #expect(response.status == 200, "\(response.text)")
            }
            for (index, name) in names.enumerated() {
                #expect(try get("entities/Project/objects/\(index + 1)")["name"] == .string(name), "\(index)")
            }
        }
    }

    @Test func R_I6_R_P3_badValuesAre422WithPayloadPointersAndStoreNothing() throws {
        try withProjects { post, get in
            let response = try post(["projects": [["id": 1, "tasks": [["id": 5, "title": "ok"], ["id": "12x", "title": "bad"]]], ["name": "no id"]]], [], "")
            #expect(response.status == 422)
            let pointers = try response.json()["errors"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } ?? []
            #expect(pointers.contains("/projects/0/tasks/1/id"))
            #expect(pointers.contains("/projects/1"))
            #expect(try get("entities/Project/objects")["items"] == [])
            #expect(try get("changes")["changes"] == [])
        }
    }

    /// An entity's own payload route reads the attributes whose JSONKeyPath annotation names a key (R-P10):
    /// in a model without annotations a representation finds no identity, and the error names the keys
    /// that were not read and how to map them.
    @Test func R_I6_R_P10_aMissingIdentityNamesTheKeysTheMappingDidNotRead() throws {
        let model: JSONValue = ["entities": [["name": "Character", "userInfo": ["identityAttributes": "identifier"],
                                              "attributes": [["name": "identifier", "type": "integer64"], ["name": "name", "type": "string"]]]]]
        try ModelAPI.with(model: model) { api in
            let response = try api.client.sendJSON("POST", api.base + "/entities/Character/payloads", [["id": 1699, "name": "Spider-Man"]], token: api.key)
            #expect(response.status == 422)
            let message = try response.json()["errors"]?.arrayValue?.first { $0["pointer"] == "/0" }?["message"]?.stringValue
            #expect(message == "the identification attribute 'identifier' has no value; keys the mapping does not read: 'id', 'name' "
                    + "(if the identity is under one of them, map it to 'identifier' in the mapping's attributes, or with a JSONKeyPath "
                    + "annotation on the attribute for the entity's own payload route)")
        }
    }

    @Test func R_P4_missingKeysLeaveValuesAndNullClearsThem() throws {
        try withProjects { post, get in
            _ = try post(["projects": [["id": 1, "name": "Apollo", "budget": "10.5", "owner": ["id": 7, "email": "a@x.io"]]]], [], "")
            _ = try post(["projects": [["id": 1, "budget": nil]]], [], "")
            let project = try get("entities/Project/objects/1")
            #expect(project["name"] == "Apollo")
            #expect(project["budget"] == .null)
            #expect(project["owner"] == 7, "a missing relationship key leaves it untouched")
            _ = try post(["projects": [["id": 1, "owner": nil]]], [], "")
            #expect(try get("entities/Project/objects/1")["owner"] == .null, "null empties it")
        }
    }

    @Test func R_P5_identityValuesFindOrStub() throws {
        try withProjects { post, get in
            _ = try post(["projects": [["id": 1, "tasks": [["id": 10, "title": "Known"]]]]], [], "")
            let result = try post(["projects": [["id": 2, "tasks": [10, 99]]]], [], "").json()
            #expect(result["inserted"] == 2, "project 2 and a stub for task 99")
            let stub = try get("entities/Task/objects/99")
            #expect(stub["_stub"] == true)
            #expect(try get("entities/Task/objects/10")["title"] == "Known")
            #expect(try get("entities/Project/objects/2")["tasks"] == [10, 99])
            _ = try post(["projects": [["id": 3, "tasks": [["id": 99, "title": "Now full"]]]]], [], "")
            #expect(try get("entities/Task/objects/99")["_stub"] == nil, "a full representation ends the stub")
            // A stub of an entity with required attributes (User.email) stays valid when named again later.
            _ = try post(["projects": [["id": 4, "owner": 55]]], [], "")
            let again = try post(["projects": [["id": 5, "owner": 55]]], [], "")
            #expect(again.status == 200, "\(again.text)")
            #expect(try get("entities/User/objects/55")["_stub"] == true)
            #expect(try get("entities/Project/objects/5")["owner"] == 55)
        }
    }

    @Test(arguments: [("set", [10, 11, 12], [11, 12]), ("replace", [11, 12], [11, 12]), ("union", [10, 11, 12], [10, 11, 12])])
    func R_P6_assignmentPolicies(policy: String, tasksInStore: [Int], projectTasks: [Int]) throws {
        try withProjects(policy: policy) { post, get in
            _ = try post(["projects": [["id": 1, "tasks": [["id": 10, "title": "a"], ["id": 11, "title": "b"]]]]], [], "")
            let result = try post(["projects": [["id": 1, "tasks": [["id": 11, "title": "b2"], ["id": 12, "title": "c"]]]]], [], "").json()
            #expect(result["deleted"] == .number(JSONNumber(policy == "replace" ? 1 : 0)))
            let stored = try get("entities/Task/objects?orderBy=id")["items"]?.arrayValue?.compactMap { $0["id"]?.numberValue?.int64Value } ?? []
            #expect(stored == tasksInStore.map(Int64.init))
            #expect(try get("entities/Project/objects/1")["tasks"] == .array(projectTasks.map { .number(JSONNumber($0)) }))
            #expect(try get("entities/Task/objects/11")["title"] == "b2", "present again: updated in place")
        }
    }

    @Test func R_P7_modificationAttributeSkipsStaleRepresentations() throws {
        try withProjects(extra: [("modificationAttribute", "updatedAt")]) { post, get in
            _ = try post(["projects": [["id": 1, "name": "new", "updated_at": "2024-06-01T00:00:00Z"]]], [], "")
            let stale = try post(["projects": [["id": 1, "name": "old", "updated_at": "2024-01-01T00:00:00Z"]]], [], "").json()
            #expect(stale["unchanged"] == 1)
            #expect(try get("entities/Project/objects/1")["name"] == "new")
            let newer = try post(["projects": [["id": 1, "name": "newer", "updated_at": "2024-07-01T00:00:00Z"]]], [], "").json()
            #expect(newer["updated"] == 1)
            #expect(try get("entities/Project/objects/1")["name"] == "newer")
        }
    }

    @Test func R_P7_aCurrentObjectsNestedRepresentationsAreNotMapped() throws {
        try withProjects(extra: [("modificationAttribute", "updatedAt")]) { post, get in
            _ = try post(["projects": [
                ["id": 1, "name": "one", "updated_at": "2024-06-01T00:00:00Z", "owner": ["id": 7, "email": "first@x.io"]],
                ["id": 2, "name": "two", "updated_at": "2024-06-01T00:00:00Z", "owner": ["id": 7, "email": "first@x.io"]],
            ]], [], "")
            // Project 2 changed; project 1 did not, so its owner and tasks are skipped with it (RestKit maps
            // nothing of a skipped object) even though its representation comes later.
            let result = try post(["projects": [
                ["id": 2, "name": "two, renamed", "updated_at": "2024-07-01T00:00:00Z", "owner": ["id": 7, "email": "fresh@x.io"]],
                ["id": 1, "name": "one, stale", "updated_at": "2024-06-01T00:00:00Z", "owner": ["id": 7, "email": "stale@x.io"],
                 "tasks": [["id": 10, "title": "stale task"]]],
            ]], [], "").json()
            #expect(result["updated"] == 2, "project 2 and its owner")
            #expect(result["unchanged"] == 1)
            #expect(result["inserted"] == 0)
            #expect(try get("entities/User/objects/7")["email"] == "fresh@x.io")
            #expect(try get("entities/Project/objects/1")["name"] == "one")
            #expect(try get("entities/Project/objects/2")["name"] == "two, renamed")
            #expect(try get("entities/Task/objects?count=true")["total"] == 0)
        }
    }

    @Test func R_P7_R_I5_representationsOfOneObjectAreMergedBeforeTheModificationCheck() throws {
        try withProjects(extra: [("modificationAttribute", "updatedAt")]) { post, get in
            _ = try post(["projects": [["id": 1, "name": "one", "updated_at": "2024-06-01T00:00:00Z"]]], [], "")
            // The first representation alone is not newer; merged with the second (whose values win) it is,
            // so the object is updated with both: the second's name, the first's tasks.
            let result = try post(["projects": [
                ["id": 1, "name": "one, stale", "updated_at": "2024-06-01T00:00:00Z", "tasks": [["id": 10, "title": "kept"]]],
                ["id": 1, "name": "one, newest", "updated_at": "2024-08-01T00:00:00Z"],
            ]], [], "").json()
            #expect(result["updated"] == 1)
            #expect(result["inserted"] == 1, "task 10")
            let project = try get("entities/Project/objects/1")
            #expect(project["name"] == "one, newest")
            #expect(project["updatedAt"] == "2024-08-01T00:00:00.000Z")
            #expect(project["tasks"] == [10])
            // The other order (an event stream, newest first): the newest copy still wins, and the older
            // one after it changes nothing (R-I5: the same rule as against the store).
            let merged = try post(["projects": [
                ["id": 1, "name": "newest, first", "updated_at": "2024-09-01T00:00:00Z"],
                ["id": 1, "name": "stored, later", "updated_at": "2024-08-01T00:00:00Z"],
            ]], [], "").json()
            #expect(merged["unchanged"] == 0)
            #expect(merged["updated"] == 1)
            #expect(try get("entities/Project/objects/1")["name"] == "newest, first")
        }
    }

    @Test func R_P8_invalidObjectsFailThePayloadOrAreDiscarded() throws {
        try withProjects { post, get in
            let failed = try post(["projects": [["id": 1, "tasks": [["id": 5, "title": ""]]]]], [], "")
            #expect(failed.status == 422)
            #expect(try failed.json()["errors"]?.arrayValue?.first?["pointer"] == "/projects/0/tasks/0/title")
            let missingEmail = try post(["projects": [["id": 1, "owner": ["id": 7]]]], [], "")
            #expect(missingEmail.status == 422, "User.email is required")
            #expect(try get("entities/Project/objects")["items"] == [])
        }
        try withProjects(extra: [("discardsInvalidObjectsOnInsert", true)]) { post, get in
            let result = try post(["projects": [["id": 1, "name": "ok"], ["name": "no identity"]]], [], "").json()
            #expect(result["inserted"] == 1)
            #expect(result["discarded"]?.arrayValue?.first?["pointer"] == "/projects/1")
            #expect(result["objects"]?.arrayValue?.last?["discarded"] == true)
            #expect(try get("entities/Project/objects?count=true")["total"] == 1)
        }
    }

    @Test func R_P11_dryRunStoresNothingAndIdempotencyKeysApplyOnce() throws {
        try withProjects { post, get in
            let dry = try post(["projects": [["id": 1]]], [], "?dryRun=true").json()
            #expect(dry["inserted"] == 1)
            #expect(try get("entities/Project/objects")["items"] == [])
            #expect(try get("changes")["changes"] == [])
            // A dry run takes no sequence number and reports none (issue 16): the next write's is the first.
            #expect(dry["dryRun"] == true)
            #expect(dry["changeSeq"] == .null)
            #expect(try post(["projects": [["id": 9]]], [], "?explain=true").json()["changeSeq"] == .null)

            let first = try post(["projects": [["id": 1]]], [("Idempotency-Key", "abc")], "")
            #expect(try first.json()["changeSeq"] == 1)
            #expect(try first.json()["dryRun"] == nil)
            let retry = try post(["projects": [["id": 1]]], [("Idempotency-Key", "abc")], "")
            #expect(try retry.json() == first.json())
            #expect(try retry.json()["inserted"] == 1, "the retry returns the first result")
            #expect(try get("changes")["changes"]?.arrayValue?.count == 1, "and applies nothing again")
            let reused = try post(["projects": [["id": 2]]], [("Idempotency-Key", "abc")], "")
            #expect(reused.status == 422)
            // The store names an idempotency key; the route says it as the header it came in.
            #expect(try reused.json()["detail"] == "This Idempotency-Key was used with a different request.")
            #expect(try reused.json()["errors"] == [["pointer": "", "message": "Idempotency-Key reused with another body"]])
            #expect(try get("entities/Project/objects?count=true")["total"] == 1)
        }
    }

    @Test func R_P13_explainTracesEveryObjectAndStoresNothing() throws {
        try withProjects(policy: "replace", extra: [("modificationAttribute", "updatedAt")]) { post, get in
            _ = try post(["projects": [["id": 1, "updated_at": "2024-06-01T00:00:00Z", "tasks": [["id": 10, "title": "a"], ["id": 11, "title": "b"]]]]], [], "")
            let explained = try post(["projects": [
                ["id": 1, "updated_at": "2024-07-01T00:00:00Z", "tasks": [["id": 11, "title": "b"], ["id": 12, "title": "c"]]],
                ["id": 2, "tasks": [99]],
            ]], [], "?explain=true").json()
            let trace = try #require(explained["explain"]?.arrayValue)
            func action(_ entity: String, _ key: Int) -> String? {
                trace.first { $0["entity"] == .string(entity) && $0["key"] == .number(JSONNumber(key)) }?["action"]?.stringValue
            }
            #expect(action("Project", 1) == "update")
            #expect(action("Project", 2) == "insert")
            #expect(action("Task", 11) == "unchanged")
            #expect(action("Task", 12) == "insert")
            #expect(action("Task", 10) == "delete")
            #expect(trace.first { $0["key"] == 99 }?["reason"]?.stringValue?.contains("stub") == true)
            #expect(explained["timings"]?["identify"]?.numberValue != nil)
            // explain implies dryRun: nothing changed.
            #expect(try get("entities/Project/objects/1")["updatedAt"] == "2024-06-01T00:00:00.000Z")
            #expect(try get("entities/Task/objects?count=true")["total"] == 2)
        }
    }
}

@Suite(.serialized) struct PayloadHostileInputTests {
    /// A model with every coercible type, to send values that do not coerce.
    static let typesModel: JSONValue = ["entities": [
        ["name": "Thing", "attributes": [
            ["name": "id", "type": "integer64"], ["name": "small", "type": "integer16"], ["name": "when", "type": "date"],
            ["name": "uid", "type": "uuid"], ["name": "data", "type": "binary"], ["name": "flag", "type": "boolean"],
            ["name": "link", "type": "uri"],
        ], "relationships": [["name": "children", "destination": "Thing", "toMany": true, "inverse": "parent"],
                             ["name": "parent", "destination": "Thing", "inverse": "children"]]],
    ]]

    func withThings(_ body: (_ post: (JSONValue) throws -> RawResponse, _ count: () throws -> Int) throws -> Void) throws {
        let server = try InProcessServer()
        let client = server.client
        let key = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        #expect(try client.sendJSON("PUT", "/v1/tenants/acme/models/m", Self.typesModel, token: key).status == 201)
        let mapping: JSONValue = ["entity": "Thing", "keyPath": "things",
                                  "attributes": ["id", "small", "when", "uid", "data", "flag", "link"],
                                  "relationships": [["from": "children", "to": "children",
                                                     "mapping": ["entity": "Thing", "attributes": ["id"]]]]]
        #expect(try client.sendJSON("PUT", "/v1/tenants/acme/models/m/mappings/things", mapping, token: key).status == 201)
        try body({ payload in try client.sendJSON("POST", "/v1/tenants/acme/models/m/mappings/things/payloads", payload, token: key) },
                 { try client.send("GET", "/v1/tenants/acme/models/m/entities/Thing/objects?count=true", token: key).json()["total"]?.numberValue?.int64Value.map(Int.init) ?? -1 })
    }

    @Test(arguments: [
        ("small", JSONValue.number(JSONNumber(40_000)), "integer16"),
        ("id", JSONValue.string("9223372036854775808"), "id"),
        ("when", JSONValue.string("2024-13-45T99:00:00Z"), "when"),
        ("uid", JSONValue.string("not-a-uuid"), "uid"),
        ("data", JSONValue.string("***not base64***"), "data"),
        ("flag", JSONValue.string("maybe"), "flag"),
        ("id", JSONValue.array([1]), "id"),
    ])
    func R_P3_valuesThatDoNotCoerceAre422WithTheirPointer(attribute: String, value: JSONValue, _: String) throws {
        try withThings { post, count in
            var thing = JSONObject([("id", 1)])
            thing[attribute] = value
            let response = try post(["things": [.object(thing)]])
            #expect(response.status == 422, "\(attribute): \(response.text)")
            #expect(try response.json()["errors"]?.arrayValue?.contains { $0["pointer"] == .string("/things/0/\(attribute)") } == true)
            #expect(try count() == 0)
        }
    }

    @Test func deeplyNestedPayloadsAreRefusedCleanly() throws {
        try withThings { post, count in
            var nested: JSONValue = ["id": 1]
            for depth in 2...1_000 { nested = ["id": .number(JSONNumber(depth)), "children": [nested]] }
            let response = try post(["things": [nested]])
            #expect(response.status == 400, "JSON deeper than the 512 limit")
            #expect(try count() == 0)
            var shallow: JSONValue = ["id": 1]
            for depth in 2...100 { shallow = ["id": .number(JSONNumber(depth)), "children": [shallow]] }
            let accepted = try post(["things": [shallow]])
            // The mapping describes two levels (a thing and its children), so deeper levels are not mapped.
            #expect(try accepted.json()["inserted"] == 2)
            #expect(try count() == 2)
        }
    }

    @Test func largeArraysMapInOneTransaction() throws {
        try withThings { post, count in
            let things = JSONValue.array((0..<20_000).map { .object(JSONObject([("id", .number(JSONNumber($0)))])) })
            let response = try post(["things": things])
            #expect(try response.json()["inserted"] == 20_000)
            #expect(try count() == 20_000)
        }
    }

    @Test func R_I5_conflictingDuplicatesResolveToTheLaterValue() throws {
        try withThings { post, _ in
            let response = try post(["things": [["id": 1, "flag": true], ["id": 1, "flag": false, "children": [2]], ["id": 1, "small": 3]]])
            #expect(try response.json()["inserted"] == 2)
            #expect(try response.json()["objects"]?.arrayValue?.count == 3, "one entry per top-level representation")
        }
    }
}

@Suite(.serialized) struct ConcurrencyTests {
    /// How much longer the concurrency tests run: 1 in `make test`, more in `make soak`.
    static let scale = max(1, Int(ProcessInfo.processInfo.environment["CARTOGRAPH_SOAK_SCALE"] ?? "") ?? 1)

    /// R-S3 with R-Q3: readers page through a store with cursors while writers insert and delete.
    /// Every reader sees every object that lives throughout exactly once, never one twice.
    @Test func R_S3_R_Q3_cursorsNeverSkipOrRepeatWhileWritersInsertAndDelete() throws {
        try ModelAPI.with(model: projectsModel, name: "work", mappings: ["projects": projectMapping()]) { api in
            let stable = 0..<(500 * Self.scale), doomed = stable.upperBound..<(1_000 * Self.scale)
            for start in stride(from: 0, to: doomed.upperBound, by: 500) {
                try api.map("projects", ["projects": .array((start..<start + 500).map { ["id": .number(JSONNumber($0))] })])
            }
            let writers = 4, readers = 4, rounds = 25 * Self.scale
            let failures = Mutex<[String]>([])
            let inserted = Atomic<Int>(0), deleted = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: writers + readers) { index in
                func fail(_ message: String) { failures.withLock { $0.append(message) } }
                if index < writers {
                    for round in 0..<rounds {
                        let id = 10_000_000 + index * 100_000 + round
                        guard let posted = try? api.post("projects", ["projects": [["id": .number(JSONNumber(id))]]]), posted.status == 200 else {
                            return fail("writer \(index): POST failed")
                        }
                        inserted.add(1, ordering: .relaxed)
                        // Each writer deletes its own share of the doomed range.
                        let victim = doomed.lowerBound + round * writers + index
                        guard doomed.contains(victim) else { continue }
                        let gone = try? api.client.send("DELETE", api.base + "/entities/Project/objects/\(victim)", token: api.key).status
                        guard gone == 204 else { return fail("writer \(index): DELETE \(victim) answered \(String(describing: gone))") }
                        deleted.add(1, ordering: .relaxed)
                    }
                } else {
                    var seen: [Int] = []
                    var cursor: String?
                    repeat {
                        let page = (try? api.get("entities/Project/objects?orderBy=projectID&limit=97" + (cursor.map { "&cursor=\($0)" } ?? "")))
                        guard let items = page?["items"]?.arrayValue else { return fail("reader \(index): a page failed") }
                        seen += items.compactMap { $0["projectID"]?.numberValue?.int64Value }.map(Int.init)
                        cursor = page?["next"]?.stringValue
                    } while cursor != nil
                    if Set(seen).count != seen.count { fail("reader \(index): an object came twice") }
                    if !Set(stable).isSubset(of: Set(seen)) { fail("reader \(index): skipped \(Set(stable).subtracting(seen).count) objects") }
                    if seen != seen.sorted() { fail("reader \(index): out of order") }
                }
            }
            #expect(failures.withLock { $0 } == [])
            let total = try api.get("entities/Project/objects?count=true&limit=1")["total"]
            #expect(total == .number(JSONNumber(doomed.upperBound + inserted.load(ordering: .relaxed) - deleted.load(ordering: .relaxed))))
            #expect(deleted.load(ordering: .relaxed) == min(doomed.count, writers * rounds))
        }
    }

    /// R-P7 with R-S3: eight clients re-load the same 300 items at once, each payload with its own
    /// versions (a `modificationAttribute`), through the read-ahead that looks objects up before each
    /// payload's write transaction while the others commit. Every item ends at the newest version any
    /// payload carried, with that payload's name: no stale skip and no lost update, whatever the interleaving.
    @Test func R_P7_R_S3_concurrentReloadsLeaveEveryObjectAtItsNewestVersion() throws {
        let model: JSONValue = ["entities": [
            ["name": "Item", "userInfo": ["identityAttributes": "itemID"],
             "attributes": [["name": "itemID", "type": "integer64"], ["name": "version", "type": "integer64"], ["name": "name", "type": "string"]]],
        ]]
        let mapping: JSONValue = ["entity": "Item", "keyPath": "items", "modificationAttribute": "version",
                                  "attributes": ["id": "itemID", "version": "version", "name": "name"]]
        try ModelAPI.with(model: model, name: "items", mappings: ["items": mapping]) { api in
            let items = 0..<300, posters = 8, rounds = 6 * Self.scale
            /// The version poster `poster` gives item `item` in `round`: every poster's versions interleave with the others'.
            @Sendable func version(_ item: Int, _ poster: Int, _ round: Int) -> Int { ((round * posters + poster) * 7 + item) % (posters * rounds) + 1 }
            try api.map("items", ["items": .array(items.map { ["id": .number(JSONNumber($0)), "version": 0, "name": "first"] })])
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: posters) { poster in
                for round in 0..<rounds {
                    let payload: JSONValue = ["items": .array(items.map { item in
                        let v = version(item, poster, round)
                        return ["id": .number(JSONNumber(item)), "version": .number(JSONNumber(v)), "name": .string("v\(v)")]
                    })]
                    guard let status = try? api.post("items", payload).status, status == 200 else {
                        return failures.withLock { $0.append("poster \(poster) round \(round): POST failed") }
                    }
                }
            }
            #expect(failures.withLock { $0 } == [])
            let page = try api.get("entities/Item/objects?orderBy=itemID&limit=1000")["items"]?.arrayValue ?? []
            #expect(page.count == items.count)
            for stored in page {
                guard let item = stored["itemID"]?.numberValue?.int64Value.map(Int.init) else { continue }
                let newest = (0..<posters).flatMap { poster in (0..<rounds).map { version(item, poster, $0) } }.max() ?? 0
                #expect(stored["version"] == .number(JSONNumber(newest)) && stored["name"] == .string("v\(newest)"), "item \(item)")
            }
        }
    }

    @Test func R_S3_concurrentWritersAndReadersGetNoErrorsAndExactCounts() throws {
        let server = try InProcessServer()
        let client = server.client
        var keys: [String] = []
        for tenant in ["acme", "globex"] {
            let key = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": .string(tenant)], token: server.adminToken).json()["apiKey"]?.stringValue)
            #expect(try client.sendJSON("PUT", "/v1/tenants/\(tenant)/models/work", projectsModel, token: key).status == 201)
            #expect(try client.sendJSON("PUT", "/v1/tenants/\(tenant)/models/work/mappings/projects", projectMapping(), token: key).status == 201)
            keys.append(key)
        }
        let statuses = Mutex<[Int]>([])
        let tenantKeys = keys
        // 16 writers: 8 per tenant, each with its own 50 projects sharing 5 users; 8 readers paging meanwhile.
        DispatchQueue.concurrentPerform(iterations: 24) { index in
            let tenant = index % 2 == 0 ? "acme" : "globex", key = tenantKeys[index % 2]
            let status: Int
            if index < 16 {
                let projects: [JSONValue] = (0..<50).map { n in
                    ["id": .number(JSONNumber(index * 100 + n)), "owner": ["id": .number(JSONNumber(n % 5)), "email": "u@x.io"]]
                }
                status = (try? client.sendJSON("POST", "/v1/tenants/\(tenant)/models/work/mappings/projects/payloads",
                                               ["projects": .array(projects)], token: key).status) ?? 0
            } else {
                status = (try? client.send("GET", "/v1/tenants/\(tenant)/models/work/entities/Project/objects?limit=100", token: key).status) ?? 0
            }
            statuses.withLock { $0.append(status) }
        }
        #expect(statuses.withLock { $0.allSatisfy { $0 == 200 } }, "\(statuses.withLock { $0 })")
        for (tenant, key) in zip(["acme", "globex"], keys) {
            #expect(try client.send("GET", "/v1/tenants/\(tenant)/models/work/entities/Project/objects?count=true&limit=1", token: key)
                .json()["total"] == 400)
            #expect(try client.send("GET", "/v1/tenants/\(tenant)/models/work/entities/User/objects?count=true&limit=1", token: key)
                .json()["total"] == 5, "shared owners are identified, never duplicated, across concurrent payloads")
        }
    }
}
