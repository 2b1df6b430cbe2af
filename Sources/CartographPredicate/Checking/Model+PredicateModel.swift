// The normalized model as the predicate checker sees it.
public import CartographCore

extension Model: PredicateModel {
    public func predicateEntity(named name: String) -> (any PredicateEntity)? { entity(named: name) }
}

extension Entity: PredicateEntity {
    public var parentEntityName: String? { parent }

    public var propertyNames: [String] { attributes.map(\.name) + relationships.map(\.name) }

    public func attributeType(named name: String) -> AttributeType? { attributes.first { $0.name == name }?.type }

    public func relationship(named name: String) -> PredicateRelationship? {
        relationships.first { $0.name == name }.map { PredicateRelationship(destinationEntityName: $0.destination, isToMany: $0.toMany) }
    }
}
