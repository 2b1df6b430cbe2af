// What the predicate language needs to know about a model (R-M1–R-M3) and about objects. The
// model type in CartographCore and the mapping engine's object graph conform to these.
public import CartographCore

/// A model whose entities predicates are checked against.
public protocol PredicateModel {
    /// The entity called `name`, or nil when there is none.
    func predicateEntity(named name: String) -> (any PredicateEntity)?
}

/// An entity as the checker sees it. Inherited properties are found through `parentEntityName`,
/// so an entity may list only its own properties (listing inherited ones too is harmless).
public protocol PredicateEntity {
    var name: String { get }
    /// The parent entity (R-M3); nil for a root entity.
    var parentEntityName: String? { get }
    /// The type of the attribute `name` declared on this entity, nil when it declares none.
    func attributeType(named name: String) -> AttributeType?
    /// The relationship `name` declared on this entity, nil when it declares none.
    func relationship(named name: String) -> PredicateRelationship?
    /// The names of the attributes and relationships declared on this entity, for the "did you mean"
    /// of an unknown name; none by default.
    var propertyNames: [String] { get }
}

extension PredicateEntity {
    public var propertyNames: [String] { [] }
}

/// A relationship as the checker sees it.
public struct PredicateRelationship: Sendable, Equatable {
    /// The destination entity's name.
    public var destinationEntityName: String
    public var isToMany: Bool

    public init(destinationEntityName: String, isToMany: Bool) {
        self.destinationEntityName = destinationEntityName
        self.isToMany = isToMany
    }
}

/// An object the in-memory evaluator reads: attribute values and related objects by name.
///
/// Names are those of the model the predicate was checked against, so a conforming type only
/// ever sees names its entity (or a parent) declares. Objects of a graph have identity, so the
/// protocol is for classes (which also keeps the evaluator's generic code cheap across modules).
public protocol PredicateObject: AnyObject {
    /// The value of an attribute; nil when it is nil (or unset).
    func attributeValue(named name: String) -> AttributeValue?
    /// The destination of a to-one relationship; nil when there is none.
    func relatedObject(named name: String) -> Self?
    /// The destinations of a to-many relationship (empty when there are none).
    func relatedObjects(named name: String) -> [Self]
}
