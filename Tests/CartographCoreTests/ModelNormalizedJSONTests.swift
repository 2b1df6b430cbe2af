// The normalized model (docs/model.md#the-normalized-model): every default explicit, canonical names, the resolved
// identification attributes, and a round trip back to an equal model for JSON and XML inputs.
import Testing
@testable import CartographCore

struct ModelNormalizedJSONTests {
    @Test func R_M6_normalizedJSONMakesEveryDefaultExplicit() throws {
        let model = try parseModel(#"""
            {"entities": [{"name": "Item", "attributes": [{"name": "id", "type": "Integer 64"}, {"name": "label", "type": "string", "maxLength": 10}],
                           "relationships": [{"name": "parts", "destination": "Item", "toMany": true}]}]}
            """#, name: "shop")
        let expected: JSONValue = [
            "name": "shop", "version": 1,
            "entities": [[
                "name": "Item", "parent": nil, "abstract": false,
                "attributes": [
                    ["name": "id", "type": "integer64", "optional": true, "indexed": false, "userInfo": [:]],
                    ["name": "label", "type": "string", "optional": true, "maxLength": 10, "indexed": false, "userInfo": [:]],
                ],
                "relationships": [
                    ["name": "parts", "destination": "Item", "toMany": true, "ordered": false, "optional": true, "inverse": nil,
                     "deleteRule": "nullify", "userInfo": [:]],
                ],
                "fetchIndexes": [],
                "userInfo": [:],
                "identificationAttributes": ["id"],
            ]],
            "valueTransformers": [:], "entityMappers": [:], "dictionaryTransformers": [:],
            "options": ["identificationInference": true, "mapUnannotatedByName": false],
            "warnings": [],
        ]
        #expect(model.normalizedJSON == expected)
    }

    /// Parses `model`'s normalized JSON (through its text, as a client would send it back).
    private func reparsed(_ model: Model) throws -> Model {
        try ModelDocument.parse(jsonBytes: model.normalizedJSON.jsonBytes, name: model.name)
    }

    @Test func R_M4_grootFixtureRoundTripsThroughNormalizedJSON() throws {
        let model = try ModelFixtures.groot()
        let again = try reparsed(model)
        #expect(again == model)
        #expect(again.normalizedJSON == model.normalizedJSON)
        #expect(model.normalizedJSON["entities"]?.arrayValue?[1]["identificationAttributes"] == ["suit", "value"])
    }

    @Test func R_M4_restKitAndDetailedXMLModelsRoundTrip() throws {
        for xml in [try ModelFixtures.restKitVersionedModel(""), try ModelFixtures.restKitVersionedModel(" 3"), Array(ModelCoreDataImportTests.everyDetail.utf8)] {
            let model = try ModelDocument.parse(coreDataXML: xml, name: "m")
            #expect(try reparsed(model) == model)
        }
    }

    @Test func R_M1_jsonDocumentsRoundTripWithTheirSectionsAndVersion() throws {
        var model = try parseModel(ModelDocumentTests.designExample, name: "comics")
        model.version = 7
        let again = try reparsed(model)
        #expect(again == model)
        #expect(again.version == 7)
        #expect(again.valueTransformers == model.valueTransformers)
    }

    @Test func R_I1_writtenIdentificationAttributesMustMatchTheAnnotations() throws {
        let normalized = try parseModel(ModelDocumentTests.designExample).normalizedJSON
        var document = try #require(normalized.objectValue)
        var entities = try #require(document["entities"]?.arrayValue)
        var character = try #require(entities[0].objectValue)
        #expect(character["identificationAttributes"] == ["identifier"])
        character["identificationAttributes"] = ["name"]
        entities[0] = .object(character)
        document["entities"] = .array(entities)
        #expect(modelProblems(JSONValue.object(document).jsonText) == [
            "/entities/0/identificationAttributes": "is resolved from the annotations to [identifier]; set userInfo.identityAttributes to change it",
        ])
    }
}
