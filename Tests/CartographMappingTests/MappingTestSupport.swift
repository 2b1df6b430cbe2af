// Shared fixtures for the mapping tests: a model that makes DESIGN §5's example mapping valid, the
// example itself, and one-line parsing of documents that should fail, as `pointer: message` pairs.
import CartographCore
import CartographMapping
import CartographFuzzing
import Testing

enum MappingFixtures {
    /// Projects with tasks, an address, a user (who belongs to an organization) and team members;
    /// TextMessage is a sub-entity of Project (for `dynamic`); Task's identity is annotated. The same
    /// model the mapping fuzzer checks documents against, so its corpus and these tests agree.
    static let modelDocument = FuzzFixtures.modelDocument
    static let model: Model = FuzzFixtures.model

    /// DESIGN §5's example mapping document, verbatim.
    static let designExample = #"""
        {
          "entity": "Project",
          "keyPath": "project",
          "attributes": { "id": "projectID", "name": "name", "userID": "userID",
                          "published_at": { "to": "publishedAt", "transformer": "ISO8601ToDate" } },
          "identificationAttributes": ["projectID"],
          "identificationPredicate": "archived == NO",
          "modificationAttribute": "updatedAt",
          "relationships": [
            { "from": "tasks", "to": "tasks", "assignmentPolicy": "replace", "mapping": { "entity": "Task", "attributes": ["id", "title"] } },
            { "from": null, "to": "address", "mapping": { "entity": "Address", "attributes": { "street": "street" } } }
          ],
          "connections": [
            { "relationship": "user", "connectedBy": "userID" },
            { "relationship": "teamMembers", "connectedBy": { "teamMemberIDs": "userID" }, "destinationPredicate": "active == YES" },
            { "relationship": "organization", "keyPath": "user.organization" }
          ],
          "deletionPredicate": "shouldBeDeleted == true",
          "discardsInvalidObjectsOnInsert": false,
          "dynamic": { "keyPath": "type", "map": { "text": { "entity": "TextMessage", "attributes": ["id", "text"] } } }
        }
        """#
}

/// Reads JSON text written in a test.
func json(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> JSONValue {
    do {
        return try JSONReader().parse(Array(text.utf8))
    } catch {
        Issue.record("test JSON does not parse: \(error)", sourceLocation: sourceLocation)
        return .null
    }
}

/// Parses a mapping document against `model` (the fixture model by default).
func parseMapping(_ text: String, model: Model = MappingFixtures.model) throws -> EntityMapping {
    try EntityMapping.parse(json(text), model: model)
}

/// A model document parsed for a test.
func parseModel(_ text: String) throws -> Model {
    try ModelDocument.parse(jsonBytes: Array(text.utf8), name: "test")
}

/// The error of a document that should be invalid; a test failure when it parses.
func mappingError(_ text: String, model: Model = MappingFixtures.model, sourceLocation: SourceLocation = #_sourceLocation) -> CartographError? {
    do {
        _ = try EntityMapping.parse(json(text, sourceLocation: sourceLocation), model: model)
        Issue.record("the mapping parsed, but should not have", sourceLocation: sourceLocation)
        return nil
    } catch {
        #expect(error.code == .unprocessable, sourceLocation: sourceLocation)
        return error
    }
}

/// The located problems of an invalid mapping, as `pointer: message` pairs for compact assertions.
func mappingProblems(_ text: String, model: Model = MappingFixtures.model, sourceLocation: SourceLocation = #_sourceLocation) -> [String: String] {
    pairs(mappingError(text, model: model, sourceLocation: sourceLocation))
}

/// An error's details as `pointer: message` pairs (messages at one pointer joined with ` | `).
func pairs(_ error: CartographError?) -> [String: String] {
    Dictionary((error?.errors ?? []).map { ($0.pointer, $0.message) }, uniquingKeysWith: { first, second in first + " | " + second })
}
