// The 404 for an entity a model does not have, naming the closest one and the model's entities.

extension Model {
    /// `No entity 'Artcle' in model 'm'; did you mean 'Article'? (entities: Article, Author)`.
    public func unknownEntity(_ name: String) -> CartographError {
        CartographError(.notFound, "No entity '\(name)' in model '\(self.name)'"
            + NameSuggestion.hint(for: name, among: entities.map(\.name), kind: "entities") + ".")
    }

    /// The names of `entity`'s attributes and relationships (inherited ones too), for an unknown-name hint.
    public func propertyNames(of entity: String) -> [String] {
        allAttributes(of: entity).map(\.name) + allRelationships(of: entity).map(\.name)
    }
}
