// R-Q4 `shape=json` export, unit by unit: key paths (nested, shared prefixes), every reverse value
// transformer, nil, unannotated properties, relationships nested Groot's way with the inverse being
// serialized skipped, cycles and depth ending in references, and the object limit. The graph is a
// dictionary; the store's graph is tested through the routes (ExportTests).
import CartographCore
import CartographMapping
import Testing

/// Groot's comic-book model (GrootTests/Model.xcdatamodeld) as a model document, with the inverses
/// annotated too and the relationships the cycle and path tests need: `mentor` and `friends`
/// (no inverse) and `Publisher.featuredPower` (no inverse).
private let comicsDocument = #"""
    {"entities": [
      {"name": "Publisher",
       "attributes": [
         {"name": "identifier", "type": "integer64", "userInfo": {"JSONKeyPath": "id", "JSONTransformerName": "StringToInteger"}},
         {"name": "name", "type": "string", "userInfo": {"JSONKeyPath": "name"}},
         {"name": "internalNote", "type": "string"}],
       "relationships": [
         {"name": "characters", "destination": "Character", "toMany": true, "inverse": "publisher", "userInfo": {"JSONKeyPath": "characters"}},
         {"name": "featuredPower", "destination": "Power", "userInfo": {"JSONKeyPath": "featured_power"}}],
       "userInfo": {"identityAttributes": "identifier"}},
      {"name": "Character",
       "attributes": [
         {"name": "identifier", "type": "integer64", "userInfo": {"JSONKeyPath": "id", "JSONTransformerName": "StringToInteger"}},
         {"name": "name", "type": "string", "userInfo": {"JSONKeyPath": "name"}},
         {"name": "realName", "type": "string", "userInfo": {"JSONKeyPath": "real_name"}}],
       "relationships": [
         {"name": "powers", "destination": "Power", "toMany": true, "ordered": true, "inverse": "characters", "userInfo": {"JSONKeyPath": "powers"}},
         {"name": "publisher", "destination": "Publisher", "inverse": "characters", "userInfo": {"JSONKeyPath": "publisher"}},
         {"name": "mentor", "destination": "Character", "userInfo": {"JSONKeyPath": "mentor"}},
         {"name": "friends", "destination": "Character", "toMany": true, "userInfo": {"JSONKeyPath": "friends"}}],
       "userInfo": {"identityAttributes": "identifier"}},
      {"name": "Power",
       "attributes": [
         {"name": "identifier", "type": "integer64", "userInfo": {"JSONKeyPath": "id", "JSONTransformerName": "StringToInteger"}},
         {"name": "name", "type": "string", "userInfo": {"JSONKeyPath": "name"}}],
       "relationships": [
         {"name": "characters", "destination": "Character", "toMany": true, "inverse": "powers", "userInfo": {"JSONKeyPath": "characters"}}],
       "userInfo": {"identityAttributes": "identifier"}}
    ]}
    """#

/// A graph of the comics model holding DC Comics (10), powers 4 and 9, and Batman (1699) with both
/// powers and DC as publisher (Groot's `testSerializationToJSON`).
private func batmanGraph() throws -> MemoryGraph {
    let graph = MemoryGraph(try parseModel(comicsDocument))
    try graph.add(10, "Publisher", ["identifier": 10, "name": "DC Comics", "internalNote": "not exported"])
    try graph.add(4, "Power", ["identifier": 4, "name": "Agility"])
    try graph.add(9, "Power", ["identifier": 9, "name": "Insanely Rich"])
    try graph.add(1699, "Character", ["identifier": 1699, "name": "Batman", "realName": "Bruce Wayne"])
    try graph.link(1699, "powers", [4, 9])
    try graph.link(1699, "publisher", [10])
    return graph
}

struct AnnotationExporterTests {
    @Test func R_Q4_relationshipsNestAndTheInverseBeingSerializedIsSkipped() throws {
        let graph = try batmanGraph()
        let exporter = try AnnotationExporter(model: graph.model)
        // Groot's testSerializationToJSON, with Publisher.characters and Power.characters annotated
        // as well: each is the inverse of the relationship that reached it, so it is left out.
        expectJSON(try exporter.export(graph[1699], from: graph), #"""
            {"id": "1699", "name": "Batman", "real_name": "Bruce Wayne",
             "powers": [{"id": "4", "name": "Agility"}, {"id": "9", "name": "Insanely Rich"}],
             "publisher": {"id": "10", "name": "DC Comics", "featured_power": null},
             "mentor": null, "friends": []}
            """#)
        // From the other side, Character.publisher is the inverse being serialized.
        expectJSON(try exporter.export(graph[10], from: graph), #"""
            {"id": "10", "name": "DC Comics", "featured_power": null,
             "characters": [{"id": "1699", "name": "Batman", "real_name": "Bruce Wayne", "mentor": null, "friends": [],
                             "powers": [{"id": "4", "name": "Agility"}, {"id": "9", "name": "Insanely Rich"}]}]}
            """#)
    }

    @Test func R_Q4_nilIsNullAndAnEmptyToManyIsAnEmptyArray() throws {
        let graph = MemoryGraph(try parseModel(comicsDocument))
        // Groot's Iron Man: only a name.
        try graph.add(1, "Character", ["name": "Iron Man"])
        expectJSON(try AnnotationExporter(model: graph.model).export(graph[1], from: graph), #"""
            {"id": null, "name": "Iron Man", "real_name": null, "powers": [], "publisher": null, "mentor": null, "friends": []}
            """#)
    }

    @Test func R_Q4_dottedKeyPathsNestAndSharedPrefixesMerge() throws {
        let model = try parseModel(#"""
            {"entities": [
              {"name": "Character",
               "attributes": [
                 {"name": "realName", "type": "string", "userInfo": {"JSONKeyPath": "real_name.foo.bar.name"}},
                 {"name": "alias", "type": "string", "userInfo": {"JSONKeyPath": "real_name.foo.alias"}},
                 {"name": "publisherLabel", "type": "string", "userInfo": {"JSONKeyPath": "publisher.label"}},
                 {"name": "shadowed", "type": "string", "userInfo": {"JSONKeyPath": "code"}},
                 {"name": "code", "type": "string", "userInfo": {"JSONKeyPath": "code.value"}},
                 {"name": "unannotated", "type": "string"},
                 {"name": "readOnly", "type": "string", "userInfo": {"JSONKeyPath": "@parent.id"}},
                 {"name": "malformed", "type": "string", "userInfo": {"JSONKeyPath": "a..b"}}],
               "relationships": [{"name": "publisher", "destination": "Publisher", "userInfo": {"JSONKeyPath": "publisher"}}]},
              {"name": "Publisher", "attributes": [{"name": "name", "type": "string", "userInfo": {"JSONKeyPath": "name"}}]}
            ]}
            """#)
        let graph = MemoryGraph(model)
        try graph.add(1, "Character", ["realName": "Bruce Wayne", "alias": "Batman", "publisherLabel": "DC", "shadowed": "x", "code": "B",
                                       "unannotated": "u", "readOnly": "r", "malformed": "m"])
        try graph.add(2, "Publisher", ["name": "DC Comics"])
        try graph.link(1, "publisher", [2])
        // Groot's testSerializationToJSONWithNestedDictionaries, plus: a nested object written where
        // one is merges into it; a later key path through a value that is not an object replaces it;
        // unannotated and unwritable key paths are not exported.
        expectJSON(try AnnotationExporter(model: model).export(graph[1], from: graph), #"""
            {"real_name": {"foo": {"bar": {"name": "Bruce Wayne"}, "alias": "Batman"}},
             "publisher": {"label": "DC", "name": "DC Comics"},
             "code": {"value": "B"}}
            """#)
    }

    @Test func R_Q4_mapUnannotatedByNameExportsPropertiesByTheirNames() throws {
        let model = try parseModel(#"""
            {"entities": [
              {"name": "Note", "attributes": [{"name": "title", "type": "string"},
                                              {"name": "body", "type": "string", "userInfo": {"JSONKeyPath": "content.text"}}],
               "relationships": [{"name": "tags", "destination": "Tag", "toMany": true, "inverse": "notes"}]},
              {"name": "Tag", "attributes": [{"name": "label", "type": "string"}],
               "relationships": [{"name": "notes", "destination": "Note", "toMany": true, "inverse": "tags"}]}],
             "options": {"mapUnannotatedByName": true}}
            """#)
        let graph = MemoryGraph(model)
        try graph.add(1, "Note", ["title": "Groceries", "body": "milk"])
        try graph.add(2, "Tag", ["label": "home"])
        try graph.link(1, "tags", [2])
        expectJSON(try AnnotationExporter(model: model).export(graph[1], from: graph),
                   #"{"title": "Groceries", "content": {"text": "milk"}, "tags": [{"label": "home"}]}"#)
        // Without the option only the annotated attribute is exported.
        var strict = model
        strict.options.mapUnannotatedByName = false
        expectJSON(try AnnotationExporter(model: strict).export(graph[1], from: graph), #"{"content": {"text": "milk"}}"#)
    }

    /// (attribute type, stored value, transformer, exported value): every built-in transformer and
    /// every declared kind, through its reverse.
    @Test(arguments: [
        ("integer64", "42", "StringToInteger", #""42""#),
        ("decimal", #""12345678901234567.891""#, "StringToDecimal", #""12345678901234567.891""#),
        ("double", "1.5", "StringToDouble", #""1.5""#),
        ("boolean", "true", "StringToBool", #""true""#),
        ("date", #""2024-03-01T12:00:00+02:00""#, "ISO8601ToDate", #""2024-03-01T10:00:00.000Z""#),
        ("date", #""2023-11-14T22:13:20.250Z""#, "UnixSecondsToDate", "1700000000.25"),
        ("date", #""2023-11-14T22:13:20.123Z""#, "UnixMillisecondsToDate", "1700000000123"),
        ("uri", #""https://example.com/a?b=c""#, "StringToURL", #""https://example.com/a?b=c""#),
        ("uuid", #""0F8FAD5B-D9CB-469F-A165-70867728950E""#, "StringToUUID", #""0f8fad5b-d9cb-469f-a165-70867728950e""#),
        ("string", #""padded""#, "Trim", #""padded""#),
        ("string", #""mixed""#, "Lowercase", #""mixed""#),
        ("string", #""MIXED""#, "Uppercase", #""MIXED""#),
        ("transformable", #"{"a": [1, true]}"#, "JSONString", #""{\"a\":[1,true]}""#),
        // Declared kinds.
        ("string", #""female""#, "GenderCode", #""F""#),
        ("string", #""unknown""#, "Status", #""unknown""#),
        ("integer64", "2", "Level", #""high""#),
        ("decimal", #""1.5""#, "Ratio", #""half""#),
        ("boolean", "true", "Flag", #""Y""#),
        ("date", #""2023-12-31T23:59:00Z""#, "DayMonthYear", #""31/12/2023 23:59""#),
        ("transformable", #"["a", "b", ""]"#, "Tags", #""a,b,""#),
        ("string", #""a 1 true""#, "Words", #"["a", "1", "true"]"#),
        ("integer64", "42", "TrimmedInteger", #""42""#),
    ])
    func R_Q4_attributesExportThroughTheReverseOfTheirTransformer(type: String, stored: String, transformer: String, exported: String) throws {
        let model = try parseModel(#"""
            {"entities": [{"name": "Item", "attributes": [
               {"name": "value", "type": "\#(type)", "userInfo": {"JSONKeyPath": "v", "JSONTransformerName": "\#(transformer)"}}]}],
             "valueTransformers": {
               "GenderCode": {"type": "map", "map": {"M": "male", "F": "female"}},
               "Status": {"type": "map", "map": {"a": "active"}, "default": "unknown"},
               "Level": {"type": "map", "map": {"low": 1, "high": "2"}},
               "Ratio": {"type": "map", "map": {"half": 1.50}},
               "Flag": {"type": "map", "map": {"Y": "yes", "N": "no"}},
               "DayMonthYear": {"type": "dateFormat", "format": "dd/MM/yyyy HH:mm"},
               "Tags": {"type": "split", "separator": ","},
               "Words": {"type": "join", "separator": " "},
               "TrimmedInteger": {"type": "chain", "transformers": ["Trim", "StringToInteger"]}}}
            """#)
        let graph = MemoryGraph(model)
        try graph.add(1, "Item", ["value": json(stored)])
        #expect(try AnnotationExporter(model: model).export(graph[1], from: graph) == .object(JSONObject([("v", json(exported))])))
        // What the reverse exports maps forward to the stored value again.
        let forward = try ValueTransformerRegistry(model: model).transformer(named: transformer).transform(json(exported))
        let attribute = try #require(model.attribute("value", of: "Item"))
        #expect(try AttributeValue.coerce(forward, to: attribute.type) == AttributeValue.coerce(json(stored), to: attribute.type))
    }

    @Test func R_Q4_aValueTheReverseTransformRefusesIsLeftOutAsGrootLeavesOutNil() throws {
        let model = try parseModel(#"""
            {"entities": [{"name": "Person", "attributes": [
               {"name": "name", "type": "string", "userInfo": {"JSONKeyPath": "name"}},
               {"name": "gender", "type": "string", "userInfo": {"JSONKeyPath": "gender", "JSONTransformerName": "GenderCode"}}]}],
             "valueTransformers": {"GenderCode": {"type": "map", "map": {"M": "male", "F": "female"}}}}
            """#)
        let graph = MemoryGraph(model)
        try graph.add(1, "Person", ["name": "Ann", "gender": "other"])
        try graph.add(2, "Person", ["name": "Bob"])
        let exporter = try AnnotationExporter(model: model)
        #expect(try exporter.export(graph[1], from: graph) == ["name": "Ann"])
        #expect(try exporter.export(graph[2], from: graph) == ["name": "Bob", "gender": nil], "nil passes through every transformer")
    }

    @Test func R_Q4_anUndeclaredTransformerIs422WhenAValueNeedsIt() throws {
        let model = try parseModel(#"""
            {"entities": [{"name": "Item", "attributes": [
               {"name": "code", "type": "string", "userInfo": {"JSONKeyPath": "code", "JSONTransformerName": "Nope"}}]}]}
            """#)
        #expect(!model.warnings.isEmpty, "the model registers with a warning")
        let graph = MemoryGraph(model)
        try graph.add(1, "Item", ["code": "x"])
        try graph.add(2, "Item")
        let exporter = try AnnotationExporter(model: model)
        let error = #expect(throws: CartographError.self) { try exporter.export(graph[1], from: graph) }
        #expect(error?.code == .unprocessable)
        #expect(error?.detail.contains("'Item.code'") == true && error?.detail.contains("'Nope'") == true, "\(String(describing: error))")
        #expect(try exporter.export(graph[2], from: graph) == ["code": nil])
    }

    @Test func R_Q4_aNilToOneIsNullEvenWhereItsInverseIsBeingSerialized() throws {
        let graph = try batmanGraph()
        try graph.add(11, "Publisher", ["identifier": 11, "name": "Marvel"])
        try graph.add(1, "Character", ["identifier": 1, "name": "Robin"])
        try graph.add(2, "Character", ["identifier": 2, "name": "Alfred"])
        try graph.add(3, "Character", ["identifier": 3, "name": "Wolverine"])
        try graph.link(1699, "mentor", [2])
        try graph.link(1699, "friends", [3])
        try graph.link(3, "publisher", [11])
        try graph.link(10, "characters", [1699, 1])
        let exported = try AnnotationExporter(model: graph.model).export(graph[10], from: graph)
        let batman = try #require(exported["characters"]?.arrayValue?.first)
        // Groot decides by relationship, not by object: below Publisher.characters every
        // Character.publisher is skipped — Wolverine's (Marvel) too — except a nil one, which Groot
        // writes as null before it looks at inverses.
        #expect(batman["mentor"] == ["id": "2", "name": "Alfred", "real_name": nil, "powers": [], "publisher": nil, "mentor": nil, "friends": []])
        #expect(batman["friends"] == [["id": "3", "name": "Wolverine", "real_name": nil, "powers": [], "mentor": nil, "friends": []]])
        #expect(exported["characters"]?.arrayValue?.count == 2)
    }

    @Test func R_Q4_theInverseSkipIsScopedToThePathFromTheExportedObject() throws {
        let graph = try batmanGraph()
        try graph.add(5, "Character", ["identifier": 5, "name": "Catwoman"])
        try graph.link(5, "powers", [4])
        try graph.link(10, "featuredPower", [4])
        let exported = try AnnotationExporter(model: graph.model).export(graph[1699], from: graph)
        // Batman's powers skip Power.characters (Character.powers is on the path). The same power
        // reached through publisher.featured_power is on another path: its characters are exported —
        // Batman, on the path, as a reference, and Catwoman in full. Groot's single set would skip
        // them there too, or not, depending on the order its dictionary enumerates properties.
        #expect(exported["powers"]?.arrayValue?.first == ["id": "4", "name": "Agility"])
        let featured = try #require(exported["publisher"]?["featured_power"])
        expectJSON(featured, #"""
            {"id": "4", "name": "Agility",
             "characters": [{"id": "1699"},
                            {"id": "5", "name": "Catwoman", "real_name": null, "publisher": null, "mentor": null, "friends": []}]}
            """#)
    }

    @Test func R_Q4_cyclesWithoutAnInverseEndInReferences() throws {
        let graph = MemoryGraph(try parseModel(comicsDocument))
        try graph.add(1, "Character", ["identifier": 1, "name": "A"])
        try graph.add(2, "Character", ["identifier": 2, "name": "B"])
        try graph.add(3, "Character", ["identifier": 3, "name": "C"])
        try graph.link(1, "friends", [2])
        try graph.link(2, "friends", [1, 3])
        try graph.link(1, "mentor", [1])
        // Groot would recurse forever; an object already on the path is written by its identity.
        expectJSON(try AnnotationExporter(model: graph.model).export(graph[1], from: graph), #"""
            {"id": "1", "name": "A", "real_name": null, "powers": [], "publisher": null, "mentor": {"id": "1"},
             "friends": [{"id": "2", "name": "B", "real_name": null, "powers": [], "publisher": null, "mentor": null,
                          "friends": [{"id": "1"},
                                      {"id": "3", "name": "C", "real_name": null, "powers": [], "publisher": null, "mentor": null, "friends": []}]}]}
            """#)
    }

    @Test func R_Q4_referencesHoldACompoundIdentityThroughItsTransformers() throws {
        let model = try parseModel(#"""
            {"entities": [{"name": "Card",
               "attributes": [
                 {"name": "suit", "type": "string", "userInfo": {"JSONKeyPath": "suit", "JSONTransformerName": "Uppercase"}},
                 {"name": "value", "type": "integer16", "userInfo": {"JSONKeyPath": "rank.value", "JSONTransformerName": "StringToInteger"}},
                 {"name": "played", "type": "integer64", "userInfo": {"JSONKeyPath": "played"}}],
               "relationships": [{"name": "next", "destination": "Card", "userInfo": {"JSONKeyPath": "next"}}],
               "userInfo": {"identityAttributes": "suit, value"}}]}
            """#)
        let graph = MemoryGraph(model)
        try graph.add(1, "Card", ["suit": "HEARTS", "value": 11, "played": 3])
        try graph.add(2, "Card", ["suit": "CLUBS", "value": 3, "played": 1])
        try graph.link(1, "next", [2])
        try graph.link(2, "next", [1])
        expectJSON(try AnnotationExporter(model: model).export(graph[1], from: graph), #"""
            {"suit": "HEARTS", "rank": {"value": "11"}, "played": 3,
             "next": {"suit": "CLUBS", "rank": {"value": "3"}, "played": 1, "next": {"suit": "HEARTS", "rank": {"value": "11"}}}}
            """#)
    }

    @Test func R_Q4_objectsDeeperThanTheDepthLimitAreReferences() throws {
        let graph = MemoryGraph(try parseModel(comicsDocument))
        for id in Int64(1)...5 { try graph.add(id, "Character", ["identifier": .number(JSONNumber(id))]) }
        for id in Int64(1)...4 { try graph.link(id, "mentor", [id + 1]) }
        let exported = try AnnotationExporter(model: graph.model, limits: .init(maximumDepth: 2)).export(graph[1], from: graph)
        #expect(exported["mentor"]?["id"] == "2")
        #expect(exported["mentor"]?["mentor"]?["id"] == "3")
        #expect(exported["mentor"]?["mentor"]?["name"] == .null, "depth 2 is still exported in full")
        #expect(exported["mentor"]?["mentor"]?["mentor"] == ["id": "4"], "depth 3 is a reference")
        let unlimited = try AnnotationExporter(model: graph.model).export(graph[1], from: graph)
        #expect(unlimited["mentor"]?["mentor"]?["mentor"]?["mentor"]?["id"] == "5")
        #expect(unlimited["mentor"]?["mentor"]?["mentor"]?["mentor"]?["mentor"] == .null)
    }

    @Test func R_Q4_anExportBeyondTheObjectLimitIs422() throws {
        let graph = try batmanGraph()
        // Batman, his two powers and DC: four objects.
        let exporter = { (maximum: Int) throws -> AnnotationExporter in
            try AnnotationExporter(model: graph.model, limits: .init(maximumObjects: maximum))
        }
        #expect(try exporter(4).export(graph[1699], from: graph)["name"] == "Batman")
        let error = #expect(throws: CartographError.self) { try exporter(3).export(graph[1699], from: graph) }
        #expect(error?.code == .unprocessable)
        #expect(error?.detail.contains("more than 3 objects") == true)
        // The limit counts a whole list together.
        #expect(throws: CartographError.self) { try exporter(7).export([graph[1699], graph[1699]], from: graph) }
        #expect(try exporter(8).export([graph[1699], graph[1699]], from: graph).count == 2)
    }

    @Test func R_Q4_subEntitiesExportTheirOwnAnnotations() throws {
        // Groot's Container / Abstract / ConcreteA / ConcreteB (container.json).
        let model = try parseModel(#"""
            {"entities": [
              {"name": "Abstract", "abstract": true,
               "attributes": [{"name": "identifier", "type": "integer64", "userInfo": {"JSONKeyPath": "id"}}],
               "relationships": [{"name": "container", "destination": "Container", "inverse": "abstracts"}],
               "userInfo": {"identityAttributes": "identifier"}},
              {"name": "ConcreteA", "parent": "Abstract", "attributes": [{"name": "foo", "type": "string", "userInfo": {"JSONKeyPath": "foo"}}]},
              {"name": "ConcreteB", "parent": "Abstract", "attributes": [{"name": "bar", "type": "string", "userInfo": {"JSONKeyPath": "bar"}}]},
              {"name": "Container", "relationships": [
                 {"name": "abstracts", "destination": "Abstract", "toMany": true, "inverse": "container", "userInfo": {"JSONKeyPath": "abstracts"}}]}
            ]}
            """#)
        let graph = MemoryGraph(model)
        try graph.add(1, "ConcreteA", ["identifier": 1, "foo": "this is A"])
        try graph.add(2, "ConcreteB", ["identifier": 2, "bar": "this is B"])
        try graph.add(3, "Container")
        try graph.link(3, "abstracts", [1, 2])
        expectJSON(try AnnotationExporter(model: model).export(graph[3], from: graph),
                   #"{"abstracts": [{"id": 1, "foo": "this is A"}, {"id": 2, "bar": "this is B"}]}"#)
    }

    @Test func R_Q4_unannotatedRelationshipsAreNotRead() throws {
        let graph = MemoryGraph(try parseModel(#"""
            {"entities": [{"name": "A", "attributes": [{"name": "name", "type": "string", "userInfo": {"JSONKeyPath": "name"}}],
                           "relationships": [{"name": "others", "destination": "A", "toMany": true}]}]}
            """#))
        try graph.add(1, "A", ["name": "one"])
        try graph.link(1, "others", [1])
        #expect(try AnnotationExporter(model: graph.model).export(graph[1], from: graph) == ["name": "one"])
        #expect(graph.reads == 0)
    }
}
