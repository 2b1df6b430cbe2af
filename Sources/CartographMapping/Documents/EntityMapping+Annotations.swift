// Annotation mappings (R-P10, Groot): a model's `userInfo` annotations compiled into the engine's
// mapping form. `JSONKeyPath` becomes a source key path, `JSONTransformerName` a value transformer,
// `JSONDictionaryTransformerName` the dictionary transformer, `entityMapperName` a dynamic mapping
// choosing sub-entities (R-P9); identification is the entity's (R-I1: `identityAttributes`, extended
// by sub-entities, and inference). Relationships map their destinations with the destination's own
// annotation mapping, referenced by entity rather than inlined, because models have cycles
// (Character.publisher -> Publisher.characters -> Character): the engine resolves a reference
// when a representation needs it.
public import CartographCore

extension EntityMapping {
    /// A reference to `entity`'s annotation mapping, resolved by the engine when used. It carries
    /// R-P8's `discardsInvalidObjectsOnInsert` of the mapping it is nested in (`?discardInvalid=true`
    /// on an entity's payload route covers every object of the payload).
    public static func annotationReference(to entity: String, discardsInvalidObjectsOnInsert: Bool = false) -> EntityMapping {
        var mapping = EntityMapping(entity: entity, discardsInvalidObjectsOnInsert: discardsInvalidObjectsOnInsert)
        mapping.isAnnotationReference = true
        return mapping
    }

    /// The mapping that applies in `model`: an annotation reference becomes the entity's annotation mapping (R-P10).
    public func resolved(in model: Model) -> EntityMapping {
        isAnnotationReference
            ? Self.annotationMapping(of: entity, model: model, discardsInvalidObjectsOnInsert: discardsInvalidObjectsOnInsert) : self
    }

    /// A reference to the registered mapping `name`, whose entity is `entity`.
    public static func namedReference(_ name: String, entity: String) -> EntityMapping {
        var mapping = EntityMapping(entity: entity)
        mapping.reference = name
        return mapping
    }

    /// The names of the registered mappings this mapping refers to (`{"ref": …}`) in its relationships
    /// and dynamic cases, at any depth, without following the references.
    public var referencedNames: Set<String> {
        if let reference { return [reference] }
        let nested = relationships.map(\.mapping) + (dynamic?.cases.map(\.mapping) ?? [])
        return nested.reduce(into: Set<String>()) { $0.formUnion($1.referencedNames) }
    }

    /// R-P7's read-ahead (top-level objects found current before they are read): the identification and
    /// modification attributes it reads, when the mapping (resolved) allows it — a `modificationAttribute`
    /// and identification attributes, no `dynamic` or dictionary transformer, which decide per
    /// representation what it maps. Nil otherwise.
    public var readAheadAttributes: (identity: [String], modification: String)? {
        guard let modification = modificationAttribute, !resolvedIdentificationAttributes.isEmpty,
              dynamic == nil, dictionaryTransformer == nil else { return nil }
        return (resolvedIdentificationAttributes, modification)
    }

    /// The annotation mapping of `entity` (which must exist in `model`). Annotations naming
    /// transformers or mappers the model does not declare are kept: the model registered with a
    /// warning for each, and a payload that needs one fails with 422 naming it (docs/mapping.md#annotation-mappings-r-p10).
    /// `discardsInvalidObjectsOnInsert` (R-P8) applies to it and to every annotation mapping it nests.
    public static func annotationMapping(of entity: String, model: Model, discardsInvalidObjectsOnInsert: Bool = false) -> EntityMapping {
        let byName = model.options.mapUnannotatedByName
        func source(_ userInfo: JSONObject, name: String) -> SourceKeyPath? {
            guard let text = userInfo["JSONKeyPath"]?.stringValue else { return byName ? SourceKeyPath(components: [name]) : nil }
            return try? SourceKeyPath(parsing: text)
        }
        let discards = discardsInvalidObjectsOnInsert
        var mapping = EntityMapping(entity: entity, resolvedIdentificationAttributes: model.identificationAttributes(of: entity),
                                    discardsInvalidObjectsOnInsert: discards)
        mapping.attributes = model.allAttributes(of: entity).compactMap { attribute in
            source(attribute.userInfo, name: attribute.name).map {
                AttributeMapping(source: $0, attribute: attribute.name, transformer: attribute.userInfo["JSONTransformerName"]?.stringValue)
            }
        }
        mapping.relationships = model.allRelationships(of: entity).compactMap { relationship in
            source(relationship.userInfo, name: relationship.name).map {
                RelationshipMapping(source: $0, relationship: relationship.name, mapping: .annotationReference(to: relationship.destination, discardsInvalidObjectsOnInsert: discards))
            }
        }
        // The nearest entity's annotation applies (userInfo is per entity in Core Data; a sub-entity may override).
        let entityInfo = model.lineage(of: entity).map(\.userInfo)
        mapping.dictionaryTransformer = entityInfo.lazy.compactMap { $0["JSONDictionaryTransformerName"]?.stringValue }.first
        if let mapperName = model.entity(named: entity)?.userInfo["entityMapperName"]?.stringValue,
           case .object(let mapper)? = model.entityMappers[mapperName],
           let keyPathText = mapper["keyPath"]?.stringValue, let keyPath = try? SourceKeyPath(parsing: keyPathText),
           case .object(let cases)? = mapper["map"] {
            mapping.dynamic = DynamicMapping(keyPath: keyPath, cases: cases.compactMap { value, target in
                target.stringValue.map { DynamicMapping.Case(value: value, mapping: .annotationReference(to: $0, discardsInvalidObjectsOnInsert: discards)) }
            })
        }
        return mapping
    }
}
