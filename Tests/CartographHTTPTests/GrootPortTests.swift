// Groot's serialization tests (GrootTests/SerializationTests.swift) ported to annotation mappings
// through the routes, in process (R-P10, R-P9, docs/model.md#core-data-models): Groot's own Core Data model registered as XML wrapped
// with the declarative sections that stand for the transformers its tests register in code.
// Fixtures: Fixtures/Groot/ (sources in SOURCES.md).
// They post through the entity payload route and read the compiled mapping it serves (GET …/entities/{entity}/mapping,
// a 404 for an unknown entity): the routes' part, so they stay beside the router.
import Foundation
import Testing
import CartographCore
import CartographTesting

private let grootFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/Groot", isDirectory: true)

private func grootFixture(_ name: String) throws -> JSONValue {
    var text = try String(contentsOf: grootFixtures.appendingPathComponent(name), encoding: .utf8)
    // cards*.json end their arrays with a trailing comma, which NSJSONSerialization accepts.
    text = text.replacingOccurrences(of: #",\s*\]"#, with: "\n]", options: .regularExpression)
    return try JSONReader().parse(text)
}

/// Groot's test model with `GrootTests.Transformer` (string <-> integer), the `GrootTests.Abstract`
/// entity mapper and `GrootTests.DictionaryTransformer`; `edit` may change the XML first.
private func grootModel(_ edit: (String) -> String = { $0 }) throws -> JSONValue {
    let xml = try String(contentsOf: grootFixtures.appendingPathComponent("Model.contents"), encoding: .utf8)
    return [
        "coreDataModel": .string(edit(xml)),
        "valueTransformers": ["GrootTests.Transformer": "StringToInteger"],
        "entityMappers": ["GrootTests.Abstract": ["keyPath": "type", "map": ["A": "ConcreteA", "B": "ConcreteB"]]],
        "dictionaryTransformers": ["GrootTests.DictionaryTransformer": [["op": "copy", "from": "legacy_id", "to": "id"]]],
    ]
}

@Suite(.serialized) struct GrootPortTests {
    /// The Character entity's identity annotation (the only one that follows a `</relationship>`).
    static let characterIdentity = "</relationship>\n        <userInfo>\n            <entry key=\"identityAttribute\" value=\"identifier\"/>"

    static let batman: JSONValue = [
        "name": "Batman", "real_name": "Bruce Wayne", "id": "1699",
        "powers": [["id": "4", "name": "Agility"], nil, ["id": "9", "name": "Insanely Rich"]],
        "publisher": ["id": "10", "name": "DC Comics"],
    ]

    @Test func R_P10_insertObject() throws {
        try ModelAPI.with(model: try grootModel()) { api in
            let result = try api.map("/entities/Character/payloads", Self.batman)
            #expect(result["inserted"] == 4)
            #expect(result["objects"] == [["entity": "Character", "key": 1699]])
            let batman = try api.object("Character", "1699")
            #expect(batman["name"] == "Batman")
            #expect(batman["realName"] == "Bruce Wayne")
            #expect(batman["powers"] == [4, 9], "the null element is skipped")
            #expect(batman["publisher"] == 10)
            #expect(try api.object("Power", "9")["name"] == "Insanely Rich")
            #expect(try api.object("Publisher", "10")["name"] == "DC Comics")
        }
    }

    @Test func R_P10_theCompiledMappingIsServedAndReadsBackAsAMappingDocument() throws {
        try ModelAPI.with(model: try grootModel()) { api in
            let mapping = try api.get("entities/Character/mapping")
            #expect(mapping["entity"] == "Character")
            #expect(mapping["attributes"]?["id"] == ["to": "identifier", "transformer": "GrootTests.Transformer"])
            #expect(mapping["attributes"]?["real_name"] == "realName")
            #expect(mapping["relationships"]?.arrayValue?.first { $0["to"] == "publisher" }?["mapping"] == ["entity": "Publisher", "fromAnnotations": true])
            #expect(try api.get("entities/Abstract/mapping")["dynamic"]?["map"]?["A"] == ["entity": "ConcreteA", "fromAnnotations": true])
            // The served form registers as a mapping document and maps the same way.
            var document = mapping.objectValue ?? JSONObject()
            document["keyPath"] = "characters"
            #expect(try api.client.sendJSON("PUT", api.base + "/mappings/characters", .object(document), token: api.key).status == 201)
            try api.map("characters", ["characters": [Self.batman]])
            #expect(try api.object("Character", "1699")["powers"] == [4, 9])
            #expect(try api.client.send("GET", api.base + "/entities/Nope/mapping", token: api.key).status == 404)
        }
    }

    @Test func R_P10_invalidToOneRelationshipIs422() throws {
        try ModelAPI.with(model: try grootModel()) { api in
            let response = try api.post("/entities/Character/payloads", ["id": "1699", "name": "Batman", "real_name": "Bruce Wayne", "publisher": ["DC"]])
            #expect(response.status == 422)
            #expect(try response.json()["errors"]?.arrayValue?.first?["pointer"] == "/publisher")
            #expect(try api.get("entities/Character/objects")["items"] == [])
        }
    }

    @Test func R_P10_mergeObjectUpdatesInPlaceAndSharesPowers() throws {
        try ModelAPI.with(model: try grootModel()) { api in
            try api.map("/entities/Character/payloads", [
                "id": "1699", "name": "Batman", "real_name": "Guille Gonzalez",
                "powers": [["id": "4", "name": "Agility"], nil, ["id": "9", "name": "Insanely Rich"]], "publisher": ["id": "10", "name": "DC"],
            ])
            try api.map("/entities/Character/payloads", [
                ["id": "1699", "real_name": "Bruce Wayne", "publisher": ["id": "10", "name": "DC Comics"]],
                ["id": "1455", "name": "Iron Man", "real_name": "Tony Stark", "powers": [["id": "31", "name": "Power Suit"], ["id": "9", "name": "Filthy Rich"]]],
            ])
            let batman = try api.object("Character", "1699")
            #expect(batman["name"] == "Batman", "a missing key leaves the value")
            #expect(batman["realName"] == "Bruce Wayne")
            #expect(batman["powers"] == [4, 9], "a missing relationship key leaves the relationship")
            #expect(Set(try api.object("Character", "1455")["powers"]?.arrayValue ?? []) == [9, 31])
            #expect(try api.object("Power", "9")["name"] == "Filthy Rich")
            #expect(try api.get("entities/Power/objects?count=true")["total"] == 3)
            #expect(try api.get("entities/Publisher/objects?count=true")["total"] == 1)
            #expect(try api.object("Publisher", "10")["name"] == "DC Comics")
        }
    }

    @Test func R_P10_validationDuringMergeFailsTheWholePayload() throws {
        try ModelAPI.with(model: try grootModel()) { api in
            try api.map("/entities/Character/payloads", try grootFixture("characters.json"))
            let response = try api.post("/entities/Character/payloads", try grootFixture("characters_update.json"))
            #expect(response.status == 422, "Spiderman has no real_name, which the model requires")
            #expect(try response.json()["errors"]?.arrayValue?.first?["message"]?.stringValue?.contains("realName") == true)
            #expect(try api.object("Character", "1699")["realName"] == "Guille Gonzalez", "nothing of the failed payload was stored")
        }
    }

    @Test func R_P10_serializationFromIdentifiersFindsOrStubs() throws {
        try ModelAPI.with(model: try grootModel()) { api in
            let result = try api.map("/entities/Character/payloads", ["1699", "1455"])
            #expect(result["inserted"] == 2)
            #expect(result["objects"] == [["entity": "Character", "key": 1699], ["entity": "Character", "key": 1455]])
            #expect(try api.object("Character", "1699")["_stub"] == true)
        }
    }

    @Test func R_P10_relationshipsFromIdentifiersAreCompletedLater() throws {
        try ModelAPI.with(model: try grootModel()) { api in
            try api.map("/entities/Character/payloads", ["name": "Batman", "real_name": "Bruce Wayne", "id": "1699", "powers": ["4", nil, "9"], "publisher": "10"])
            try api.map("/entities/Power/payloads", [["id": "4", "name": "Agility"], ["id": "9", "name": "Insanely Rich"]])
            try api.map("/entities/Publisher/payloads", ["id": "10", "name": "DC Comics"])
            let batman = try api.object("Character", "1699")
            #expect(batman["powers"] == [4, 9])
            #expect(try api.object("Power", "4")["name"] == "Agility")
            #expect(try api.object("Publisher", "10")["name"] == "DC Comics")
            #expect(try api.object("Publisher", "10")["_stub"] == nil, "a full representation completes the stub")
            #expect(try api.get("entities/Power/objects?count=true")["total"] == 2)
        }
    }

    @Test func R_P10_identifiersWithoutAnIdentityAnnotationAreFoundByInference() throws {
        // Groot: testSerializationFromIdentifiersFailsWithoutIdentityAttribute (the Character identity annotation removed).
        let model = try grootModel { $0.replacingOccurrences(of: Self.characterIdentity, with: "</relationship>\n        <userInfo>") }
        try ModelAPI.with(model: model) { api in
            let response = try api.post("/entities/Character/payloads", ["1699", "1455"])
            // Inference still finds `identifier` (R-I1), as RestKit would: identifiers keep working.
            #expect(response.status == 200, "\(response.text)")
            #expect(try api.object("Character", "1455")["identifier"] == 1455)
            let again = try api.map("/entities/Character/payloads", ["1699"])
            #expect(again["inserted"] == 0 && again["unchanged"] == 1, "found by the inferred identity, not duplicated")
            #expect(try api.get("entities/Character/objects?count=true")["total"] == 2)
        }
    }

    @Test func R_P9_entityMapperChoosesSubEntitiesAndUpdatesInPlace() throws {
        try ModelAPI.with(model: try grootModel()) { api in
            try api.map("/entities/Container/payloads", try grootFixture("container.json"))
            #expect(try api.object("Abstract", "1")["_entity"] == "ConcreteA")
            #expect(try api.object("Abstract", "1")["foo"] == "this is A")
            #expect(try api.object("Abstract", "2")["_entity"] == "ConcreteB")
            #expect(try api.object("Abstract", "2")["bar"] == "this is B")
            #expect(try api.get("entities/Container/objects")["items"]?.arrayValue?.first?["abstracts"] == [1, 2])
            // Groot updates through the abstract entity: no type, yet ConcreteA 1 is found and updated.
            try api.map("/entities/Abstract/payloads", ["id": 1, "foo": "A has been updated"])
            #expect(try api.object("Abstract", "1")["foo"] == "A has been updated")
            #expect(try api.get("entities/Abstract/objects?count=true")["total"] == 2)
            // A new object with no known type cannot be the abstract entity.
            let response = try api.post("/entities/Abstract/payloads", ["id": 3, "type": "C"])
            #expect(response.status == 422)
            #expect(try response.json()["errors"]?.arrayValue?.first?["message"]?.stringValue?.contains("abstract") == true)
        }
    }

    @Test func R_P10_dictionaryTransformerAnnotationPreprocesses() throws {
        let model = try grootModel {
            $0.replacingOccurrences(of: Self.characterIdentity,
                                    with: Self.characterIdentity + #"<entry key="JSONDictionaryTransformerName" value="GrootTests.DictionaryTransformer"/>"#)
        }
        try ModelAPI.with(model: model) { api in
            try api.map("/entities/Character/payloads", ["name": "Batman", "real_name": "Bruce Wayne", "legacy_id": "1699"])
            #expect(try api.object("Character", "1699")["name"] == "Batman")
        }
    }

    @Test func R_P10_compositeKeysFromAnnotations() throws {
        try ModelAPI.with(model: try grootModel()) { api in
            try api.map("/entities/Card/payloads", try grootFixture("cards.json"))
            try api.map("/entities/Card/payloads", try grootFixture("cards_update.json"))
            #expect(try api.object("Card", "Hearts,Jack")["numberOfTimesPlayed"] == 4)
            #expect(try api.object("Card", "Clubs,Three")["numberOfTimesPlayed"] == 1)
            #expect(try api.get("entities/Card/objects?count=true")["total"] == 3)
        }
    }

    @Test func R_P10_exportedObjectsPostedBackThroughTheEntityRouteChangeNothing() throws {
        try ModelAPI.with(model: try grootModel()) { api in
            try api.map("/entities/Character/payloads", [Self.batman, ["id": "1455", "name": "Iron Man", "real_name": "Tony Stark", "powers": [["id": "9"]]]])
            try api.map("/entities/Container/payloads", try grootFixture("container.json"))
            let before = try api.changes().count
            // Container has no identification attributes, so re-posting it would insert (R-I4); its abstracts round-trip.
            for entity in ["Character", "Abstract"] {
                let exported = try #require(try api.get("entities/\(entity)/objects?shape=json")["items"])
                let result = try api.map("/entities/\(entity)/payloads", exported)
                #expect(result["inserted"] == 0 && result["updated"] == 0, "\(entity): \(result.jsonText)")
            }
            #expect(try api.changes().count == before, "a round trip writes no change-feed entries")
            #expect(try api.object("Abstract", "2")["bar"] == "this is B")
        }
    }

    @Test func R_P10_aTransformerTheModelDoesNotDeclareFailsThePayloadNamingIt() throws {
        try ModelAPI.with(model: ["coreDataModel": .string(try String(contentsOf: grootFixtures.appendingPathComponent("Model.contents"), encoding: .utf8))]) { api in
            let response = try api.post("/entities/Character/payloads", Self.batman)
            #expect(response.status == 422)
            #expect(try response.json()["errors"]?.arrayValue?.first?["message"]?.stringValue?.contains("GrootTests.Transformer") == true)
        }
    }
}
