// Models, objects, queries, deletions and the change feed through the routes, in process (docs/api.md,
// model.md, change-feed.md, queries.md). `seedComics` writes objects through the store's Swift API on the
// file the server uses; every read and delete goes through the server.
import Foundation
import Synchronization
import Testing
import CartographCore
import CartographStore
import CartographTesting

let comicsModel: JSONValue = [
    "entities": [
        ["name": "Publisher", "attributes": [["name": "identifier", "type": "integer64"], ["name": "name", "type": "string"]],
         "relationships": [["name": "characters", "destination": "Character", "toMany": true, "inverse": "publisher", "deleteRule": "deny"]],
         "userInfo": ["identityAttributes": "identifier"]],
        ["name": "Character", "attributes": [["name": "identifier", "type": "integer64"], ["name": "name", "type": "string"],
                                             ["name": "realName", "type": "string"]],
         "relationships": [["name": "publisher", "destination": "Publisher", "inverse": "characters"]],
         "userInfo": ["identityAttributes": "identifier"]],
    ],
]

/// Registers tenant `acme` and its model `comics` on `server`; returns the tenant's admin key.
func registerComics(on server: some TestServer) throws -> String {
    let key = try #require(try server.client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
    let created = try server.client.sendJSON("PUT", "/v1/tenants/acme/models/comics", comicsModel, token: key)
    #expect(created.status == 201)
    return key
}

/// An in-process server with tenant `acme` and model `comics` registered, and the tenant's admin key.
func withComics(_ body: (InProcessServer, String) throws -> Void) throws {
    let server = try InProcessServer()
    try body(server, try registerComics(on: server))
}

/// Seeds publishers and characters through the store file the server uses.
func seedComics(_ server: some TestServer, characters: Int = 3) throws {
    let path = server.dataDirectory.appendingPathComponent("data/tenants/acme/comics.sqlite").path
    let store = try ModelStore(name: "comics", path: path)
    _ = try store.write { (tx) throws(CartographError) in
        let marvel = try tx.insert(entity: "Publisher", values: ["identifier": .integer(1), "name": .string("Marvel")])
        let names = ["Spider-Man", "Iron Man", "Thor", "Hulk", "Storm"]
        for i in 0..<characters {
            let id = try tx.insert(entity: "Character", values: ["identifier": .integer(Int64(100 + i)), "name": .string(names[i % names.count])])
            try tx.setRelationship(id: id, entity: "Character", relationship: "publisher", to: [marvel])
        }
    }
}

@Suite(.serialized) struct ModelRoutesTests {
    @Test func R_M6_registerReRegisterAndMigrateOverHTTP() throws {
        try withComics { (server, key) throws in
            let client = server.client
            let model = try client.send("GET", "/v1/tenants/acme/models/comics", token: key).json()
            #expect(model["version"] == 1)
            #expect(model["entities"]?.arrayValue?.first?["identificationAttributes"] == ["identifier"])
            #expect(model["entities"]?.arrayValue?.first?["attributes"]?.arrayValue?.first?["optional"] == true)

            let same = try client.sendJSON("PUT", "/v1/tenants/acme/models/comics", comicsModel, token: key)
            #expect(same.status == 200)
            #expect(try same.json()["version"] == 1)

            var entities = comicsModel["entities"]!.arrayValue!
            var character = entities[1].objectValue!
            character["attributes"] = .array(character["attributes"]!.arrayValue! + [["name": "alias", "type": "string"]])
            entities[1] = .object(character)
            let migrated = try client.sendJSON("PUT", "/v1/tenants/acme/models/comics", ["entities": .array(entities)], token: key)
            #expect(migrated.status == 200)
            #expect(try migrated.json()["version"] == 2)

            let destructive = try client.sendJSON("PUT", "/v1/tenants/acme/models/comics", ["entities": .array([entities[0]].map { e in
                var p = e.objectValue!; p["relationships"] = []; return .object(p) })], token: key)
            #expect(destructive.status == 409)
            #expect(try destructive.json()["errors"]?.arrayValue?.isEmpty == false)
            #expect(try client.send("GET", "/v1/tenants/acme/models/comics", token: key).json()["version"] == 2)

            let list = try client.send("GET", "/v1/tenants/acme/models", token: key).json()
            #expect(list["items"]?.arrayValue?.first?["name"] == "comics")
            #expect(list["items"]?.arrayValue?.first?["version"] == 2)
        }
    }

    @Test func R_M4_coreDataXMLRegistersAndRoundTrips() throws {
        try withComics { (server, key) throws in
            let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../../../shared/fixtures/groot/Model.xcdatamodeld/Model.xcdatamodel/contents")
            let xml = try Array(Data(contentsOf: fixture))
            let created = try server.client.send("PUT", "/v1/tenants/acme/models/groot", headers: [("Content-Type", "application/xml")],
                                                 body: xml, token: key)
            #expect(created.status == 201)
            let model = try created.json()
            let names = Set(model["entities"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [])
            #expect(names.isSuperset(of: ["Character", "Publisher", "Power"]))
            // The normalized JSON registers again unchanged.
            let again = try server.client.sendJSON("PUT", "/v1/tenants/acme/models/groot", model, token: key)
            #expect(again.status == 200)
            #expect(try again.json()["version"] == 1)
            let notAModel = try server.client.send("PUT", "/v1/tenants/acme/models/bad", headers: [("Content-Type", "application/xml")],
                                                   body: Array("<html><body/></html>".utf8), token: key)
            #expect(notAModel.status == 422)
            #expect(try server.client.send("GET", "/v1/tenants/acme/models/bad", token: key).status == 404)
        }
    }

    @Test func R_M5_invalidModelsAre422WithPointersAndLimits() throws {
        try withComics { (server, key) throws in
            let dangling: JSONValue = ["entities": [["name": "A", "relationships": [["name": "b", "destination": "Nowhere"]]]]]
            let response = try server.client.sendJSON("PUT", "/v1/tenants/acme/models/broken", dangling, token: key)
            #expect(response.status == 422)
            #expect(try response.json()["errors"]?.arrayValue?.first?["pointer"]?.stringValue?.hasPrefix("/entities/0/relationships/0") == true)

            let huge: JSONValue = ["entities": .array((0..<5_000).map { .object(JSONObject([("name", .string("E\($0)"))])) })]
            let tooMany = try server.client.sendJSON("PUT", "/v1/tenants/acme/models/huge", huge, token: key)
            #expect(tooMany.status == 422)
            #expect(tooMany.text.contains("1000") || tooMany.text.contains("1,000"))

            let longName: JSONValue = ["entities": [["name": .string(String(repeating: "A", count: 1 << 20))]]]
            let tooLong = try server.client.sendJSON("PUT", "/v1/tenants/acme/models/long", longName, token: key)
            #expect(tooLong.status == 422)
            #expect(tooLong.body.count < 4096, "the error does not echo a 1 MiB name")
            #expect(try server.client.send("GET", "/v1/tenants/acme/models", token: key).json()["items"]?.arrayValue?.count == 1)
        }
    }

    @Test func R_Q1_R_Q3_R_Q4_listFilterOrderPageCountIncludeAndModelShape() throws {
        try withComics { (server, key) throws in
            try seedComics(server, characters: 5)
            let client = server.client
            let base = "/v1/tenants/acme/models/comics/entities/Character/objects"
            let first = try client.send("GET", base + "?orderBy=-name&limit=2&count=true", token: key).json()
            #expect(first["items"]?.arrayValue?.map { $0["name"] } == ["Thor", "Storm"])
            #expect(first["total"] == 5)
            let cursor = try #require(first["next"]?.stringValue)
            let second = try client.send("GET", base + "?orderBy=-name&limit=2&cursor=\(cursor)", token: key).json()
            #expect(second["items"]?.arrayValue?.map { $0["name"] } == ["Spider-Man", "Iron Man"])

            let filtered = try client.send("GET", base + "?where=" + "name BEGINSWITH[c] 'i' OR publisher.name == 'DC'".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, token: key).json()
            #expect(filtered["items"]?.arrayValue?.map { $0["name"] } == ["Iron Man"])

            let included = try client.send("GET", base + "?include=publisher&limit=1", token: key).json()
            #expect(included["items"]?.arrayValue?.first?["publisher"]?["name"] == "Marvel")
            let plain = try client.send("GET", base + "?limit=1", token: key).json()
            #expect(plain["items"]?.arrayValue?.first?["publisher"] == 1)
            #expect(plain["items"]?.arrayValue?.first?["_entity"] == "Character")

            let queried = try client.sendJSON("POST", "/v1/tenants/acme/models/comics/entities/Character/query",
                                              ["where": "identifier IN $ids", "arguments": ["ids": [100, 104]], "orderBy": ["identifier"]],
                                              token: key).json()
            #expect(queried["items"]?.arrayValue?.map { $0["identifier"] } == [100, 104])

            let one = try client.send("GET", base + "/102", token: key)
            #expect(try one.json()["name"] == "Thor")
            #expect(try client.send("GET", base + "/999", token: key).status == 404)
            #expect(try client.send("GET", "/v1/tenants/acme/models/comics/entities/Publisher/objects/1?include=characters", token: key)
                .json()["characters"]?.arrayValue?.count == 5)
        }
    }

    @Test(arguments: [
        ("?where=nonsense%20%3D%3D%201", "nonsense"),
        ("?where=name%20%3D%3D", "offset"),
        ("?limit=0", "limit"),
        ("?limit=1001", "limit"),
        ("?cursor=garbage", "cursor"),
        ("?orderBy=unknown", "unknown"),
        ("?include=nothing", "nothing"),
        ("?shape=xml", "shape"),
        ("?shape=json&include=publisher", "include"),
    ])
    func R_Q2_badQueriesAre400(query: String, mentions: String) throws {
        try withComics { (server, key) throws in
            let response = try server.client.send("GET", "/v1/tenants/acme/models/comics/entities/Character/objects" + query, token: key)
            #expect(response.status == 400, "\(query)")
            #expect(response.text.contains(mentions), "\(query): \(response.text)")
        }
    }

    /// `LIKE 'Spider%'` is valid but matches a literal '%' (NSPredicate's wildcards are `*` and `?`): the
    /// page says so at the pattern's offset; LIKE's own wildcards, or none of SQL's, get no warning.
    @Test func R_Q1_aLikePatternWithSQLWildcardsIsAnsweredWithAWarning() throws {
        try withComics { (server, key) throws in
            try seedComics(server, characters: 5)
            let base = "/v1/tenants/acme/models/comics/entities/Character/objects?where="
            func list(_ predicate: String) throws -> JSONValue {
                try server.client.send("GET", base + predicate.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, token: key).json()
            }
            let sqlish = try list("name LIKE 'Spider%'")
            #expect(sqlish["items"]?.arrayValue?.isEmpty == true)
            let warning = try #require(sqlish["warnings"]?.arrayValue?.first)
            #expect(warning["pointer"] == "/where" && warning["offset"] == 10)
            #expect(warning["message"]?.stringValue?.contains("write 'Spider*'") == true)
            let meant = try list("name LIKE 'Spider*'")
            #expect(meant["items"]?.arrayValue?.map { $0["name"] } == ["Spider-Man"])
            #expect(meant["warnings"] == nil)
            #expect(try list("name LIKE 'Spider-Man'")["warnings"] == nil)
        }
    }

    @Test func R_Q2_toManyWithoutAggregateIs400() throws {
        try withComics { (server, key) throws in
            let response = try server.client.sendJSON("POST", "/v1/tenants/acme/models/comics/entities/Publisher/query",
                                                      ["where": "characters.name == 'Thor'"], token: key)
            #expect(response.status == 400)
            #expect(try response.json()["errors"]?.arrayValue?.first?["pointer"] == "/where")
            #expect(try response.json()["offset"] != nil)
        }
    }

    /// A key path crossing more relationships than SQLite can join in one query (64 tables) is a 400 at
    /// `/where` with its offset, in a list's `where` and a query's body alike, never a 500; 32 still run.
    @Test func R_Q2_aKeyPathLongerThanSQLiteCanJoinIs400() throws {
        try ModelAPI.with(model: treeModel, name: "tree", mappings: ["nodes": treeMapping]) { api in
            // A chain 0 <- 1 <- … <- 40: node 40's 32nd ancestor is node 8.
            try api.map("nodes", ["nodes": .array((0...40).map { n in n == 0 ? ["id": 0] : ["id": .number(JSONNumber(n)), "parent": ["id": .number(JSONNumber(n - 1))]] })])
            func keyPath(_ steps: Int) -> String { Array(repeating: "parent", count: steps).joined(separator: ".") + ".nodeID" }
            let within = try api.get("entities/Node/objects?where=" + HostileStrings.percentEncoded("\(keyPath(32)) == 8"))
            #expect(within["items"]?.arrayValue?.compactMap { $0["nodeID"] } == [40])
            for steps in [33, 70] {
                let listed = try api.client.send("GET", api.base + "/entities/Node/objects?where=" + HostileStrings.percentEncoded("\(keyPath(steps)) == 8"), token: api.key)
                let queried = try api.client.sendJSON("POST", api.base + "/entities/Node/query", ["where": .string("\(keyPath(steps)) == 8")], token: api.key)
                for response in [listed, queried] {
                    #expect(response.status == 400, "\(steps) steps: \(response.text)")
                    #expect(try response.json()["errors"]?.arrayValue?.first?["pointer"] == "/where")
                    #expect(try response.json()["offset"] == 0)
                    #expect(response.text.contains("at most 32 relationships"))
                }
            }
        }
    }

    /// Predicates past SQLite's own limits are answered, never a 500: 3,000 comparisons joined by OR
    /// (SQLite refuses an expression tree deeper than 1,000, and a flat chain of ORs would be one) find
    /// their objects; a list of more values than one query can bind is a 400 at `/where`.
    @Test func R_Q2_predicatesPastSQLiteExpressionAndParameterLimitsAreAnswered() throws {
        try ModelAPI.with(model: treeModel, name: "tree", mappings: ["nodes": treeMapping]) { api in
            try api.map("nodes", ["nodes": .array((0..<10).map { ["id": .number(JSONNumber($0))] })])
            let wide = (0..<3_000).map { "nodeID == \($0 * 3)" }.joined(separator: " OR ")
            let found = try api.client.sendJSON("POST", api.base + "/entities/Node/query", ["where": .string(wide), "orderBy": "nodeID"], token: api.key)
            #expect(found.status == 200, "\(found.text.prefix(300))")
            #expect(try found.json()["items"]?.arrayValue?.compactMap { $0["nodeID"] } == [0, 3, 6, 9])
            let both = (0..<3_000).map { "nodeID != \($0 + 100)" }.joined(separator: " AND ")
            #expect(try api.client.sendJSON("POST", api.base + "/entities/Node/query", ["where": .string(both)], token: api.key)
                .json()["items"]?.arrayValue?.count == 10)
            let tooMany = "nodeID IN {" + (0..<33_000).map(String.init).joined(separator: ",") + "}"
            let refused = try api.client.sendJSON("POST", api.base + "/entities/Node/query", ["where": .string(tooMany)], token: api.key)
            #expect(refused.status == 400, "\(refused.text.prefix(300))")
            #expect(try refused.json()["errors"]?.arrayValue?.first?["pointer"] == "/where", "\(refused.text.prefix(400))")
        }
    }

    @Test func R_D2_R_D3_R_D6_R_D7_deletesApplyRulesAndFeedTheChangeLog() throws {
        try withComics { (server, key) throws in
            try seedComics(server, characters: 3)
            let client = server.client
            let base = "/v1/tenants/acme/models/comics/entities"
            let start = try client.send("GET", "/v1/tenants/acme/models/comics/changes", token: key).json()
            let since = try #require(start["next"]?.numberValue?.int64Value)
            #expect(start["changes"]?.arrayValue?.count == 4)

            // Publisher.characters is `deny`: 409 and nothing deleted.
            let denied = try client.send("DELETE", base + "/Publisher/objects/1", token: key)
            #expect(denied.status == 409)
            #expect(try client.send("GET", base + "/Publisher/objects/1", token: key).status == 200)

            #expect(try client.send("DELETE", base + "/Character/objects/100", token: key).status == 204)
            #expect(try client.send("GET", base + "/Character/objects/100", token: key).status == 404)
            let missingWhere = try client.send("DELETE", base + "/Character/objects", token: key)
            #expect(missingWhere.status == 400)
            let bulk = try client.send("DELETE", base + "/Character/objects?where=TRUEPREDICATE", token: key)
            #expect(try bulk.json()["deleted"] == 2)
            #expect(try client.send("DELETE", base + "/Publisher/objects/1", token: key).status == 204)

            let feed = try client.send("GET", "/v1/tenants/acme/models/comics/changes?since=\(since)", token: key).json()
            let changes = try #require(feed["changes"]?.arrayValue)
            let tombstones = changes.filter { $0["op"] == "delete" }
            #expect(tombstones.compactMap { $0["key"]?.numberValue?.int64Value }.sorted() == [1, 100, 101, 102])
            #expect(tombstones.allSatisfy { $0["deletedAt"] != nil })
            let next = try #require(feed["next"]?.numberValue?.int64Value)
            let empty = try client.send("GET", "/v1/tenants/acme/models/comics/changes?since=\(next)", token: key).json()
            #expect(empty["changes"] == [])
            #expect(empty["next"]?.numberValue?.int64Value == next)
            // R-D7: every page carries the store's epoch; R-D6: a since beyond the head is a 400 naming it.
            #expect(empty["epoch"]?.stringValue?.count == 32)
            #expect(empty["epoch"] == start["epoch"])
            let beyond = try client.send("GET", "/v1/tenants/acme/models/comics/changes?since=\(next + 1)", token: key)
            #expect(beyond.status == 400)
            #expect(try beyond.json()["detail"]?.stringValue?.contains("(\(next))") == true)
        }
    }

    /// docs/api.md#object-keys: `{key}` is the identity value, percent-encoded. Identities holding '/' or NUL (file
    /// paths, URLs, opaque tokens) are reached with `%2F` and `%00`; in a compound key each value is
    /// encoded, so a ',' inside one is `%2C`.
    @Test func R_Q4_R_D1_objectsWhoseIdentityHoldsASlashOrNulAreReachedByTheirEncodedKey() throws {
        let model: JSONValue = ["entities": [
            ["name": "File", "userInfo": ["identityAttributes": "path"],
             "attributes": [["name": "path", "type": "string"], ["name": "size", "type": "integer64"]]],
            ["name": "Cell", "userInfo": ["identityAttributes": "sheet,ref"],
             "attributes": [["name": "sheet", "type": "string"], ["name": "ref", "type": "string"], ["name": "value", "type": "string"]]],
        ]]
        let mappings: [String: JSONValue] = [
            "files": ["entity": "File", "keyPath": "files", "attributes": ["path", "size"]],
            "cells": ["entity": "Cell", "keyPath": "cells", "attributes": ["sheet", "ref", "value"]],
        ]
        try ModelAPI.with(model: model, mappings: mappings) { api in
            try api.map("files", ["files": [["path": "docs/a/readme.md", "size": 10], ["path": "nul\u{0}byte", "size": 20], ["path": "plain", "size": 30]]])
            try api.map("cells", ["cells": [["sheet": "Q1/Q2, draft", "ref": "A1", "value": "x"]]])
            #expect(try api.object("File", "docs%2Fa%2Freadme.md")["size"] == 10)
            #expect(try api.object("File", "docs%2fa%2freadme.md")["path"] == "docs/a/readme.md")
            #expect(try api.object("File", "nul%00byte")["size"] == 20)
            #expect(try api.object("Cell", "Q1%2FQ2%2C%20draft,A1")["value"] == "x")
            // A '/' that is not encoded is a path separator: no such route.
            #expect(try api.client.send("GET", api.base + "/entities/File/objects/docs/a/readme.md", token: api.key).status == 404)
            // Encoded separators elsewhere in the path stay refused.
            let elsewhere = try api.client.send("GET", api.base + "/entities/Fi%2Fle/objects/plain", token: api.key)
            #expect(elsewhere.status == 400)
            #expect(try elsewhere.json()["detail"]?.stringValue?.contains("encoded '/'") == true)
            let deleted = try api.client.send("DELETE", api.base + "/entities/File/objects/docs%2Fa%2Freadme.md", token: api.key)
            #expect(deleted.status == 204, "\(deleted.text)")
            #expect(try api.client.send("GET", api.base + "/entities/File/objects/docs%2Fa%2Freadme.md", token: api.key).status == 404)
            #expect(try api.changes().last?["key"] == "docs/a/readme.md")
            #expect(try api.get("entities/File/objects")["items"]?.arrayValue?.compactMap { $0["path"]?.stringValue }.sorted() == ["nul\u{0}byte", "plain"])
        }
    }

    @Test func writeRoutesNeedWriteScopeAndTenantsAreIsolated() throws {
        try withComics { (server, key) throws in
            try seedComics(server, characters: 1)
            let client = server.client
            let reader = try #require(try client.sendJSON("POST", "/v1/tenants/acme/keys", ["scope": "read"], token: key).json()["apiKey"]?.stringValue)
            #expect(try client.send("GET", "/v1/tenants/acme/models/comics/entities/Character/objects", token: reader).status == 200)
            #expect(try client.send("DELETE", "/v1/tenants/acme/models/comics/entities/Character/objects/100", token: reader).status == 403)
            #expect(try client.sendJSON("PUT", "/v1/tenants/acme/models/other", comicsModel, token: reader).status == 403)
            let other = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "globex"], token: server.adminToken).json()["apiKey"]?.stringValue)
            #expect(try client.send("GET", "/v1/tenants/acme/models/comics", token: other).status == 403)
            #expect(try client.send("GET", "/v1/tenants/globex/models/comics", token: other).status == 404)
        }
    }

    @Test func concurrentPutsOfTheSameModelAreSerialized() throws {
        let server = try InProcessServer()
        let key = try #require(try server.client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let status = (try? server.client.sendJSON("PUT", "/v1/tenants/acme/models/comics", comicsModel, token: key).status) ?? 0
            statuses.withLock { $0.append(status) }
        }
        #expect(statuses.withLock { $0.sorted() } == [200, 200, 200, 200, 200, 200, 200, 201])
        #expect(try server.client.send("GET", "/v1/tenants/acme/models/comics", token: key).json()["version"] == 1)
    }

    @Test func deletingModelsAndTenantsRemovesTheirFiles() throws {
        try withComics { (server, key) throws in
            let file = server.dataDirectory.appendingPathComponent("data/tenants/acme/comics.sqlite")
            #expect(FileManager.default.fileExists(atPath: file.path))
            #expect(try server.client.send("DELETE", "/v1/tenants/acme/models/comics", token: key).status == 204)
            #expect(!FileManager.default.fileExists(atPath: file.path))
            #expect(try server.client.send("GET", "/v1/tenants/acme/models/comics", token: key).status == 404)
            #expect(try server.client.sendJSON("PUT", "/v1/tenants/acme/models/comics", comicsModel, token: key).status == 201)
            #expect(try server.client.send("DELETE", "/v1/tenants/acme", token: server.adminToken).status == 204)
            #expect(!FileManager.default.fileExists(atPath: file.deletingLastPathComponent().path))
        }
    }
}

/// Nodes each with a parent: key paths as long as wanted (`parent.parent.…`).
private let treeModel: JSONValue = ["entities": [
    ["name": "Node", "userInfo": ["identityAttributes": "nodeID"], "attributes": [["name": "nodeID", "type": "integer64"]],
     "relationships": [["name": "parent", "destination": "Node", "inverse": "children"],
                       ["name": "children", "destination": "Node", "toMany": true, "inverse": "parent"]]],
]]
private let treeMapping: JSONValue = ["entity": "Node", "keyPath": "nodes", "attributes": ["id": "nodeID"],
                                      "relationships": [["from": "parent", "to": "parent", "mapping": ["entity": "Node", "attributes": ["id": "nodeID"]]]]]
