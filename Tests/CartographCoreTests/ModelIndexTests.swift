// Indexes declared in the model (R-M7, docs/predicates.md "Indexes and query plans"): `indexed` on an
// attribute and an entity's `fetchIndexes`, from a JSON document or a Core Data file, in the normalized
// form, validated with pointers, and a change of them a migration of its own kind.
import Testing
@testable import CartographCore

private let articles = #"""
{"entities": [{"name": "Article",
  "attributes": [{"name": "id", "type": "integer64"}, {"name": "publishedAt", "type": "date", "indexed": true},
                 {"name": "views", "type": "integer64"}, {"name": "title", "type": "string"}],
  "relationships": [{"name": "author", "destination": "Author", "inverse": "articles"}],
  "fetchIndexes": [{"name": "popular", "elements": [{"attribute": "views", "order": "descending"}, "publishedAt"]}]},
 {"name": "Author", "attributes": [{"name": "id", "type": "integer64"}],
  "relationships": [{"name": "articles", "destination": "Article", "toMany": true, "inverse": "author"}]}]}
"""#

struct ModelIndexTests {
    @Test func R_M7_indexedAttributesAndFetchIndexesAreReadAndNormalized() throws {
        let model = try parseModel(articles)
        let article = try #require(model.entity(named: "Article"))
        #expect(article.attributes.map(\.indexed) == [false, true, false, false])
        #expect(article.fetchIndexes == [FetchIndex(name: "popular", elements: [.init(attribute: "views", descending: true), .init(attribute: "publishedAt")])])

        let normalized = model.normalizedJSON
        let entities = normalized["entities"]?.arrayValue ?? []
        let entity = entities.first
        #expect(entity?["attributes"]?.arrayValue?.map { $0["indexed"] } == [false, true, false, false], "the default is explicit")
        #expect(entity?["fetchIndexes"] == [["name": "popular", "elements": [
            ["attribute": "views", "order": "descending"], ["attribute": "publishedAt", "order": "ascending"],
        ]]])
        #expect(entities.last?["fetchIndexes"] == [])
        #expect(try ModelDocument.parse(json: normalized, name: "test") == model, "the normalized form reads back")
    }

    @Test(arguments: [
        (#"[{"name": "byAuthor", "elements": ["author"]}]"#, "/entities/0/fetchIndexes/0/elements/0", "is a relationship"),
        (#"[{"name": "byNothing", "elements": ["nothing"]}]"#, "/entities/0/fetchIndexes/0/elements/0", "has no attribute"),
        (#"[{"name": "twice", "elements": ["views", {"attribute": "views"}]}]"#, "/entities/0/fetchIndexes/0/elements/1", "twice"),
        (#"[{"name": "empty", "elements": []}]"#, "/entities/0/fetchIndexes/0/elements", "at least one element"),
        (#"[{"name": "sideways", "elements": [{"attribute": "views", "order": "up"}]}]"#, "/entities/0/fetchIndexes/0/elements/0/order", "descending"),
        (#"[{"name": "a", "elements": ["views"]}, {"name": "a", "elements": ["title"]}]"#, "/entities/0/fetchIndexes/1/name", "duplicates"),
        (#"[{"elements": ["views"]}]"#, "/entities/0/fetchIndexes/0/name", "required"),
        (#"{"name": "x"}"#, "/entities/0/fetchIndexes", "an array"),
    ])
    func R_M7_aFetchIndexThatCannotBeBuiltIs422AtItsPointer(fetchIndexes: String, pointer: String, message: String) {
        let document = #"{"entities": [{"name": "Article", "attributes": [{"name": "views", "type": "integer64"}, {"name": "title", "type": "string"}], "#
            + #""relationships": [{"name": "author", "destination": "Article"}], "fetchIndexes": \#(fetchIndexes)}]}"#
        let problems = modelProblems(document)
        #expect(problems[pointer]?.contains(message) == true, "\(problems)")
    }

    @Test func R_M7_aRelationshipIsNotIndexedByDeclaration() {
        let problems = modelProblems(entityDocument(relationships: #"{"name": "parent", "destination": "Item", "indexed": true}"#))
        #expect(problems["/entities/0/relationships/0/indexed"]?.contains("only attributes") == true, "\(problems)")
        #expect(modelProblems(entityDocument(attributes: #"{"name": "x", "type": "string", "indexed": "yes"}"#))["/entities/0/attributes/0/indexed"] != nil)
    }

    @Test func R_M7_coreDataIndexedAttributesAndFetchIndexesAreImported() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Event" representedClassName="Event" syncable="YES">
                    <attribute name="day" attributeType="Date" usesScalarValueType="NO" indexed="YES"/>
                    <attribute name="kind" attributeType="String"/>
                    <attribute name="rank" attributeType="Integer 32" usesScalarValueType="YES"/>
                    <fetchIndex name="byKindAndRank">
                        <fetchIndexElement property="kind" type="Binary" order="ascending"/>
                        <fetchIndexElement property="rank" type="Binary" order="descending"/>
                    </fetchIndex>
                    <fetchIndex name="computed">
                        <fetchIndexElement expression="rank + 1" expressionType="Integer 32" type="Binary" order="ascending"/>
                    </fetchIndex>
                </entity>
            </model>
            """
        let model = try ModelDocument.parse(coreDataXML: Array(xml.utf8), name: "events")
        let event = try #require(model.entity(named: "Event"))
        #expect(event.attributes.map(\.indexed) == [true, false, false])
        #expect(event.fetchIndexes == [FetchIndex(name: "byKindAndRank", elements: [.init(attribute: "kind"), .init(attribute: "rank", descending: true)])],
                "an expression element is left out, and an index left with none")
        // Groot's model marks its identifiers indexed="YES".
        #expect(try ModelFixtures.groot().entity(named: "Character")?.attributes.first { $0.name == "identifier" }?.indexed == true)
    }

    @Test func R_M7_changingIndexesIsAMigrationThatLosesNothing() throws {
        let before = try parseModel(articles)
        var after = before
        after.entities[0].attributes[1].indexed = false
        after.entities[0].attributes[3].indexed = true
        after.entities[0].fetchIndexes = []
        let migration = ModelMigration(from: before, to: after)
        #expect(migration.changes.map(\.kind) == [.indexesChanged, .indexesChanged, .indexesChanged])
        #expect(migration.changes.map(\.pointer) == ["/entities/0/fetchIndexes", "/entities/0/attributes/1/indexed", "/entities/0/attributes/3/indexed"])
        #expect(!migration.hasDestructiveChanges)
    }
}
