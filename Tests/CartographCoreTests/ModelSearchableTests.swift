// `searchable` attributes (R-Q6, docs/model.md): read from a JSON document or a Core Data file's
// user-info key, normalized (written only when true), refused on a type that is not a string, and a
// change of it a migration that loses nothing.
import Testing
@testable import CartographCore

private let articles = #"""
{"entities": [{"name": "Article",
  "attributes": [{"name": "id", "type": "integer64"}, {"name": "title", "type": "string", "searchable": true},
                 {"name": "body", "type": "string"}]}]}
"""#

struct ModelSearchableTests {
    @Test func R_Q6_searchableAttributesAreReadAndNormalized() throws {
        let model = try parseModel(articles)
        #expect(model.entity(named: "Article")?.attributes.map(\.searchable) == [false, true, false])
        let attributes = model.normalizedJSON["entities"]?.arrayValue?.first?["attributes"]?.arrayValue ?? []
        #expect(attributes.map { $0["searchable"] } == [nil, true, nil], "written only when true")
        #expect(try ModelDocument.parse(json: model.normalizedJSON, name: "test") == model, "the normalized form reads back")
    }

    @Test func R_Q6_onlyStringAttributesAreSearchable() {
        let problems = modelProblems(entityDocument(attributes: #"{"name": "n", "type": "integer64", "searchable": true}"#))
        #expect(problems["/entities/0/attributes/0/searchable"]?.contains("only string attributes") == true, "\(problems)")
        #expect(modelProblems(entityDocument(attributes: #"{"name": "x", "type": "string", "searchable": "yes"}"#))["/entities/0/attributes/0/searchable"] != nil)
    }

    @Test func R_Q6_coreDataSearchableUserInfoKeyIsImported() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Note" representedClassName="Note" syncable="YES">
                    <attribute name="title" attributeType="String">
                        <userInfo><entry key="searchable" value="YES"/></userInfo>
                    </attribute>
                    <attribute name="body" attributeType="String">
                        <userInfo><entry key="searchable" value="NO"/></userInfo>
                    </attribute>
                    <attribute name="tag" attributeType="String"/>
                </entity>
            </model>
            """
        let model = try ModelDocument.parse(coreDataXML: Array(xml.utf8), name: "notes")
        #expect(model.entity(named: "Note")?.attributes.map(\.searchable) == [true, false, false])
    }

    @Test func R_Q6_changingSearchableIsAMigrationThatLosesNothing() throws {
        let before = try parseModel(articles)
        var after = before
        after.entities[0].attributes[1].searchable = false
        after.entities[0].attributes[2].searchable = true
        let migration = ModelMigration(from: before, to: after)
        #expect(migration.changes.map(\.kind) == [.indexesChanged, .indexesChanged])
        #expect(migration.changes.map(\.pointer) == ["/entities/0/attributes/1/searchable", "/entities/0/attributes/2/searchable"])
        #expect(!migration.hasDestructiveChanges)
    }
}
