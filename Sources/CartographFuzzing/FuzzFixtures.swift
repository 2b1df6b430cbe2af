// The fixed world the mapping and predicate targets run in: a realistic model (projects with tasks,
// an address, users in organizations, a sub-entity for dynamic mappings, every attribute type, a
// declared value transformer and dictionary transformer), a storage layout for the SQL compiler,
// and a few objects for the evaluator. The model is docs/mapping.md's example model (the mapping tests'
// fixture) with one attribute of each remaining type.
public import CartographCore
public import CartographPredicate
import Foundation

/// The model, schema and objects that fuzzed mappings and predicates are checked against.
public enum FuzzFixtures {
    /// The model document, as a client would register it.
    public static let modelDocument = #"""
        {"entities": [
          {"name": "Project",
           "attributes": [
             {"name": "projectID", "type": "integer64"}, {"name": "name", "type": "string"},
             {"name": "userID", "type": "integer64"}, {"name": "publishedAt", "type": "date"},
             {"name": "updatedAt", "type": "date"}, {"name": "archived", "type": "boolean"},
             {"name": "shouldBeDeleted", "type": "boolean"}, {"name": "teamMemberIDs", "type": "transformable"},
             {"name": "payload", "type": "binary"}, {"name": "budget", "type": "decimal"},
             {"name": "score", "type": "double"}, {"name": "ratio", "type": "float"},
             {"name": "priority", "type": "integer16"}, {"name": "rank", "type": "integer32"},
             {"name": "uid", "type": "uuid"}, {"name": "link", "type": "uri"}],
           "relationships": [
             {"name": "tasks", "destination": "Task", "toMany": true, "inverse": "project"},
             {"name": "address", "destination": "Address"},
             {"name": "user", "destination": "User"},
             {"name": "teamMembers", "destination": "User", "toMany": true},
             {"name": "organization", "destination": "Organization"},
             {"name": "organizations", "destination": "Organization", "toMany": true}]},
          {"name": "TextMessage", "parent": "Project",
           "attributes": [{"name": "id", "type": "integer64"}, {"name": "text", "type": "string"}]},
          {"name": "Task", "attributes": [{"name": "id", "type": "integer64"}, {"name": "title", "type": "string"}],
           "relationships": [{"name": "project", "destination": "Project", "inverse": "tasks"}]},
          {"name": "UrgentTask", "parent": "Task", "attributes": [{"name": "deadline", "type": "date"}]},
          {"name": "Address", "attributes": [{"name": "street", "type": "string"}, {"name": "identifier", "type": "string"}]},
          {"name": "User", "attributes": [{"name": "userID", "type": "integer64"}, {"name": "active", "type": "boolean"}],
           "relationships": [{"name": "organization", "destination": "Organization"}, {"name": "memberships", "destination": "Organization", "toMany": true}],
           "userInfo": {"identityAttributes": "userID"}},
          {"name": "Organization", "attributes": [{"name": "id", "type": "integer64"}, {"name": "name", "type": "string"}],
           "relationships": [{"name": "urgentTasks", "destination": "UrgentTask", "toMany": true}]}
        ],
        "valueTransformers": {"GenderCode": {"type": "map", "map": {"M": "male", "F": "female"}}},
        "dictionaryTransformers": {"LegacyIds": [{"op": "copy", "from": "legacy_id", "to": "id"}]}}
        """#

    /// The model parsed from `modelDocument`.
    public static let model: Model = {
        do { return try ModelDocument.parse(jsonBytes: Array(modelDocument.utf8), name: "projects") } catch {
            fatalError("the fuzz fixture model does not parse: \(error)")
        }
    }()

    /// The entity fuzzed predicates test.
    public static let predicateEntity = "Project"

    /// Values for `$name`, `$ids`, `$when`, `$flag` and `$nothing` in fuzzed predicates.
    public static let variables: [String: JSONValue] = [
        "name": "Apollo", "ids": [1, 2, 3], "when": "2024-01-01T00:00:00Z", "flag": true, "nothing": nil,
    ]

    /// One table per inheritance hierarchy, a column per attribute named after it, `<name>_id` for
    /// to-one relationships and inverse foreign keys, a join table for other to-many relationships.
    public struct SQLSchema: PredicateSQLSchema, Sendable {
        let model: Model

        public func table(forEntity entity: String) -> PredicateSQLTable? {
            guard model.entity(named: entity) != nil else { return nil }
            return PredicateSQLTable(name: model.rootEntity(of: entity), idColumn: "_id", entityColumn: "_entity",
                                     entityNames: model.entityAndSubentities(of: entity))
        }

        public func column(forAttribute attribute: String, ofEntity entity: String) -> String? {
            model.attribute(attribute, of: entity) == nil ? nil : attribute
        }

        public func storage(forRelationship name: String, ofEntity entity: String) -> PredicateSQLRelationship? {
            guard let relationship = model.relationship(name, of: entity) else { return nil }
            if !relationship.toMany { return .foreignKey(column: "\(name)_id") }
            if let inverse = relationship.inverse, model.relationship(inverse, of: relationship.destination)?.toMany == false {
                return .destinationForeignKey(column: "\(inverse)_id")
            }
            return .joinTable(name: "\(entity) \(name)", sourceColumn: "source_id", destinationColumn: "destination_id")
        }
    }

    /// The storage layout of `model`.
    public static let sqlSchema = SQLSchema(model: model)

    /// An object for the evaluator.
    public final class Object: PredicateObject {
        /// The object's concrete entity.
        public let entity: String
        var attributes: [String: AttributeValue] = [:]
        var toOne: [String: Object] = [:]
        var toMany: [String: [Object]] = [:]

        init(_ entity: String, _ attributes: [String: AttributeValue] = [:]) {
            self.entity = entity
            self.attributes = attributes
        }

        public func attributeValue(named name: String) -> AttributeValue? { attributes[name] }
        public func relatedObject(named name: String) -> Object? { toOne[name] }
        public func relatedObjects(named name: String) -> [Object] { toMany[name] ?? [] }
    }

    /// Projects to evaluate fuzzed predicates on: one with every attribute and relationship set,
    /// one with nothing set, and a TextMessage (the sub-entity). Built per call: the graph is a
    /// handful of objects, and sharing mutable classes between threads is not worth a lock.
    public static func makeObjects() -> [Object] {
        let organization = Object("Organization", ["id": .integer(7), "name": .string("Café Émile")])
        let urgent = Object("UrgentTask", ["id": .integer(2), "title": .string("ship"), "deadline": .date(millisecondsSince1970: 1_704_067_200_000)])
        organization.toMany["urgentTasks"] = [urgent]
        let user = Object("User", ["userID": .integer(42), "active": .boolean(true)])
        user.toOne["organization"] = organization
        user.toMany["memberships"] = [organization]
        let full = Object("Project", [
            "projectID": .integer(1), "name": .string("Apollo"), "userID": .integer(42),
            "publishedAt": .date(millisecondsSince1970: 0), "updatedAt": .date(millisecondsSince1970: -86_400_000),
            "archived": .boolean(false), "shouldBeDeleted": .boolean(true), "teamMemberIDs": .json([1, 2]),
            "payload": .binary([0, 1, 255]), "budget": .decimal(12.5), "score": .double(-0.25), "ratio": .double(1e-3),
            "priority": .integer(-3), "rank": .integer(Int64(Int32.max)),
            "uid": .uuid("0f8fad5b-d9cb-469f-a165-70867728950e"), "link": .uri("https://example.com/a?b=1"),
        ])
        // The tasks' project is another object: a link back to `full` would be a retain cycle, and the
        // graph, built per input, would leak.
        let other = Object("Project", ["projectID": .integer(2), "name": .string("Gemini")])
        let task = Object("Task", ["id": .integer(1), "title": .string("plan")])
        task.toOne["project"] = other
        urgent.toOne["project"] = other
        full.toMany["tasks"] = [task, urgent]
        full.toOne["address"] = Object("Address", ["street": .string("Straße 1"), "identifier": .string("a-1")])
        full.toOne["user"] = user
        full.toMany["teamMembers"] = [user, Object("User", ["userID": .integer(43)])]
        full.toOne["organization"] = organization
        full.toMany["organizations"] = [organization]
        let empty = Object("Project")
        let message = Object("TextMessage", ["projectID": .integer(3), "id": .integer(3), "text": .string("")])
        return [full, empty, message]
    }
}
