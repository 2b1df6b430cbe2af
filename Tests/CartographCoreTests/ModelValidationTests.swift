// Whole-model validation (R-M5, docs/model.md#validation): one located problem per mistake, limits that fail fast,
// and warnings for annotations naming transformers or mappers the model does not have.
import Foundation
import Testing
@testable import CartographCore

struct ModelValidationTests {
    @Test func R_M5_danglingDestinationIsReportedWithPointer() {
        let problems = modelProblems(#"{"entities": [{"name": "A"}, {"name": "B", "relationships": [{"name": "a", "destination": "Aa"}]}]}"#)
        #expect(problems == ["/entities/1/relationships/0/destination": "no entity is named 'Aa'"])
    }

    @Test func R_M5_danglingParentIsReportedWithPointer() {
        let problems = modelProblems(#"{"entities": [{"name": "A", "parent": "Base"}]}"#)
        #expect(problems == ["/entities/0/parent": "no entity is named 'Base'"])
    }

    @Test func R_M5_danglingInverseIsReportedWithPointer() {
        let problems = modelProblems(#"""
            {"entities": [{"name": "A", "relationships": [{"name": "b", "destination": "B", "inverse": "aa"}]},
                          {"name": "B", "relationships": [{"name": "a", "destination": "A", "inverse": "b"}]}]}
            """#)
        #expect(problems["/entities/0/relationships/0/inverse"] == "B has no relationship named 'aa'")
        #expect(problems["/entities/1/relationships/0/inverse"] == "A.b names B.aa as its inverse, not B.a; both sides must name each other")
        #expect(problems.count == 2)
    }

    @Test func R_M5_inversesMustNameEachOtherButAreOptional() throws {
        let oneSided = modelProblems(#"""
            {"entities": [{"name": "A", "relationships": [{"name": "b", "destination": "B", "inverse": "a"}]},
                          {"name": "B", "relationships": [{"name": "a", "destination": "A"}]}]}
            """#)
        #expect(oneSided == ["/entities/0/relationships/0/inverse": "B.a names no inverse; both sides must name each other"])
        // Without inverses on either side the model is valid (docs/model.md#relationships).
        let model = try parseModel(#"""
            {"entities": [{"name": "A", "relationships": [{"name": "b", "destination": "B"}]},
                          {"name": "B", "relationships": [{"name": "a", "destination": "A"}]}]}
            """#)
        #expect(model.entities[0].relationships[0].inverse == nil)
    }

    @Test func R_M5_inversesResolveThroughInheritance() throws {
        // Groot's shape: the inverse is declared on the abstract parent of the destination's objects.
        let model = try parseModel(#"""
            {"entities": [
              {"name": "Abstract", "abstract": true, "relationships": [{"name": "container", "destination": "Container", "inverse": "abstracts"}]},
              {"name": "Concrete", "parent": "Abstract"},
              {"name": "Container", "relationships": [{"name": "abstracts", "destination": "Abstract", "toMany": true, "inverse": "container"}]},
              {"name": "Holder", "relationships": [{"name": "item", "destination": "Concrete"}]}]}
            """#)
        #expect(model.relationship("container", of: "Concrete")?.destination == "Container")
        // A namesake on another entity is not the inverse.
        let problems = modelProblems(#"""
            {"entities": [
              {"name": "A", "relationships": [{"name": "c", "destination": "C", "inverse": "owner"}]},
              {"name": "B", "relationships": [{"name": "c", "destination": "C"}]},
              {"name": "C", "relationships": [{"name": "owner", "destination": "B", "inverse": "c"}]}]}
            """#)
        #expect(problems["/entities/0/relationships/0/inverse"] == "C.owner names B.c as its inverse, not A.c; both sides must name each other")
    }

    @Test func R_M5_duplicateEntityNamesAreReported() {
        let problems = modelProblems(#"{"entities": [{"name": "A"}, {"name": "B"}, {"name": "A"}]}"#)
        #expect(problems == ["/entities/2/name": "duplicates the name of the entity at /entities/0"])
    }

    @Test func R_M5_duplicatePropertyNamesAreReportedIncludingInheritedOnes() {
        let problems = modelProblems(#"""
            {"entities": [
              {"name": "Base", "attributes": [{"name": "id", "type": "integer64"}, {"name": "id", "type": "string"}]},
              {"name": "Middle", "parent": "Base", "relationships": [{"name": "base", "destination": "Base"}]},
              {"name": "Leaf", "parent": "Middle", "attributes": [{"name": "id", "type": "string"}, {"name": "base", "type": "string"}]},
              {"name": "Sibling", "parent": "Base", "attributes": [{"name": "base", "type": "string"}]}]}
            """#)
        #expect(problems["/entities/0/attributes/1/name"] == "duplicates the name of the property at /entities/0/attributes/0")
        #expect(problems["/entities/2/attributes/0/name"] == "duplicates the property 'id' that Leaf inherits from Base")
        #expect(problems["/entities/2/attributes/1/name"] == "duplicates the property 'base' that Leaf inherits from Middle")
        // A sibling's property of the same name is not inherited.
        #expect(problems.count == 3)
    }

    /// Found by the hostile-input sweep (HostileInputSweepLiveTests): each of these was a 500 from
    /// SQLite at registration ("object name reserved for internal use", "table already exists",
    /// "duplicate column name"), because entities are tables and properties columns, whose names SQLite
    /// compares ignoring case.
    @Test(arguments: [
        (#"[{"name": "sqlite_master"}]"#, "/entities/0/name", "names beginning with 'sqlite_' are reserved (the store names a table after the entity)"),
        (#"[{"name": "A"}, {"name": "SQLite_Sequence", "parent": "A"}]"#, "/entities/1/name",
         "names beginning with 'sqlite_' are reserved (the store names a table after the entity)"),
        (#"[{"name": "Item"}, {"name": "item"}]"#, "/entities/1/name",
         "differs only in case from the entity at /entities/0 (the store's table and column names ignore case)"),
        (#"[{"name": "A", "attributes": [{"name": "x", "type": "string"}, {"name": "X", "type": "string"}]}]"#, "/entities/0/attributes/1/name",
         "differs only in case from the property at /entities/0/attributes/0 (the store's table and column names ignore case)"),
        (#"[{"name": "A", "attributes": [{"name": "x", "type": "string"}], "relationships": [{"name": "X", "destination": "A"}]}]"#,
         "/entities/0/relationships/0/name",
         "differs only in case from the property at /entities/0/attributes/0 (the store's table and column names ignore case)"),
    ])
    func R_M5_namesTheStoreCannotTellApartAreReported(entities: String, pointer: String, message: String) {
        #expect(modelProblems(#"{"entities": "# + entities + "}") == [pointer: message])
    }

    @Test func R_M5_namesDifferingOnlyInCaseFromAnInheritedOneAreDistinctColumnsAndValid() throws {
        // A sub-entity's own attribute is the column "Leaf.X", apart from its root's "x".
        let model = try parseModel(#"""
            {"entities": [{"name": "Base", "attributes": [{"name": "x", "type": "string"}]},
                          {"name": "Leaf", "parent": "Base", "attributes": [{"name": "X", "type": "string"}]},
                          {"name": "select", "attributes": [{"name": "rowid", "type": "string"}, {"name": "sqlite_master", "type": "string"}]}]}
            """#)
        #expect(model.entities.map(\.name) == ["Base", "Leaf", "select"])
    }

    @Test func R_M5_inheritanceCyclesAreReportedOnceEach() {
        let problems = modelProblems(#"""
            {"entities": [{"name": "A", "parent": "C"}, {"name": "B", "parent": "A"}, {"name": "C", "parent": "B"},
                          {"name": "D", "parent": "A"}, {"name": "E", "parent": "E"}]}
            """#)
        #expect(problems["/entities/0/parent"] == "inheritance cycle: A -> C -> B -> A")
        #expect(problems["/entities/4/parent"] == "inheritance cycle: E -> E")
        #expect(problems.count == 2)
    }

    @Test func R_M5_identityAttributesThatDoNotExistAreReported() {
        let problems = modelProblems(#"""
            {"entities": [
              {"name": "A", "attributes": [{"name": "id", "type": "integer64"}], "relationships": [{"name": "b", "destination": "B"}],
               "userInfo": {"identityAttributes": "id, uuid"}},
              {"name": "B", "userInfo": {"RKEntityIdentificationAttributes": ["id"]}},
              {"name": "C", "parent": "A", "userInfo": {"identityAttribute": "b", "RKEntityIdentificationAttributes": 7}}]}
            """#)
        #expect(problems["/entities/0/userInfo/identityAttributes"] == "names 'uuid', which is not an attribute of A")
        #expect(problems["/entities/1/userInfo/RKEntityIdentificationAttributes"] == "names 'id', which is not an attribute of B")
        #expect(problems["/entities/2/userInfo/identityAttribute"] == "names 'b', which is a relationship, not an attribute, of C")
        #expect(problems["/entities/2/userInfo/RKEntityIdentificationAttributes"] == "expected a comma-separated string or an array of attribute names, got number")
        #expect(problems.count == 4)
    }

    @Test func R_M5_invalidNamesAreReported() {
        let long = String(repeating: "a", count: 129)
        let problems = modelProblems(#"""
            {"entities": [{"name": "Bad Name", "attributes": [{"name": "_x", "type": "string"}, {"name": "\#(long)", "type": "string"}],
                           "relationships": [{"name": "9lives", "destination": "Bad Name"}]}]}
            """#)
        #expect(problems["/entities/0/name"]?.hasPrefix("'Bad Name' is not a valid name") == true)
        #expect(problems["/entities/0/attributes/0/name"]?.hasPrefix("'_x' is not a valid name") == true)
        #expect(problems["/entities/0/attributes/1/name"]?.hasPrefix("'aaaa") == true)
        #expect(problems["/entities/0/attributes/1/name"]?.contains("at most 128 characters") == true)
        #expect(problems["/entities/0/relationships/0/name"]?.hasPrefix("'9lives' is not a valid name") == true)
        // The destination names the (invalid) entity, so it is not also dangling.
        #expect(problems.count == 4)
        // 128 characters is still a name.
        #expect((try? parseModel(entityDocument(attributes: #"{"name": "\#(long.dropLast())", "type": "string"}"#))) != nil)
    }

    @Test func R_M5_everyProblemIsReportedInOneError() throws {
        let error = try #require(modelError(#"""
            {"entities": [
              {"name": "A", "parent": "Nope", "attributes": [{"name": "x", "type": "integer"}],
               "relationships": [{"name": "b", "destination": "Bee", "inverse": "a"}], "userInfo": {"identityAttributes": "id"}},
              {"name": "A"}]}
            """#))
        #expect(error.code == .unprocessable)
        #expect(Set(error.errors.map(\.pointer)) == [
            "/entities/0/attributes/0/type", "/entities/1/name", "/entities/0/parent",
            "/entities/0/relationships/0/destination", "/entities/0/userInfo/identityAttributes",
        ])
    }

    @Test func R_M5_tooManyEntitiesIsAClearErrorQuickly() throws {
        let entities = (0..<5_000).map { #"{"name": "E\#($0)", "attributes": [{"name": "id", "type": "integer64"}]}"# }
        let document = #"{"entities": [\#(entities.joined(separator: ","))]}"#
        let clock = ContinuousClock()
        var error: CartographError?
        let elapsed = clock.measure { error = modelError(document) }
        #expect(error?.errors == [CartographError.Detail(pointer: "/entities", message: "has 5000 entities; a model has at most 1000")])
        #expect(elapsed < .seconds(5))
    }

    @Test func R_M5_aThousandEntitiesInOneDeepHierarchyValidateQuickly() throws {
        // The largest valid shape that stresses inheritance: a 1,000-deep chain, each level adding a property.
        let entities = (0..<1_000).map { index in
            #"{"name": "E\#(index)", "parent": \#(index == 0 ? "null" : "\"E\(index - 1)\""), "attributes": [{"name": "a\#(index)", "type": "string"}]}"#
        }
        let clock = ContinuousClock()
        var model: Model?
        let elapsed = try clock.measure { model = try parseModel(#"{"entities": [\#(entities.joined(separator: ","))]}"#) }
        #expect(model?.entities.count == 1_000)
        #expect(elapsed < .seconds(10))
    }

    @Test func R_M5_tooManyPropertiesInAnEntityIsAClearError() {
        let attributes = (0..<700).map { #"{"name": "a\#($0)", "type": "string"}"# }.joined(separator: ",")
        let relationships = (0..<301).map { #"{"name": "r\#($0)", "destination": "Item"}"# }.joined(separator: ",")
        let problems = modelProblems(entityDocument(attributes: attributes, relationships: relationships))
        #expect(problems == ["/entities/0": "has 1001 properties; an entity has at most 1000 attributes and relationships together"])
    }

    @Test func R_M5_theProblemListIsCapped() throws {
        let attributes = (0..<300).map { #"{"name": "a\#($0)", "type": "int"}"# }.joined(separator: ",")
        let error = try #require(modelError(entityDocument(attributes: attributes)))
        #expect(error.errors.count == 100)
        #expect(error.detail == "The model document is invalid (300 problems). The first 100 are listed; 200 more were found.")
    }

    @Test func R_M5_entityMappersMustNameEntities() {
        let problems = modelProblems(#"""
            {"entities": [{"name": "Message"}], "entityMappers": {"M": {"keyPath": "type", "map": {"text": "TextMessage", "plain": "Message"}}}}
            """#)
        #expect(problems == ["/entityMappers/M/map/text": "no entity is named 'TextMessage'"])
    }

    @Test func R_M5_undeclaredTransformersAndMappersAreWarningsNotErrors() throws {
        let model = try parseModel(#"""
            {"entities": [{"name": "Item",
               "attributes": [{"name": "a", "type": "string", "userInfo": {"JSONTransformerName": "Trim"}},
                              {"name": "b", "type": "string", "userInfo": {"JSONTransformerName": "GenderCode"}},
                              {"name": "c", "type": "string", "userInfo": {"JSONTransformerName": "Rot13"}}],
               "userInfo": {"entityMapperName": "ItemMapper", "JSONDictionaryTransformerName": "LegacyIds"}}],
             "valueTransformers": {"GenderCode": {"type": "map", "map": {}}}}
            """#)
        #expect(model.warnings == [
            #"/entities/0/userInfo/entityMapperName: the entity mapper 'ItemMapper' is not declared in the model and is not built in; declare it in the model, e.g. "entityMappers": {"ItemMapper": {"keyPath": "type", "map": {"<value>": "<Entity>"}}}"#,
            #"/entities/0/userInfo/JSONDictionaryTransformerName: the dictionary transformer 'LegacyIds' is not declared in the model and is not built in; declare it in the model, e.g. "dictionaryTransformers": {"LegacyIds": [{"op": "copy", "from": "<key>", "to": "<key>"}]}"#,
            #"/entities/0/attributes/2/userInfo/JSONTransformerName: the value transformer 'Rot13' is not declared in the model and is not built in; declare it in the model, e.g. "valueTransformers": {"Rot13": "StringToInteger"} to use a built-in one under this name, or {"Rot13": {"type": "map", "map": {…}}}"#,
        ])
        #expect(ModelDocument.builtInValueTransformers.count == 13)
    }
}
