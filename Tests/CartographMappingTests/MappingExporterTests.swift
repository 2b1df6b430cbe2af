// R-Q4 `shape=json&mapping=<name>`: objects exported through a mapping's inverse (RestKit's
// `inverseMapping`), unit by unit: dotted source key paths nest back into objects, reverse
// transformers, nested mappings nest (to-many as arrays), identity-only mappings write the value,
// `from: null` merges, dynamic cases by entity, annotation references, and cycles as references.
import CartographCore
import CartographMapping
import Testing

/// GitHub-like events: an event has an actor (to-one), a repository (to-one), labels (to-many) and,
/// for pushes, a size; nothing is annotated.
private let eventsDocument = #"""
    {"entities": [
      {"name": "Event", "attributes": [{"name": "id", "type": "integer64"}, {"name": "createdAt", "type": "date"}],
       "relationships": [
         {"name": "actor", "destination": "Actor"},
         {"name": "repo", "destination": "Repo"},
         {"name": "labels", "destination": "Label", "toMany": true, "ordered": true}]},
      {"name": "PushEvent", "parent": "Event", "attributes": [{"name": "size", "type": "integer64"}]},
      {"name": "Actor", "attributes": [{"name": "id", "type": "integer64"}, {"name": "login", "type": "string"}],
       "relationships": [{"name": "events", "destination": "Event", "toMany": true}]},
      {"name": "Repo", "attributes": [{"name": "id", "type": "integer64"}, {"name": "name", "type": "string"}]},
      {"name": "Label", "attributes": [{"name": "id", "type": "integer64"}, {"name": "name", "type": "string"}]}
    ]}
    """#

/// Event 1 (a push of size 3 by octocat in repo 7 "hello", labels 20 and 21).
private func eventGraph() throws -> MemoryGraph {
    let graph = MemoryGraph(try parseModel(eventsDocument))
    try graph.add(1, "PushEvent", ["id": 1, "createdAt": "2024-05-01T10:00:00Z", "size": 3])
    try graph.add(10, "Actor", ["id": 10, "login": "octocat"])
    try graph.add(7, "Repo", ["id": 7, "name": "hello"])
    try graph.add(20, "Label", ["id": 20, "name": "bug"])
    try graph.add(21, "Label", ["id": 21, "name": "good first issue"])
    try graph.link(1, "actor", [10])
    try graph.link(1, "repo", [7])
    try graph.link(1, "labels", [20, 21])
    return graph
}

struct MappingExporterTests {
    @Test func R_Q4_attributesGoBackToTheirSourceKeyPathsAndNestedMappingsNest() throws {
        let graph = try eventGraph()
        let mapping = try parseMapping(#"""
            {"entity": "PushEvent", "attributes": {"id": "id", "created_at": {"to": "createdAt", "transformer": "UnixSecondsToDate"},
                                               "payload.size": "size"},
             "relationships": [
               {"from": "actor", "to": "actor", "mapping": {"entity": "Actor", "attributes": {"id": "id", "user.login": "login"}}},
               {"from": "repo_id", "to": "repo", "mapping": {"entity": "Repo", "attributes": ["id"]}},
               {"from": "labels", "to": "labels", "mapping": {"entity": "Label", "attributes": ["id", "name"]}}]}
            """#, model: graph.model)
        let exported = try MappingExporter(model: graph.model).export([graph[1]], through: mapping, from: graph)
        expectJSON(exported[0], #"""
            {"id": 1, "created_at": 1714557600, "payload": {"size": 3},
             "actor": {"id": 10, "user": {"login": "octocat"}},
             "repo_id": 7,
             "labels": [{"id": 20, "name": "bug"}, {"id": 21, "name": "good first issue"}]}
            """#)
    }

    @Test func R_Q4_missingDestinationsAndNilValuesAreNull() throws {
        let graph = MemoryGraph(try parseModel(eventsDocument))
        try graph.add(2, "Event", ["id": 2])
        let mapping = try parseMapping(#"""
            {"entity": "Event", "attributes": ["id", "createdAt"],
             "relationships": [{"to": "actor", "mapping": {"entity": "Actor", "attributes": ["id", "login"]}},
                               {"to": "labels", "mapping": {"entity": "Label", "attributes": ["id"]}}]}
            """#, model: graph.model)
        let exported = try MappingExporter(model: graph.model).export([graph[2]], through: mapping, from: graph)
        expectJSON(exported[0], #"{"id": 2, "createdAt": null, "actor": null, "labels": []}"#)
    }

    @Test func R_Q4_aRelationshipFromTheEnclosingRepresentationMergesIntoIt() throws {
        let graph = try eventGraph()
        let mapping = try parseMapping(#"""
            {"entity": "Event", "attributes": ["id"],
             "relationships": [{"from": null, "to": "repo", "mapping": {"entity": "Repo", "attributes": {"repo_name": "name", "repo_id": "id"}}}]}
            """#, model: graph.model)
        let exported = try MappingExporter(model: graph.model).export([graph[1]], through: mapping, from: graph)
        expectJSON(exported[0], #"{"id": 1, "repo_name": "hello", "repo_id": 7}"#)
    }

    @Test func R_Q4_R_P9_aDynamicMappingExportsEachObjectThroughTheCaseForItsEntity() throws {
        let graph = try eventGraph()
        try graph.add(3, "Event", ["id": 3])
        let mapping = try parseMapping(#"""
            {"entity": "Event", "attributes": ["id"],
             "dynamic": {"keyPath": "type", "map": {"PushEvent": {"entity": "PushEvent", "attributes": {"id": "id", "payload.size": "size"}}}}}
            """#, model: graph.model)
        let exported = try MappingExporter(model: graph.model).export([graph[1], graph[3]], through: mapping, from: graph)
        expectJSON(exported[0], #"{"id": 1, "payload": {"size": 3}}"#)
        expectJSON(exported[1], #"{"id": 3}"#)
    }

    @Test func R_Q4_aCycleThroughAnnotationReferencesEndsInAReference() throws {
        let model = try parseModel(#"""
            {"entities": [{"name": "Person", "userInfo": {"identityAttributes": "id"},
                           "attributes": [{"name": "id", "type": "integer64", "userInfo": {"JSONKeyPath": "id"}},
                                          {"name": "name", "type": "string", "userInfo": {"JSONKeyPath": "name"}}],
                           "relationships": [{"name": "friend", "destination": "Person", "userInfo": {"JSONKeyPath": "friend"}}]}]}
            """#)
        let graph = MemoryGraph(model)
        try graph.add(1, "Person", ["id": 1, "name": "Ann"])
        try graph.add(2, "Person", ["id": 2, "name": "Bob"])
        try graph.link(1, "friend", [2])
        try graph.link(2, "friend", [1])
        let mapping = try parseMapping(#"""
            {"entity": "Person", "attributes": {"id": "id", "full_name": "name"},
             "relationships": [{"from": "best_friend", "to": "friend", "mapping": {"entity": "Person", "fromAnnotations": true}}]}
            """#, model: model)
        let exported = try MappingExporter(model: model).export([graph[1]], through: mapping, from: graph)
        expectJSON(exported[0], #"{"id": 1, "full_name": "Ann", "best_friend": {"id": 2, "name": "Bob", "friend": {"id": 1}}}"#)
    }

    @Test func R_Q4_theObjectLimitCountsEveryWrittenObject() throws {
        let graph = try eventGraph()
        let mapping = try parseMapping(#"""
            {"entity": "Event", "attributes": ["id"], "relationships": [{"to": "labels", "mapping": {"entity": "Label", "attributes": ["id", "name"]}}]}
            """#, model: graph.model)
        let exporter = try MappingExporter(model: graph.model, limits: .init(maximumObjects: 2))
        #expect(throws: CartographError.self) { try exporter.export([graph[1]], through: mapping, from: graph) }
    }
}
