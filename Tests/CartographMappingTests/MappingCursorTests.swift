// A mapping's incremental cursor (R-P16, docs/mapping.md "Incremental cursors"): what a document may
// declare, its normalized form, and the order values are compared in.
import CartographCore
import CartographMapping
import Testing

struct MappingCursorTests {
    @Test func R_P16_aCursorIsAnAttributeTheMappingMapsKeptPerItsScopeAndNormalizedToAnObject() throws {
        let short = try EntityMapping.parse(json(#"{"entity": "Project", "attributes": ["projectID", "updatedAt"], "cursor": "updatedAt"}"#),
                                            model: MappingFixtures.model)
        #expect(short.cursor == MappingCursor(attribute: "updatedAt"))
        #expect(short.json["cursor"] == ["attribute": "updatedAt", "scope": []])
        let scoped = try EntityMapping.parse(json(#"{"entity": "Project", "attributes": ["projectID", "name"], "cursor": {"attribute": "name", "scope": ["org", "repo"]}}"#),
                                             model: MappingFixtures.model)
        #expect(scoped.cursor == MappingCursor(attribute: "name", scope: ["org", "repo"]))
        #expect(try EntityMapping.parse(scoped.json, model: MappingFixtures.model) == scoped, "the normalized form reads back the same")
    }

    @Test func R_P16_aCursorThatCannotBeResumedFromIsRefusedAtItsPointer() {
        #expect(mappingProblems(#"{"entity": "Project", "attributes": ["projectID"], "cursor": "updatedAt"}"#)
            == ["/cursor": "'updatedAt' is not an attribute this mapping maps"])
        #expect(mappingProblems(#"{"entity": "Project", "attributes": ["projectID", "archived"], "cursor": {"attribute": "archived"}}"#)
            == ["/cursor/attribute": "'archived' is boolean, which has no order to resume from"])
        #expect(mappingProblems(#"{"entity": "Project", "attributes": ["projectID"], "cursor": {"attribute": "projectID", "scope": ["repo", "repo", 3], "since": 1}}"#)
            == ["/cursor/scope/1": "names 'repo' twice", "/cursor/scope/2": "is not a query parameter name",
                "/cursor/since": "unknown member 'since'; expected one of attribute, scope"])
        #expect(mappingProblems(#"{"entity": "Project", "attributes": ["projectID"], "cursor": 5}"#)
            == ["/cursor": #"expected an attribute name or {"attribute", "scope"}"#])
        #expect(mappingProblems(#"""
            {"entity": "Project", "attributes": ["projectID"],
             "relationships": [{"from": "tasks", "to": "tasks", "mapping": {"entity": "Task", "attributes": ["id"], "cursor": "id"}}]}
            """#) == ["/relationships/0/mapping/cursor": "applies to top-level mappings only"])
    }

    @Test func R_P16_theGreaterValueIsChosenInTheOrderQueriesSortIn() {
        #expect(MappingCursor.greater(nil, .integer(3)) == .integer(3))
        #expect(MappingCursor.greater(.integer(9), .integer(3)) == .integer(9))
        #expect(MappingCursor.greater(.date(millisecondsSince1970: 1), .date(millisecondsSince1970: 2)) == .date(millisecondsSince1970: 2))
        #expect(MappingCursor.greater(.double(-1.5), .double(-2)) == .double(-1.5))
        // By UTF-8 bytes, as SQLite's BINARY collation orders `orderBy`: "é" (0xC3 0xA9) sorts after "z".
        #expect(MappingCursor.greater(.string("z"), .string("é")) == .string("é"))
        #expect(MappingCursor.greater(.string("2026-11-28T10:00:00Z"), .string("2026-11-28T09:00:00Z")) == .string("2026-11-28T10:00:00Z"))
    }
}
