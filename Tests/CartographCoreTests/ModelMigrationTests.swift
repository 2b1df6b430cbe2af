// Migration diffs (R-M6): what keeps stored data valid and what would lose or invalidate it, each
// destructive change with a pointer into the new document and a message.
import Testing
@testable import CartographCore

struct ModelMigrationTests {
    private func migration(_ old: String, _ new: String) throws -> ModelMigration {
        ModelMigration(from: try parseModel(old), to: try parseModel(new))
    }

    private func summary(_ migration: ModelMigration) -> [String] {
        migration.changes.map { "\($0.isDestructive ? "!" : "+") \($0.kind.rawValue) \($0.pointer)" }
    }

    @Test func R_M6_anIdenticalModelMigratesNothing() throws {
        let groot = try ModelFixtures.groot()
        let again = try ModelDocument.parse(jsonBytes: groot.normalizedJSON.jsonBytes, name: "groot")
        let migration = ModelMigration(from: groot, to: again)
        #expect(migration.isEmpty)
        #expect(!migration.hasDestructiveChanges)
    }

    @Test func R_M6_restKitVersionedModelMigrationIsAdditive() throws {
        let first = try ModelDocument.parse(coreDataXML: ModelFixtures.restKitVersionedModel(""), name: "versioned")
        let third = try ModelDocument.parse(coreDataXML: ModelFixtures.restKitVersionedModel(" 3"), name: "versioned")
        let forward = ModelMigration(from: first, to: third)
        #expect(summary(forward) == ["+ attributeAdded /entities/0/attributes/0", "+ attributeAdded /entities/0/attributes/2"])
        #expect(forward.changes.map(\.property) == ["authorName", "createdAt"])
        #expect(!forward.hasDestructiveChanges)

        let backward = ModelMigration(from: third, to: first)
        #expect(backward.hasDestructiveChanges)
        #expect(backward.destructiveChanges.map(\.message) == [
            "removes the attribute Article.authorName and its stored values",
            "removes the attribute Article.createdAt and its stored values",
        ])
        #expect(backward.destructiveChanges.allSatisfy { $0.pointer == "/entities/0/attributes" })
    }

    @Test func R_M6_newEntitiesAttributesAndRelationshipsAreAdditiveUnlessRequired() throws {
        let old = #"{"entities": [{"name": "A", "attributes": [{"name": "x", "type": "string"}]}]}"#
        let new = #"""
            {"entities": [{"name": "A", "attributes": [{"name": "x", "type": "string"}, {"name": "y", "type": "integer32", "optional": false, "default": 0},
                                                       {"name": "z", "type": "string", "optional": false}],
                           "relationships": [{"name": "b", "destination": "B"}, {"name": "c", "destination": "B", "optional": false}]},
                          {"name": "B", "attributes": [{"name": "w", "type": "string", "optional": false}]}]}
            """#
        let migration = try migration(old, new)
        #expect(summary(migration) == [
            "+ attributeAdded /entities/0/attributes/1",
            "! attributeAdded /entities/0/attributes/2",
            "+ relationshipAdded /entities/0/relationships/0",
            "! relationshipAdded /entities/0/relationships/1",
            "+ entityAdded /entities/1",
        ])
        #expect(migration.destructiveChanges.first?.message == "adds the required attribute A.z without a default; stored objects would have no value")
    }

    @Test func R_M6_removalsTypeAndStructureChangesAreDestructive() throws {
        let old = #"""
            {"entities": [{"name": "Base"}, {"name": "Other"},
                          {"name": "A", "parent": "Base", "attributes": [{"name": "n", "type": "integer32"}, {"name": "gone", "type": "string"}],
                           "relationships": [{"name": "one", "destination": "Base"}, {"name": "many", "destination": "Base", "toMany": true, "ordered": true},
                                             {"name": "dropped", "destination": "Base"}]},
                          {"name": "Removed"}]}
            """#
        let new = #"""
            {"entities": [{"name": "Base"}, {"name": "Other"},
                          {"name": "A", "parent": "Other", "abstract": true, "attributes": [{"name": "n", "type": "integer64"}],
                           "relationships": [{"name": "one", "destination": "Other"}, {"name": "many", "destination": "Base"}]}]}
            """#
        let migration = try migration(old, new)
        #expect(summary(migration) == [
            "! parentChanged /entities/2/parent",
            "! abstractChanged /entities/2/abstract",
            "! typeChanged /entities/2/attributes/0/type",
            "! attributeRemoved /entities/2/attributes",
            "! destinationChanged /entities/2/relationships/0/destination",
            "! cardinalityChanged /entities/2/relationships/1/toMany",
            "! relationshipRemoved /entities/2/relationships",
            "! entityRemoved /entities",
        ])
        #expect(migration.additiveChanges.isEmpty)
        #expect(migration.changes[2].message == "changes the type of A.n from integer32 to integer64; stored values would be lost")
        #expect(migration.changes[7].message == "removes the entity Removed and its stored objects")
    }

    @Test func R_M6_makingAnAttributeRequiredIsDestructiveOnlyWithoutADefault() throws {
        let old = #"{"entities": [{"name": "A", "attributes": [{"name": "x", "type": "string"}, {"name": "y", "type": "string"}, {"name": "z", "type": "string", "optional": false}]}]}"#
        let new = #"{"entities": [{"name": "A", "attributes": [{"name": "x", "type": "string", "optional": false}, {"name": "y", "type": "string", "optional": false, "default": "?"}, {"name": "z", "type": "string"}]}]}"#
        let migration = try migration(old, new)
        #expect(summary(migration) == [
            "! optionalityChanged /entities/0/attributes/0/optional",
            "+ optionalityChanged /entities/0/attributes/1/optional",
            "+ defaultChanged /entities/0/attributes/1/default",
            "+ optionalityChanged /entities/0/attributes/2/optional",
        ])
        #expect(migration.changes[0].message == "makes A.x required without a default; stored objects without a value would be invalid")
    }

    @Test func R_M6_loosenedBoundsAreAdditiveAndTightenedOnesDestructive() throws {
        let old = #"""
            {"entities": [{"name": "A", "attributes": [
              {"name": "s", "type": "string", "minLength": 1, "maxLength": 200, "regex": "[a-z]+"},
              {"name": "n", "type": "double", "minValue": 1, "maxValue": 10},
              {"name": "d", "type": "date", "maxValue": "2030-01-01T00:00:00Z"}],
             "relationships": [{"name": "r", "destination": "A", "toMany": true, "minCount": 1, "maxCount": 5}]}]}
            """#
        let new = #"""
            {"entities": [{"name": "A", "attributes": [
              {"name": "s", "type": "string", "minLength": 3, "maxLength": 400},
              {"name": "n", "type": "double", "minValue": 0.5, "maxValue": "9.5"},
              {"name": "d", "type": "date", "maxValue": "2030-01-01T00:00:00.000Z"}],
             "relationships": [{"name": "r", "destination": "A", "toMany": true, "maxCount": 4}]}]}
            """#
        let migration = try migration(old, new)
        #expect(summary(migration) == [
            "! boundsTightened /entities/0/attributes/0/minLength",
            "+ boundsLoosened /entities/0/attributes/0/maxLength",
            "+ boundsLoosened /entities/0/attributes/0/regex",
            "+ boundsLoosened /entities/0/attributes/1/minValue",
            "! boundsTightened /entities/0/attributes/1/maxValue",
            "+ boundsLoosened /entities/0/relationships/0/minCount",
            "! boundsTightened /entities/0/relationships/0/maxCount",
        ])
        #expect(migration.changes[0].message == "tightens minLength of A.s (1 -> 3); stored values may no longer be valid")
        #expect(migration.changes[4].message == #"tightens maxValue of A.n (10 -> "9.5"); stored values may no longer be valid"#)
    }

    @Test func R_M6_annotationDeclarationAndOrderChangesAreNotEmptyButKeepData() throws {
        let base = #"{"entities": [{"name": "A", "attributes": [{"name": "x", "type": "string"}, {"name": "y", "type": "string"}]}]}"#
        let annotated = #"""
            {"entities": [{"name": "A", "attributes": [{"name": "x", "type": "string", "userInfo": {"JSONKeyPath": "ex"}}, {"name": "y", "type": "string"}]}],
             "options": {"mapUnannotatedByName": true}, "valueTransformers": {"T": {"type": "map", "map": {}}}}
            """#
        let annotations = try migration(base, annotated)
        #expect(summary(annotations) == [
            "+ annotationsChanged /entities/0/attributes/0/userInfo",
            "+ declarationsChanged /options",
            "+ declarationsChanged /valueTransformers",
        ])
        let reordered = try migration(base, #"{"entities": [{"name": "A", "attributes": [{"name": "y", "type": "string"}, {"name": "x", "type": "string"}]}]}"#)
        #expect(summary(reordered) == ["+ documentChanged "])
        #expect(!reordered.isEmpty && !reordered.hasDestructiveChanges)
    }

    @Test func R_M6_relationshipRulesAndOrderingChanges() throws {
        let old = #"{"entities": [{"name": "A", "relationships": [{"name": "r", "destination": "A", "toMany": true, "ordered": true}, {"name": "s", "destination": "A", "toMany": true}]}]}"#
        let new = #"{"entities": [{"name": "A", "relationships": [{"name": "r", "destination": "A", "toMany": true, "deleteRule": "cascade"}, {"name": "s", "destination": "A", "toMany": true, "ordered": true}]}]}"#
        let migration = try migration(old, new)
        #expect(summary(migration) == [
            "! orderingChanged /entities/0/relationships/0/ordered",
            "+ deleteRuleChanged /entities/0/relationships/0/deleteRule",
            "+ orderingChanged /entities/0/relationships/1/ordered",
        ])
    }
}
