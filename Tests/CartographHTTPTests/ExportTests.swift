// R-Q4 `shape=json` through the routes, in process: Groot's serialization tests (GrootTests/SerializationTests.swift,
// `testSerializationToJSON…`) ported onto Groot's own test model, sub-entities, the errors, and the
// round trip payload -> store -> export -> the same mapping -> nothing changes. Objects are stored
// through mapping documents that mirror the model's annotations (key paths and transformers).
import Foundation
import Testing
import CartographCore
import CartographTesting

/// gonzalezreal/Groot's test model (shared fixtures, MIT) as a JSON model document, with what
/// Groot's tests add in code: `GrootTests.Transformer` (String -> Int, reverse Int -> String) declared
/// as a chain of StringToInteger, and the `GrootTests.Abstract` entity mapper on `type`. Character's
/// attributes are made optional: Groot's tests leave them nil and never save, so Core Data never
/// validates them, while Cartograph validates every stored object (R-P8).
private func grootModelDocument(realNameKeyPath: String? = nil) throws -> JSONValue {
    let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../shared/fixtures/groot/Model.xcdatamodeld/Model.xcdatamodel/contents")
    var model = try ModelDocument.parse(coreDataXML: Array(Data(contentsOf: fixture)), name: "groot")
    model.valueTransformers = JSONObject([("GrootTests.Transformer", ["type": "chain", "transformers": ["StringToInteger"]])])
    model.entityMappers = JSONObject([("GrootTests.Abstract", ["keyPath": "type", "map": ["A": "ConcreteA", "B": "ConcreteB"]])])
    model.warnings = []
    let character = try #require(model.entities.firstIndex { $0.name == "Character" })
    for index in model.entities[character].attributes.indices {
        model.entities[character].attributes[index].optional = true
        if let realNameKeyPath, model.entities[character].attributes[index].name == "realName" {
            model.entities[character].attributes[index].userInfo["JSONKeyPath"] = .string(realNameKeyPath)
        }
    }
    return model.normalizedJSON
}

/// An attribute mapping through Groot's identifier transformer.
private let grootIdentifier: JSONValue = ["to": "identifier", "transformer": "GrootTests.Transformer"]

/// The mappings that mirror the annotations of Groot's model: each property from its JSONKeyPath,
/// through its JSONTransformerName.
private let grootMappings: [(String, JSONValue)] = [
    ("characters", ["entity": "Character", "attributes": ["id": grootIdentifier, "name": "name", "real_name": "realName"],
                    "relationships": [
                        ["from": "powers", "to": "powers", "mapping": ["entity": "Power", "attributes": ["id": grootIdentifier, "name": "name"]]],
                        ["from": "publisher", "to": "publisher", "mapping": ["entity": "Publisher", "attributes": ["id": grootIdentifier, "name": "name"]]],
                    ]]),
    // Groot's Iron Man has no identifier: without identification every representation inserts (R-I4).
    ("unidentified-characters", ["entity": "Character", "identificationAttributes": [],
                                 "attributes": ["id": grootIdentifier, "name": "name", "real_name": "realName"]]),
    ("cards", ["entity": "Card", "attributes": ["suit": "suit", "value": "value", "played": "numberOfTimesPlayed"]]),
    // Groot maps container.json with its entity mapper; this server does not map dynamic mappings
    // yet, so each concrete entity has a mapping, and the container finds the stored objects.
    ("concrete-a", ["entity": "ConcreteA", "keyPath": "abstracts", "attributes": ["id": "identifier", "foo": "foo"]]),
    ("concrete-b", ["entity": "ConcreteB", "keyPath": "abstracts", "attributes": ["id": "identifier", "bar": "bar"]]),
    ("container", ["entity": "Container", "relationships": [
        ["from": "abstracts", "to": "abstracts", "mapping": ["entity": "Abstract", "attributes": ["id": "identifier"]]],
    ]]),
]

/// A Groot JSON fixture (shared fixtures); `cards.json` ends its array with a trailing comma, which
/// NSJSONSerialization accepts and a strict parser does not, so it is dropped.
private func grootFixture(_ name: String) throws -> JSONValue {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../shared/fixtures/groot/JSON/\(name)")
    let text = try String(contentsOf: url, encoding: .utf8).replacingOccurrences(of: "},\n]", with: "}\n]")
    return try JSONReader().parse(Array(text.utf8))
}

/// A server with tenant `acme` and `model` registered as `name` with `mappings`.
private struct ExportServer {
    let client: any HTTPTestClient
    let key: String
    let model: String

    var base: String { "/v1/tenants/acme/models/\(model)" }

    func map(_ mapping: String, _ payload: JSONValue) throws -> JSONValue {
        let response = try client.sendJSON("POST", "\(base)/mappings/\(mapping)/payloads", payload, token: key)
        #expect(response.status == 200, "\(response.text)")
        return try response.json()
    }

    func get(_ path: String) throws -> RawResponse { try client.send("GET", base + path, token: key) }

    /// The items of a list, which must be a 200.
    func items(_ path: String) throws -> [JSONValue] {
        let response = try get(path)
        #expect(response.status == 200, "\(response.text)")
        return try response.json()["items"]?.arrayValue ?? []
    }

    /// The change feed's `next`.
    func changeSequence() throws -> Int64 { try #require(try get("/changes?limit=1000").json()["next"]?.numberValue?.int64Value) }
}

private func withExportServer(model document: JSONValue, name: String = "groot", mappings: [(String, JSONValue)] = grootMappings,
                              _ body: (ExportServer) throws -> Void) throws {
    let server = try InProcessServer()
    do {
        let client: any HTTPTestClient = server
        let key = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        let registered = try client.sendJSON("PUT", "/v1/tenants/acme/models/\(name)", document, token: key)
        #expect(registered.status == 201, "\(registered.text)")
        #expect(try registered.json()["warnings"] == [])
        for (mapping, mappingDocument) in mappings {
            let put = try client.sendJSON("PUT", "/v1/tenants/acme/models/\(name)/mappings/\(mapping)", mappingDocument, token: key)
            #expect(put.status == 201, "\(mapping): \(put.text)")
        }
        try body(ExportServer(client: client, key: key, model: name))
    }
}

/// The value with every object's members sorted by key: Groot compares NSDictionary, which has no order.
private func sortedKeys(_ value: JSONValue) -> JSONValue {
    switch value {
    case .object(let object): .object(JSONObject(object.map { ($0.key, sortedKeys($0.value)) }.sorted { $0.0 < $1.0 }))
    case .array(let items): .array(items.map(sortedKeys))
    default: value
    }
}

/// Groot's batmanJSON (`testInsertObject`), a null inside `powers` included.
private let batmanPayload: JSONValue = [
    "name": "Batman", "real_name": "Bruce Wayne", "id": "1699",
    "powers": [["id": "4", "name": "Agility"], nil, ["id": "9", "name": "Insanely Rich"]],
    "publisher": ["id": "10", "name": "DC Comics"],
]

@Suite(.serialized) struct ExportTests {
    @Test func R_Q4_shapeJSONExportsThroughAnnotations() throws {
        try withExportServer(model: try grootModelDocument()) { server in
            _ = try server.map("characters", batmanPayload)
            _ = try server.map("unidentified-characters", ["name": "Iron Man"])
            // Groot's testSerializationToJSON: expectedResult, verbatim.
            let expected: JSONValue = [
                ["id": "1699", "name": "Batman", "real_name": "Bruce Wayne",
                 "powers": [["id": "4", "name": "Agility"], ["id": "9", "name": "Insanely Rich"]],
                 "publisher": ["id": "10", "name": "DC Comics"]],
                ["id": nil, "name": "Iron Man", "real_name": nil, "powers": [], "publisher": nil],
            ]
            let listed = try server.items("/entities/Character/objects?shape=json&orderBy=name")
            #expect(sortedKeys(.array(listed)) == sortedKeys(expected), "\(JSONValue.array(listed).jsonText)")
            let queried = try server.client.sendJSON("POST", server.base + "/entities/Character/query",
                                                     ["shape": "json", "orderBy": ["name"], "count": true], token: server.key)
            #expect(try queried.json()["total"] == 2)
            #expect(sortedKeys(try queried.json()["items"] ?? .null) == sortedKeys(expected))
            let one = try server.get("/entities/Character/objects/1699?shape=json")
            #expect(one.status == 200)
            #expect(sortedKeys(try one.json()) == sortedKeys(expected.arrayValue![0]))
            // shape=model is unchanged, and is the default.
            let model = try server.get("/entities/Character/objects/1699").json()
            #expect(model["powers"] == [4, 9])
            #expect(model["publisher"] == 10)
            #expect(model["identifier"] == 1699)
            #expect(try server.get("/entities/Character/objects/1699?shape=model").json() == model)
        }
    }

    @Test func R_Q4_shapeJSONWritesDottedKeyPathsAsNestedObjects() throws {
        // Groot's testSerializationToJSONWithNestedDictionaries.
        let mapping: JSONValue = ["entity": "Character", "identificationAttributes": [], "attributes": ["real_name.foo.bar.name": "realName"]]
        try withExportServer(model: try grootModelDocument(realNameKeyPath: "real_name.foo.bar.name"), mappings: [("nested", mapping)]) { server in
            _ = try server.map("nested", ["real_name": ["foo": ["bar": ["name": "Bruce Wayne"]]]])
            let expected: JSONValue = [
                "id": nil, "name": nil,
                "real_name": ["foo": ["bar": ["name": "Bruce Wayne"]]],
                "powers": [], "publisher": nil,
            ]
            let items = try server.items("/entities/Character/objects?shape=json")
            #expect(items.count == 1)
            #expect(sortedKeys(items.first ?? .null) == sortedKeys(expected), "\(JSONValue.array(items).jsonText)")
        }
    }

    @Test func R_Q4_shapeJSONExportsSubEntitiesThroughTheirOwnAnnotations() throws {
        try withExportServer(model: try grootModelDocument()) { server in
            let container = try grootFixture("container.json")
            let abstracts = container["abstracts"]?.arrayValue ?? []
            _ = try server.map("concrete-a", ["abstracts": .array(abstracts.filter { $0["type"] == "A" })])
            _ = try server.map("concrete-b", ["abstracts": .array(abstracts.filter { $0["type"] == "B" })])
            _ = try server.map("container", container)
            #expect(try server.items("/entities/Container/objects?shape=json") == [["abstracts": [["id": 1, "foo": "this is A"], ["id": 2, "bar": "this is B"]]]])
            // A query on the abstract entity exports each object as its concrete entity.
            #expect(try server.items("/entities/Abstract/objects?shape=json&orderBy=identifier") == [["id": 1, "foo": "this is A"], ["id": 2, "bar": "this is B"]])
            #expect(try server.items("/entities/Abstract/objects?orderBy=identifier").map { $0["_entity"] } == ["ConcreteA", "ConcreteB"])
        }
    }

    @Test func R_Q4_shapeJSONRoundTripOfGrootsFixturesLeavesTheStoreUnchanged() throws {
        try withExportServer(model: try grootModelDocument()) { server in
            _ = try server.map("characters", [batmanPayload, ["id": "1700", "name": "Superman",
                                                              "powers": [["id": "9", "name": "Insanely Rich"]], "publisher": ["id": "10"]]])
            _ = try server.map("characters", try grootFixture("characters.json"))
            _ = try server.map("characters", try grootFixture("characters_update.json"))
            _ = try server.map("cards", try grootFixture("cards.json"))
            try expectRoundTrip(server, entity: "Character", mapping: "characters", count: 3)
            try expectRoundTrip(server, entity: "Card", mapping: "cards", count: 2)
            let batman = try server.get("/entities/Character/objects/1699?shape=json").json()
            #expect(batman["real_name"] == "Bruce Wayne", "characters_update.json was applied")
            #expect(batman["powers"]?.arrayValue?.count == 2)
            let card = try server.get("/entities/Card/objects/Hearts,Jack?shape=json").json()
            #expect(card == ["played": 3, "suit": "Hearts", "value": "Jack"])
        }
    }

    @Test func R_Q4_shapeJSONRoundTripThroughEveryKindOfValueLeavesTheStoreUnchanged() throws {
        try withExportServer(model: catalogModel, name: "catalog", mappings: [("products", productMapping)]) { server in
            let first = try server.map("products", catalogPayload)
            #expect(first["inserted"] == 6, "\(first.jsonText)")
            let exported = try server.items("/entities/Product/objects?shape=json&orderBy=sku")
            // The export is the payload's form: transformers reversed, key paths nested, related objects nested.
            let kettle = exported.first { $0["sku"] == "K-1" }
            #expect(kettle?["pricing"] == ["amount": "12345678901234567.891", "currency": "EUR"])
            #expect(kettle?["released"] == .number(JSONNumber(validatedText: "1700000000.25")))
            #expect(kettle?["updated_at"] == "2024-01-02T03:04:05.000Z")
            #expect(kettle?["launch_day"] == "14/11/2023")
            #expect(kettle?["thumb"] == "AAEC/w==")
            #expect(kettle?["tags"] == "steel,kitchen")
            #expect(kettle?["status"] == "A")
            #expect(kettle?["flags"] == ["active": true])
            #expect(kettle?["weight"] == .number(JSONNumber(validatedText: "1.25")))
            #expect(kettle?["brand"] == ["code": "ACME", "name": "Acme"], "Brand.products, the inverse, is skipped")
            #expect(kettle?["variants"] == [["vid": 2, "color": "red"], ["vid": 1, "color": "blue"]], "ordered, Variant.product skipped")
            let toaster = kettle?["related"]?.arrayValue?.first
            #expect(toaster?["sku"] == "T-2")
            #expect(toaster?["related"]?.arrayValue?.first == ["sku": "K-1"], "the cycle back to the kettle is a reference")
            #expect(toaster?["related"]?.arrayValue?.last?["status"] == "unknown", "Z-9, not on the path, is nested in full")
            #expect(exported.first { $0["sku"] == "Z-9" }?["status"] == "unknown", "a map default exports as itself")
            #expect(exported.first { $0["sku"] == "Z-9" }?["pricing"] == ["amount": nil, "currency": nil])
            try expectRoundTrip(server, entity: "Product", mapping: "products", count: 3)
        }
    }

    @Test func R_Q4_shapeJSONRefusesIncludeAndUnknownShapes() throws {
        try withExportServer(model: try grootModelDocument()) { server in
            _ = try server.map("characters", batmanPayload)
            let cases: [(RawResponse, String)] = [
                (try server.get("/entities/Character/objects?shape=json&include=publisher"), "/include"),
                (try server.get("/entities/Character/objects/1699?shape=json&include=powers"), "/include"),
                (try server.client.sendJSON("POST", server.base + "/entities/Character/query", ["shape": "json", "include": ["publisher"]],
                                            token: server.key), "/include"),
                (try server.get("/entities/Character/objects?shape=xml"), "/shape"),
                (try server.client.sendJSON("POST", server.base + "/entities/Character/query", ["shape": "JSON"], token: server.key), "/shape"),
            ]
            for (response, pointer) in cases {
                #expect(response.status == 400, "\(response.text)")
                #expect(try response.json()["errors"]?.arrayValue?.first?["pointer"] == .string(pointer), "\(response.text)")
            }
            #expect(try server.get("/entities/Character/objects?shape=json&include=publisher").text.contains("include does not apply to shape=json"))
            // include still embeds with shape=model.
            #expect(try server.get("/entities/Character/objects/1699?include=publisher").json()["publisher"]?["name"] == "DC Comics")
        }
    }

    @Test func R_Q4_anUndeclaredTransformerMakesShapeJSON422() throws {
        // Groot's model as it is: its annotations name GrootTests.Transformer, which it does not declare.
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../shared/fixtures/groot/Model.xcdatamodeld/Model.xcdatamodel/contents")
        let server = try InProcessServer()
        let client = server.client
        let key = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        let registered = try client.send("PUT", "/v1/tenants/acme/models/groot", headers: [("Content-Type", "application/xml")],
                                         body: Array(Data(contentsOf: fixture)), token: key)
        #expect(registered.status == 201)
        #expect(try registered.json()["warnings"]?.arrayValue?.isEmpty == false)
        let mapping: JSONValue = ["entity": "Power", "attributes": ["id": "identifier", "name": "name"]]
        #expect(try client.sendJSON("PUT", "/v1/tenants/acme/models/groot/mappings/powers", mapping, token: key).status == 201)
        let mapped = try client.sendJSON("POST", "/v1/tenants/acme/models/groot/mappings/powers/payloads", ["id": 4, "name": "Agility"], token: key)
        #expect(mapped.status == 200, "\(mapped.text)")
        let exported = try client.send("GET", "/v1/tenants/acme/models/groot/entities/Power/objects?shape=json", token: key)
        #expect(exported.status == 422)
        #expect(exported.text.contains("GrootTests.Transformer") && exported.text.contains("Power.identifier"), "\(exported.text)")
        #expect(try client.send("GET", "/v1/tenants/acme/models/groot/entities/Power/objects", token: key).json()["items"]?.arrayValue?.count == 1)
    }
}

/// Exports `entity`'s objects, posts the export back through `mapping`, and expects nothing to
/// change: no change-feed entries, every object counted unchanged, the same objects in `shape=model`.
private func expectRoundTrip(_ server: ExportServer, entity: String, mapping: String, count: Int,
                             sourceLocation: SourceLocation = #_sourceLocation) throws {
    let before = try server.items("/entities/\(entity)/objects?limit=1000")
    let exported = try server.items("/entities/\(entity)/objects?shape=json&limit=1000")
    #expect(exported.count == count, sourceLocation: sourceLocation)
    let sequence = try server.changeSequence()
    let result = try server.map(mapping, .array(exported))
    #expect(result["inserted"] == 0, "\(result.jsonText)", sourceLocation: sourceLocation)
    #expect(result["updated"] == 0, "\(result.jsonText)", sourceLocation: sourceLocation)
    #expect(result["deleted"] == 0, sourceLocation: sourceLocation)
    #expect((result["unchanged"]?.numberValue?.int64Value ?? 0) >= Int64(count), sourceLocation: sourceLocation)
    #expect(try server.get("/changes?since=\(sequence)").json()["changes"] == [], sourceLocation: sourceLocation)
    #expect(try server.changeSequence() == sequence, sourceLocation: sourceLocation)
    #expect(try server.items("/entities/\(entity)/objects?limit=1000") == before, sourceLocation: sourceLocation)
    #expect(try server.items("/entities/\(entity)/objects?shape=json&limit=1000") == exported, sourceLocation: sourceLocation)
}

// MARK: - A model with every kind of value

/// Products with a brand (both sides annotated), ordered variants (both sides annotated) and
/// related products (no inverse: a cycle), and attributes of every type through every kind of transformer.
private let catalogModel: JSONValue = [
    "entities": [
        ["name": "Product",
         "attributes": [
             ["name": "sku", "type": "string", "userInfo": ["JSONKeyPath": "sku"]],
             ["name": "price", "type": "decimal", "userInfo": ["JSONKeyPath": "pricing.amount", "JSONTransformerName": "StringToDecimal"]],
             ["name": "currency", "type": "string", "userInfo": ["JSONKeyPath": "pricing.currency", "JSONTransformerName": "Uppercase"]],
             ["name": "releasedAt", "type": "date", "userInfo": ["JSONKeyPath": "released", "JSONTransformerName": "UnixSecondsToDate"]],
             ["name": "updatedAt", "type": "date", "userInfo": ["JSONKeyPath": "updated_at"]],
             ["name": "launchDay", "type": "date", "userInfo": ["JSONKeyPath": "launch_day", "JSONTransformerName": "DayMonthYear"]],
             ["name": "thumbnail", "type": "binary", "userInfo": ["JSONKeyPath": "thumb"]],
             ["name": "tags", "type": "transformable", "userInfo": ["JSONKeyPath": "tags", "JSONTransformerName": "Tags"]],
             ["name": "status", "type": "string", "userInfo": ["JSONKeyPath": "status", "JSONTransformerName": "Status"]],
             ["name": "active", "type": "boolean", "userInfo": ["JSONKeyPath": "flags.active"]],
             ["name": "weight", "type": "double", "userInfo": ["JSONKeyPath": "weight"]],
             ["name": "internalNote", "type": "string"],
         ],
         "relationships": [
             ["name": "brand", "destination": "Brand", "inverse": "products", "userInfo": ["JSONKeyPath": "brand"]],
             ["name": "variants", "destination": "Variant", "toMany": true, "ordered": true, "inverse": "product", "userInfo": ["JSONKeyPath": "variants"]],
             ["name": "related", "destination": "Product", "toMany": true, "userInfo": ["JSONKeyPath": "related"]],
         ],
         "userInfo": ["identityAttributes": "sku"]],
        ["name": "Brand",
         "attributes": [["name": "code", "type": "string", "userInfo": ["JSONKeyPath": "code"]],
                        ["name": "name", "type": "string", "userInfo": ["JSONKeyPath": "name"]]],
         "relationships": [["name": "products", "destination": "Product", "toMany": true, "inverse": "brand", "userInfo": ["JSONKeyPath": "products"]]],
         "userInfo": ["identityAttributes": "code"]],
        ["name": "Variant",
         "attributes": [["name": "variantID", "type": "integer32", "userInfo": ["JSONKeyPath": "vid"]],
                        ["name": "color", "type": "string", "userInfo": ["JSONKeyPath": "color"]]],
         "relationships": [["name": "product", "destination": "Product", "inverse": "variants", "userInfo": ["JSONKeyPath": "product"]]],
         "userInfo": ["identityAttributes": "variantID"]],
    ],
    "valueTransformers": [
        "DayMonthYear": ["type": "dateFormat", "format": "dd/MM/yyyy"],
        "Tags": ["type": "split", "separator": ","],
        "Status": ["type": "map", "map": ["A": "active", "D": "discontinued"], "default": "unknown"],
    ],
]

private let productAttributes: JSONValue = [
    "sku": "sku",
    "pricing.amount": ["to": "price", "transformer": "StringToDecimal"],
    "pricing.currency": ["to": "currency", "transformer": "Uppercase"],
    "released": ["to": "releasedAt", "transformer": "UnixSecondsToDate"],
    "updated_at": "updatedAt",
    "launch_day": ["to": "launchDay", "transformer": "DayMonthYear"],
    "thumb": "thumbnail",
    "tags": ["to": "tags", "transformer": "Tags"],
    "status": ["to": "status", "transformer": "Status"],
    "flags.active": "active",
    "weight": "weight",
]

/// The mapping that mirrors the catalog's annotations (related products map their attributes only).
private let productMapping: JSONValue = [
    "entity": "Product", "attributes": productAttributes,
    "relationships": [
        ["from": "brand", "to": "brand", "mapping": ["entity": "Brand", "attributes": ["code": "code", "name": "name"]]],
        ["from": "variants", "to": "variants", "mapping": ["entity": "Variant", "attributes": ["vid": "variantID", "color": "color"]]],
        ["from": "related", "to": "related", "mapping": ["entity": "Product", "attributes": productAttributes]],
    ],
]

private let catalogPayload: JSONValue = [
    ["sku": "K-1", "pricing": ["amount": .number(JSONNumber(validatedText: "12345678901234567.891")), "currency": "eur"],
     "released": .number(JSONNumber(validatedText: "1700000000.25")), "updated_at": "2024-01-02T04:04:05+01:00",
     "launch_day": "14/11/2023", "thumb": "AAEC/w==", "tags": "steel,kitchen", "status": "A", "flags": ["active": "yes"],
     "weight": .number(JSONNumber(validatedText: "1.25")),
     "brand": ["code": "ACME", "name": "Acme"], "variants": [["vid": 2, "color": "red"], ["vid": 1, "color": "blue"]],
     "related": [["sku": "T-2"]]],
    ["sku": "T-2", "pricing": ["amount": "19.90", "currency": "usd"], "released": 0, "status": "D", "flags": ["active": false],
     "brand": ["code": "ACME"], "variants": [], "related": [["sku": "K-1"], ["sku": "Z-9"]]],
    ["sku": "Z-9", "status": "Q", "tags": "", "brand": nil],
]
