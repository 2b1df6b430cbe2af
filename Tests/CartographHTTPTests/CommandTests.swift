// The offline commands of the `cartograph` binary.
import Foundation
import Testing
import CartographCore
import CartographTesting

struct CommandTests {
    /// Runs the binary; returns (exit status, stdout, stderr).
    func run(_ arguments: [String]) throws -> (Int32, String, String) {
        try LiveServer.runCommand(arguments)
    }

    @Test func R_M5_validateReportsEveryProblemWithItsPointer() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("model-\(UUID().uuidString).json")
        try Data(#"{"entities":[{"name":"A","attributes":[{"name":"x","type":"nope"}],"relationships":[{"name":"b","destination":"Nope"}]}]}"#.utf8).write(to: file)
        let (status, stdout, stderr) = try run(["validate", file.path])
        #expect(status == 1)
        #expect(stdout.isEmpty)
        #expect(stderr.contains("/entities/0/attributes/0/type"))
        #expect(stderr.contains("/entities/0/relationships/0/destination"))
    }

    @Test func R_M4_validatePrintsTheNormalizedModelOfACoreDataFile() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../shared/fixtures/groot/Model.xcdatamodeld/Model.xcdatamodel/contents")
        let (status, stdout, stderr) = try run(["validate", fixture.path, "--name", "groot"])
        #expect(status == 0)
        let model = try JSONReader().parse(stdout)
        #expect(model["name"] == "groot")
        #expect(model["entities"]?.arrayValue?.contains { $0["name"] == "Character" } == true)
        #expect(stderr.contains("warning:"), "undeclared Groot transformers are warnings")
    }

    /// Found while probing the JSON depth limit for the fuzz targets: the setting accepted up to 100,000 levels, and a
    /// document that deep overflows an 8 MiB stack in the reader (it recurses once per level), so
    /// one request could crash a server configured that way.
    @Test func R_S2_maxJSONDepthIsRefusedAboveWhatTheStackHolds() throws {
        let (status, _, stderr) = try run(["serve", "--max-json-depth", "100000", "--port", "0", "--data-dir", "/nonexistent-\(UUID().uuidString)"])
        #expect(status != 0)
        #expect(stderr.contains("max-json-depth must be a whole number in 1...2048"), "\(stderr)")
    }

    @Test func R_M5_mapAndValidateRefuseWhatTheModelRouteRefuses() throws {
        // A model whose dictionary transformer has an unknown operation: `map` used to register it (issue 31).
        let model: JSONValue = ["entities": [["name": "Item", "userInfo": ["identityAttributes": "id"],
                                              "attributes": [["name": "id", "type": "integer64"]]]],
                                "dictionaryTransformers": ["Legacy": [["op": "rename", "from": "a", "to": "b"]]]]
        let server = try InProcessServer()
        let key = try #require(try server.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        let refused = try server.sendJSON("PUT", "/v1/tenants/acme/models/m", model, token: key)
        #expect(refused.status == 422)
        let pointers = try #require(try refused.json()["errors"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue })
        #expect(pointers.contains { $0.hasPrefix("/dictionaryTransformers/Legacy/0") }, "\(pointers)")

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("intake-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = (model: directory.appendingPathComponent("model.json"), mapping: directory.appendingPathComponent("mapping.json"),
                     payload: directory.appendingPathComponent("payload.json"))
        try Data(model.jsonBytes).write(to: files.model)
        try Data(#"{"entity": "Item", "keyPath": "items", "attributes": ["id"]}"#.utf8).write(to: files.mapping)
        try Data(#"{"items": [{"id": 1}]}"#.utf8).write(to: files.payload)
        let store = directory.appendingPathComponent("store.sqlite").path
        let (mapStatus, mapOut, mapErr) = try run(["map", "--model", files.model.path, "--mapping", files.mapping.path, "--store", store, files.payload.path])
        #expect(mapStatus == 1)
        #expect(mapOut.isEmpty)
        for pointer in pointers { #expect(mapErr.contains(pointer), "map names \(pointer): \(mapErr)") }
        #expect(!FileManager.default.fileExists(atPath: store), "a refused model leaves no store file")
        let (validateStatus, _, validateErr) = try run(["validate", files.model.path])
        #expect(validateStatus == 1)
        for pointer in pointers { #expect(validateErr.contains(pointer), "validate names \(pointer): \(validateErr)") }
    }

    /// The store refuses a model change that loses data naming its option, not a transport: the model
    /// route says how a PUT sets it, `map` how its flag does (issue 31).
    @Test func R_M6_aDestructiveChangeIsRefusedInTheWordsOfWhoeverAsked() throws {
        let named: JSONValue = ["entities": [["name": "Item", "userInfo": ["identityAttributes": "id"],
                                              "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"]]]]]
        let unnamed: JSONValue = ["entities": [["name": "Item", "userInfo": ["identityAttributes": "id"],
                                                "attributes": [["name": "id", "type": "integer64"]]]]]
        let server = try InProcessServer()
        let key = try #require(try server.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        #expect(try server.sendJSON("PUT", "/v1/tenants/acme/models/m", named, token: key).status == 201)
        let refused = try server.sendJSON("PUT", "/v1/tenants/acme/models/m", unnamed, token: key)
        #expect(refused.status == 409)
        #expect(try refused.json()["detail"] == "This change would lose or invalidate data; repeat the PUT with ?allowDestructive=true to apply it.")

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("destructive-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = (named: directory.appendingPathComponent("named.json"), unnamed: directory.appendingPathComponent("unnamed.json"),
                     mapping: directory.appendingPathComponent("mapping.json"), payload: directory.appendingPathComponent("payload.json"))
        try Data(named.jsonBytes).write(to: files.named)
        try Data(unnamed.jsonBytes).write(to: files.unnamed)
        try Data(#"{"entity": "Item", "keyPath": "items", "attributes": ["id"]}"#.utf8).write(to: files.mapping)
        try Data(#"{"items": [{"id": 1}]}"#.utf8).write(to: files.payload)
        let store = directory.appendingPathComponent("store.sqlite").path
        func map(_ model: URL, _ flags: [String] = []) throws -> (Int32, String, String) {
            try run(["map", "--model", model.path, "--mapping", files.mapping.path, "--store", store] + flags + [files.payload.path])
        }
        #expect(try map(files.named).0 == 0)
        let (status, _, stderr) = try map(files.unnamed)
        #expect(status == 1)
        #expect(stderr.contains("error: This change would lose or invalidate data; run again with --allow-destructive to apply it.\n"), "\(stderr)")
        #expect(try map(files.unnamed, ["--allow-destructive"]).0 == 0)
    }

    @Test func versionPrintsTheVersion() throws {
        let (status, stdout, _) = try run(["version"])
        #expect(status == 0)
        #expect(stdout.hasPrefix("cartograph "))
    }

    @Test func mapGivesTheServersResultByteForByte() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("map-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let payload: JSONValue = ["projects": [
            ["id": 1, "name": "Apollo", "tasks": [["id": 10, "title": "Launch"], 11], "owner": ["id": 7, "email": "a@x.io"]],
            ["id": "1", "updated_at": "2024-01-01T00:00:00Z"],
        ]]
        let files = (model: directory.appendingPathComponent("model.json"), mapping: directory.appendingPathComponent("mapping.json"),
                     payload: directory.appendingPathComponent("payload.json"))
        try Data(projectsModel.jsonBytes).write(to: files.model)
        try Data(projectMapping().jsonBytes).write(to: files.mapping)
        try Data(payload.jsonBytes).write(to: files.payload)
        let store = directory.appendingPathComponent("out.sqlite").path
        let (status, stdout, stderr) = try run(["map", "--model", files.model.path, "--mapping", files.mapping.path, "--store", store, files.payload.path])
        #expect(status == 0, "\(stderr)")
        #expect(stderr.contains("done in"))
        var serverBody = ""
        try withProjects { post, _ in serverBody = try post(payload, [], "").text }
        #expect(stdout == serverBody)
        #expect(try JSONReader().parse(stdout)["inserted"] == 4, "project 1 (twice, merged), task 10, stub task 11, user 7")
        // The file holds the objects: mapping again changes nothing.
        let (_, again, _) = try run(["map", "--model", files.model.path, "--mapping", files.mapping.path, "--store", store, files.payload.path])
        #expect(try JSONReader().parse(again)["inserted"] == 0)
        #expect(try JSONReader().parse(again)["unchanged"] == 4)
    }

    @Test func R_P10_mapWithAnEntitysAnnotationsGivesTheEntityRoutesResult() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("map-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let model: JSONValue = ["entities": [
            ["name": "Character", "userInfo": ["identityAttributes": "identifier"],
             "attributes": [["name": "identifier", "type": "integer64", "userInfo": ["JSONKeyPath": "id"]],
                            ["name": "realName", "type": "string", "userInfo": ["JSONKeyPath": "real_name"]]]],
        ]]
        let payload: JSONValue = [["id": "1699", "real_name": "Bruce Wayne"], ["id": 1700, "real_name": "Clark Kent"]]
        let modelFile = directory.appendingPathComponent("model.json"), payloadFile = directory.appendingPathComponent("payload.json")
        try Data(model.jsonBytes).write(to: modelFile)
        try Data(payload.jsonBytes).write(to: payloadFile)
        let store = directory.appendingPathComponent("out.sqlite").path
        let (status, stdout, stderr) = try run(["map", "--model", modelFile.path, "--entity", "Character", "--store", store, payloadFile.path])
        #expect(status == 0, "\(stderr)")
        try ModelAPI.with(model: model) { (api) throws in
            #expect(try api.post("/entities/Character/payloads", payload).text == stdout)
        }
        #expect(try JSONReader().parse(stdout)["objects"] == [["entity": "Character", "key": 1699], ["entity": "Character", "key": 1700]])
        let both = try run(["map", "--model", modelFile.path, "--entity", "Character", "--mapping", modelFile.path, "--store", store, payloadFile.path])
        #expect(both.0 != 0, "either --mapping or --entity")
    }

    @Test func validateChecksAMappingAgainstItsModel() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("validate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(projectsModel.jsonBytes).write(to: directory.appendingPathComponent("model.json"))
        try Data(#"{"entity": "Project", "attributes": {"id": "nope"}}"#.utf8).write(to: directory.appendingPathComponent("bad.json"))
        try Data(projectMapping().jsonBytes).write(to: directory.appendingPathComponent("good.json"))
        let bad = try run(["validate", directory.appendingPathComponent("model.json").path, directory.appendingPathComponent("bad.json").path])
        #expect(bad.0 == 1)
        #expect(bad.2.contains("/attributes"))
        let good = try run(["validate", directory.appendingPathComponent("model.json").path, directory.appendingPathComponent("good.json").path])
        #expect(good.0 == 0)
        #expect(try JSONReader().parse(good.1)["entity"] == "Project")
    }
}
