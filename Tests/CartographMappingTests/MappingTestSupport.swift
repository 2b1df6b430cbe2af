// Shared fixtures for the mapping tests: a model that makes docs/mapping.md's example mapping valid, the
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

    /// docs/mapping.md's example mapping document, verbatim.
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

// MARK: - Export (AnnotationExporterTests, MappingExporterTests)

/// Objects and relationships in memory; `link` sets both sides of an inverse pair.
final class MemoryGraph: ExportGraph {
    let model: Model
    private var objects: [Int64: ExistingObject] = [:]
    private var links: [Int64: [String: [Int64]]] = [:]
    /// How many times the exporter asked for destinations.
    private(set) var reads = 0

    init(_ model: Model) { self.model = model }

    /// Adds an object whose values are given in their JSON form.
    @discardableResult
    func add(_ id: Int64, _ entity: String, _ values: [String: JSONValue] = [:]) throws -> ExistingObject {
        var typed: [String: AttributeValue] = [:]
        for (name, value) in values {
            let attribute = try #require(model.attribute(name, of: entity), "\(entity) has no attribute \(name)")
            typed[name] = try AttributeValue.coerce(value, to: attribute.type)
        }
        let object = ExistingObject(id: id, entity: entity, isStub: false, values: typed)
        objects[id] = object
        return object
    }

    subscript(id: Int64) -> ExistingObject { objects[id]! }

    /// `source.relationship = destinations`, and each destination's inverse gains `source`.
    func link(_ source: Int64, _ relationship: String, _ destinations: [Int64]) throws {
        links[source, default: [:]][relationship] = destinations
        let entity = try #require(objects[source]?.entity)
        guard let forward = model.relationship(relationship, of: entity), let inverse = forward.inverse,
              let inverseToMany = model.relationship(inverse, of: forward.destination)?.toMany else { return }
        for destination in destinations {
            let current = links[destination]?[inverse] ?? []
            links[destination, default: [:]][inverse] = inverseToMany ? (current.contains(source) ? current : current + [source]) : [source]
        }
    }

    func destinations(of object: ExistingObject, relationship: Relationship) throws(CartographError) -> [ExistingObject] {
        reads += 1
        return (links[object.id]?[relationship.name] ?? []).compactMap { objects[$0] }
    }
}

/// The value with every object's members sorted by key: Groot's dictionaries have no order.
func sortedKeys(_ value: JSONValue) -> JSONValue {
    switch value {
    case .object(let object): .object(JSONObject(object.map { ($0.key, sortedKeys($0.value)) }.sorted { $0.0 < $1.0 }))
    case .array(let items): .array(items.map(sortedKeys))
    default: value
    }
}

/// Expects `actual` to equal the JSON text `expected`, member order aside.
func expectJSON(_ actual: JSONValue, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(sortedKeys(actual) == sortedKeys(json(expected, sourceLocation: sourceLocation)), "\(actual.jsonText)", sourceLocation: sourceLocation)
}
