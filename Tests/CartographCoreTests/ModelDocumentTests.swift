// JSON model documents (docs/model.md, R-M1–R-M3): what a document says, the defaults it may leave out,
// the Core Data names it may use, and the strictness that catches typos.
import Testing
@testable import CartographCore

struct ModelDocumentTests {
    /// docs/model.md's example, completed with the `Publisher` entity that its inverse names.
    static let designExample = #"""
        {
          "entities": [
            { "name": "Character", "parent": null, "abstract": false,
              "attributes": [
                { "name": "identifier", "type": "integer64", "optional": false,
                  "userInfo": { "JSONKeyPath": "id", "JSONTransformerName": "StringToInteger" } },
                { "name": "name", "type": "string", "default": "", "minLength": 1, "maxLength": 200 }
              ],
              "relationships": [
                { "name": "publisher", "destination": "Publisher", "toMany": false,
                  "inverse": "characters", "deleteRule": "nullify", "userInfo": { "JSONKeyPath": "publisher" } }
              ],
              "userInfo": { "identityAttributes": "identifier" } },
            { "name": "Publisher",
              "attributes": [ { "name": "id", "type": "Integer 64" } ],
              "relationships": [ { "name": "characters", "destination": "Character", "toMany": true, "inverse": "publisher" } ] }
          ],
          "valueTransformers": { "GenderCode": { "type": "map", "map": { "M": "male", "F": "female" } } },
          "entityMappers": { "MessageMapper": { "keyPath": "type", "map": { "text": "Character", "picture": "Publisher" } } },
          "dictionaryTransformers": { "LegacyIds": [ { "op": "copy", "from": "legacy_id", "to": "id" } ] },
          "options": { "identificationInference": true, "mapUnannotatedByName": false }
        }
        """#

    @Test func R_M1_parsesTheDesignExample() throws {
        let model = try parseModel(Self.designExample, name: "comics")
        #expect(model.name == "comics")
        #expect(model.version == 1)
        #expect(model.entities.map(\.name) == ["Character", "Publisher"])
        let character = try #require(model.entity(named: "Character"))
        #expect(character.attributes == [
            Attribute(name: "identifier", type: .integer64, optional: false,
                      userInfo: JSONObject([("JSONKeyPath", "id"), ("JSONTransformerName", "StringToInteger")])),
            Attribute(name: "name", type: .string, defaultValue: "", minLength: 1, maxLength: 200),
        ])
        #expect(character.relationships == [
            Relationship(name: "publisher", destination: "Publisher", inverse: "characters", userInfo: JSONObject([("JSONKeyPath", "publisher")])),
        ])
        #expect(character.userInfo["identityAttributes"] == "identifier")
        #expect(model.valueTransformers["GenderCode"]?["type"] == "map")
        #expect(model.entityMappers["MessageMapper"]?["keyPath"] == "type")
        #expect(model.dictionaryTransformers["LegacyIds"]?.arrayValue?.count == 1)
        #expect(model.options == ModelOptions(identificationInference: true, mapUnannotatedByName: false))
        #expect(model.warnings.isEmpty)
        #expect(model.identificationAttributes(of: "Character") == ["identifier"])
        #expect(model.identificationAttributes(of: "Publisher") == ["id"])
    }

    @Test func R_M1_optionalDefaultsToTrueAndCoreDataTypeNamesAreAccepted() throws {
        let names = ["Integer 16", "Integer 32", "Integer 64", "Decimal", "Double", "Float", "String", "Boolean", "Date", "Binary", "UUID", "URI", "Transformable"]
        let attributes = names.enumerated().map { #"{"name": "a\#($0)", "type": "\#($1)"}"# }.joined(separator: ",")
        let model = try parseModel(entityDocument(attributes: attributes))
        #expect(model.entities[0].attributes.map(\.type) == AttributeType.allCases)
        #expect(model.entities[0].attributes.allSatisfy { $0.optional })
    }

    @Test func R_M1_defaultsAndBoundsCoerceToTheAttributeType() throws {
        let model = try parseModel(entityDocument(attributes: #"""
            {"name": "count", "type": "integer16", "default": "12", "minValue": 0, "maxValue": 100},
            {"name": "price", "type": "decimal", "default": 12345678901234567.891},
            {"name": "at", "type": "date", "default": "2024-01-01T00:00:00Z", "minValue": 0},
            {"name": "flag", "type": "boolean", "default": "yes"},
            {"name": "code", "type": "string", "regex": "[A-Z]{3}", "minLength": 3, "maxLength": 3}
            """#))
        let attributes = model.entities[0].attributes
        #expect(attributes[0].defaultValue == "12")
        #expect(attributes[0].maxValue == 100)
        #expect(attributes[1].defaultValue?.numberValue?.text == "12345678901234567.891")
        #expect(attributes[4].regex == "[A-Z]{3}")
    }

    @Test func R_M1_unknownTypeIsReportedWithPointer() {
        let problems = modelProblems(entityDocument(attributes: #"{"name": "a", "type": "int"}, {"name": "b"}"#))
        #expect(problems["/entities/0/attributes/0/type"]?.contains("unknown attribute type 'int'") == true)
        #expect(problems["/entities/0/attributes/1/type"] == "is required")
        #expect(problems.count == 2)
    }

    @Test func R_M1_valuesThatDoNotFitTheTypeAreReported() {
        let problems = modelProblems(entityDocument(attributes: #"""
            {"name": "a", "type": "integer16", "default": "12x", "maxValue": 70000},
            {"name": "b", "type": "date", "default": "yesterday"},
            {"name": "c", "type": "string", "minValue": 1, "minLength": 5, "maxLength": 2, "regex": "("},
            {"name": "d", "type": "integer32", "minLength": 1, "minValue": 10, "maxValue": 5, "regex": "x"},
            {"name": "e", "type": "uuid", "default": "not-a-uuid", "optional": "no"}
            """#))
        #expect(problems["/entities/0/attributes/0/default"] == #"is not a valid integer16: "12x" is not a number"#)
        #expect(problems["/entities/0/attributes/0/maxValue"] == "is not a valid integer16: 70000 is out of range for integer16")
        #expect(problems["/entities/0/attributes/1/default"]?.contains("is not an ISO 8601 date-time") == true)
        #expect(problems["/entities/0/attributes/2/minValue"] == "applies to numeric and date attributes, not string; use minLength/maxLength")
        #expect(problems["/entities/0/attributes/2/minLength"] == "is greater than maxLength (5 > 2)")
        #expect(problems["/entities/0/attributes/2/regex"] == "is not a valid regular expression")
        #expect(problems["/entities/0/attributes/3/minLength"] == "applies to string and binary attributes, not integer32; use minValue/maxValue")
        #expect(problems["/entities/0/attributes/3/minValue"] == "is greater than maxValue")
        #expect(problems["/entities/0/attributes/3/regex"] == "applies to string attributes, not integer32")
        #expect(problems["/entities/0/attributes/4/default"]?.contains("is not a UUID") == true)
        #expect(problems["/entities/0/attributes/4/optional"] == "expected true or false, got 'no'")
        #expect(problems.count == 11)
    }

    @Test func R_M2_relationshipDefaultsAndDeleteRules() throws {
        let model = try parseModel(#"""
            {"entities": [
              {"name": "A", "relationships": [
                {"name": "b", "destination": "B"},
                {"name": "c", "destination": "B", "toMany": true, "ordered": true, "minCount": 1, "maxCount": 3, "deleteRule": "cascade"},
                {"name": "d", "destination": "B", "deleteRule": "deny"},
                {"name": "e", "destination": "B", "deleteRule": "No Action"}]},
              {"name": "B"}]}
            """#)
        let relationships = model.entities[0].relationships
        #expect(relationships[0] == Relationship(name: "b", destination: "B", toMany: false, ordered: false, optional: true, deleteRule: .nullify))
        #expect(relationships[1] == Relationship(name: "c", destination: "B", toMany: true, ordered: true, minCount: 1, maxCount: 3, deleteRule: .cascade))
        #expect(relationships.map(\.deleteRule) == [.nullify, .cascade, .deny, .noAction])
    }

    @Test func R_M2_orderedAndCountsOnAToOneAreReported() {
        let problems = modelProblems(#"""
            {"entities": [{"name": "A", "relationships": [
              {"name": "b", "destination": "A", "ordered": true, "maxCount": 1},
              {"name": "c", "destination": "A", "toMany": true, "minCount": 4, "maxCount": 2, "deleteRule": "delete"}]}]}
            """#)
        #expect(problems["/entities/0/relationships/0/ordered"] == "applies to to-many relationships only")
        #expect(problems["/entities/0/relationships/0/maxCount"] == "applies to to-many relationships only (set toMany to true)")
        #expect(problems["/entities/0/relationships/1/minCount"] == "is greater than maxCount (4 > 2)")
        #expect(problems["/entities/0/relationships/1/deleteRule"] == "unknown delete rule 'delete'; expected one of nullify, cascade, deny, noAction")
        #expect(problems.count == 4)
    }

    @Test func R_M3_subEntitiesHaveTheirParentsProperties() throws {
        let model = try parseModel(#"""
            {"entities": [
              {"name": "Message", "abstract": true, "attributes": [{"name": "id", "type": "integer64"}]},
              {"name": "TextMessage", "parent": "Message", "attributes": [{"name": "text", "type": "string"}]}]}
            """#)
        #expect(model.entities[0].abstract)
        #expect(model.entities[1].parent == "Message")
        #expect(model.allAttributes(of: "TextMessage").map(\.name) == ["id", "text"])
        #expect(model.identificationAttributes(of: "TextMessage") == ["id"])
    }

    @Test func R_M5_unknownMembersAreReportedButUserInfoIsFreeForm() {
        let problems = modelProblems(#"""
            {"entites": [], "entities": [{"name": "A", "atributes": [],
              "attributes": [{"name": "a", "type": "string", "optinal": true, "userInfo": {"anything": [1, {"goes": null}]}}],
              "userInfo": {"free": {"form": true}}}],
             "options": {"identificationInference": true, "inference": false}}
            """#)
        #expect(problems["/entites"]?.hasPrefix("unknown member 'entites'") == true)
        #expect(problems["/entities/0/atributes"]?.hasPrefix("unknown member 'atributes'") == true)
        #expect(problems["/entities/0/attributes/0/optinal"]?.hasPrefix("unknown member 'optinal'") == true)
        #expect(problems["/options/inference"]?.hasPrefix("unknown member 'inference'") == true)
        #expect(problems.count == 4)
    }

    @Test func R_M5_wrongKindsAreReportedWithWhatWasFound() {
        let problems = modelProblems(#"""
            {"entities": [{"name": 7, "abstract": "yes", "attributes": {}, "userInfo": []}, "Item"],
             "valueTransformers": {"T": {"type": "lookup"}, "U": 3}, "entityMappers": {"M": {"keyPath": "type"}},
             "dictionaryTransformers": {"D": [{"op": "rename"}]}, "version": 0}
            """#)
        #expect(problems["/entities/0/name"] == "expected a string, got 7")
        #expect(problems["/entities/0/abstract"] == "expected true or false, got 'yes'")
        #expect(problems["/entities/0/attributes"] == "expected an array, got object")
        #expect(problems["/entities/0/userInfo"] == "expected an object, got array")
        #expect(problems["/entities/1"] == "expected an entity object, got string")
        #expect(problems["/valueTransformers/T/type"]?.hasPrefix("unknown value transformer type 'lookup'") == true)
        #expect(problems["/valueTransformers/U"] == "expected a value transformer object or the name of a transformer, got number")
        #expect(problems["/entityMappers/M/map"] == "is required")
        #expect(problems["/dictionaryTransformers/D/0/op"]?.hasPrefix("unknown operation 'rename'") == true)
        #expect(problems["/version"] == "expected a positive integer, got 0")
        #expect(problems.count == 10)
    }

    @Test func R_M5_aDocumentThatIsNotAnObjectIs422AndNotJSONIs400() {
        #expect(modelError("[]")?.code == .unprocessable)
        #expect(modelError("[]")?.errors.first?.message == "expected an object, got array")
        #expect(modelError(#"{"entities": [}"#)?.code == .badRequest)
        #expect(modelError("{}")?.errors.first == CartographError.Detail(pointer: "/entities", message: "is required: a model document lists its entities (or gives coreDataModel)"))
    }

    @Test func R_M5_theSummarySaysHowManyProblemsThereAre() {
        let error = modelError(entityDocument(attributes: #"{"name": "a", "type": "int"}, {"name": "b", "type": "int"}"#))
        #expect(error?.detail == "The model document is invalid (2 problems).")
        #expect(error?.errors.map(\.pointer) == ["/entities/0/attributes/0/type", "/entities/0/attributes/1/type"])
    }

    @Test func R_M3_entityAndSubentitiesKeepDocumentOrder() throws {
        let model = try parseModel(#"""
            {"entities": [{"name": "C", "parent": "B"}, {"name": "A"}, {"name": "D", "parent": "A"}, {"name": "B", "parent": "A"}, {"name": "E"}]}
            """#)
        #expect(model.entityAndSubentities(of: "A") == ["C", "A", "D", "B"])
        #expect(model.entityAndSubentities(of: "B") == ["C", "B"])
        #expect(model.entityAndSubentities(of: "E") == ["E"])
        #expect(model.entityAndSubentities(of: "Missing") == [])
    }

    /// Found while probing model documents for hangs: every entity's lineage was walked with a
    /// linear `contains` per step, and `entityAndSubentities` walked up from every entity, so an
    /// 88 KB document of 1,000 entities in one inheritance chain took 54 s (debug) to read and
    /// normalize, and the store asks `entityAndSubentities` for each entity again.
    @Test func R_S2_aDeepInheritanceChainIsNotQuadratic() throws {
        let entities = (0..<ModelDocument.maximumEntities).map { index in
            #"{"name": "E\#(index)", \#(index == 0 ? "" : #""parent": "E\#(index - 1)", "#)"attributes": [{"name": "a\#(index)", "type": "string"}], "userInfo": {"identityAttributes": "a0"}}"#
        }
        let document = Array(#"{"entities": [\#(entities.joined(separator: ","))]}"#.utf8)
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            let model = try ModelDocument.parse(jsonBytes: document, name: "chain")
            #expect(model.normalizedJSON["entities"]?.arrayValue?.count == ModelDocument.maximumEntities)
            #expect(model.entityAndSubentities(of: "E0").count == ModelDocument.maximumEntities)
            #expect(model.identificationAttributes(of: "E999") == ["a0"])
        }
        #expect(elapsed < .seconds(15), "took \(elapsed)")
    }
}
