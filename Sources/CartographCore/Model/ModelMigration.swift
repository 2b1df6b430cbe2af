// What re-registering a model changes (R-M6), lightweight-migration style: which changes keep every
// stored object valid (new entities, new optional or defaulted attributes, new relationships,
// loosened bounds, annotation edits) and which would lose or invalidate data (removals, type,
// parent, cardinality or destination changes, required without a default, tightened bounds).
// The store applies it; this only computes it. Entities and properties are matched by name, so a
// rename is a removal plus an addition.

/// The changes from a registered model to its replacement.
public struct ModelMigration: Sendable, Equatable {
    /// One change, located in the new model's document.
    public struct Change: Sendable, Equatable, CustomStringConvertible {
        /// What changed.
        public enum Kind: String, Sendable, Hashable {
            /// An entity appeared, disappeared, moved in the hierarchy or became (non-)abstract.
            case entityAdded, entityRemoved, parentChanged, abstractChanged
            /// An attribute appeared, disappeared, or changed its type or default.
            case attributeAdded, attributeRemoved, typeChanged, defaultChanged
            /// A relationship appeared, disappeared, or changed destination, to-one/to-many or ordering.
            case relationshipAdded, relationshipRemoved, destinationChanged, cardinalityChanged, orderingChanged
            /// A relationship's inverse or delete rule (no stored data changes).
            case inverseChanged, deleteRuleChanged
            /// `optional`, value, length, count or regex bounds of an attribute or relationship.
            case optionalityChanged, boundsLoosened, boundsTightened
            /// `userInfo` of an entity or property.
            case annotationsChanged
            /// An attribute's `indexed` or an entity's `fetchIndexes` (R-M7): indexes are built or dropped.
            case indexesChanged
            /// `options`, `valueTransformers`, `entityMappers` or `dictionaryTransformers`.
            case declarationsChanged
            /// Nothing above, yet the documents differ (the order of entities or properties, or the
            /// spelling of an equal bound such as `1.0` for `1`).
            case documentChanged
        }

        public var kind: Kind
        /// The entity concerned, if any.
        public var entity: String?
        /// The attribute or relationship concerned, if any.
        public var property: String?
        /// Where the change is in the new document; for a removal, the collection it was removed from.
        public var pointer: String
        /// What changes, and for a destructive change what would be lost, for a person.
        public var message: String
        /// True when applying the change would lose or invalidate stored data (409 unless allowed).
        public var isDestructive: Bool

        public var description: String { "\(pointer): \(message)" }
    }

    /// Every change, entities in the new model's order (removals after them).
    public let changes: [Change]

    /// True when the two models are the same (a re-PUT that keeps `version`).
    public var isEmpty: Bool { changes.isEmpty }

    /// True when some change would lose or invalidate stored data.
    public var hasDestructiveChanges: Bool { changes.contains(where: \.isDestructive) }

    /// The changes that lose or invalidate stored data.
    public var destructiveChanges: [Change] { changes.filter(\.isDestructive) }

    /// The changes that keep every stored object valid.
    public var additiveChanges: [Change] { changes.filter { !$0.isDestructive } }

    /// The migration from `old` to `new`; `name`, `version` and `warnings` are not compared.
    public init(from old: Model, to new: Model) {
        var differ = ModelDiffer(old: old, new: new)
        differ.compareModels()
        changes = differ.changes
    }
}

/// Builds the list of changes.
private struct ModelDiffer {
    typealias Change = ModelMigration.Change
    let old: Model
    let new: Model
    var changes: [Change] = []

    private mutating func record(
        _ kind: Change.Kind, _ entity: String?, _ property: String? = nil, at pointer: JSONPointer, destructive: Bool = false, _ message: String
    ) {
        changes.append(Change(kind: kind, entity: entity, property: property, pointer: pointer.description, message: message, isDestructive: destructive))
    }

    mutating func compareModels() {
        let entitiesPointer = JSONPointer.root.appending("entities")
        let oldEntities = Dictionary(old.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for (index, entity) in new.entities.enumerated() {
            let pointer = entitiesPointer.appending(index)
            if let previous = oldEntities[entity.name] {
                compareEntity(previous, entity, at: pointer)
            } else {
                record(.entityAdded, entity.name, at: pointer, "adds the entity \(entity.name)")
            }
        }
        let newNames = Set(new.entities.map(\.name))
        for entity in old.entities where !newNames.contains(entity.name) {
            record(.entityRemoved, entity.name, at: entitiesPointer, destructive: true, "removes the entity \(entity.name) and its stored objects")
        }

        if old.options != new.options {
            record(.declarationsChanged, nil, at: JSONPointer.root.appending("options"), "changes the options")
        }
        for (key, before, after) in [
            ("valueTransformers", old.valueTransformers, new.valueTransformers), ("entityMappers", old.entityMappers, new.entityMappers),
            ("dictionaryTransformers", old.dictionaryTransformers, new.dictionaryTransformers),
        ] where before != after {
            record(.declarationsChanged, nil, at: JSONPointer.root.appending(key), "changes \(key)")
        }

        var oldDocument = old
        (oldDocument.name, oldDocument.version, oldDocument.warnings) = (new.name, new.version, new.warnings)
        if changes.isEmpty, oldDocument != new {
            record(.documentChanged, nil, at: .root, "changes the order of entities or properties, or the spelling of an equal value")
        }
    }

    private mutating func compareEntity(_ old: Entity, _ new: Entity, at pointer: JSONPointer) {
        let name = new.name
        if old.parent != new.parent {
            record(.parentChanged, name, at: pointer.appending("parent"), destructive: true,
                   "changes the parent of \(name) from \(old.parent ?? "none") to \(new.parent ?? "none"); its stored objects would change hierarchy")
        }
        if old.abstract != new.abstract {
            record(.abstractChanged, name, at: pointer.appending("abstract"), destructive: new.abstract,
                   new.abstract ? "makes \(name) abstract; its stored objects would belong to an abstract entity" : "makes \(name) concrete")
        }
        if old.userInfo != new.userInfo {
            record(.annotationsChanged, name, at: pointer.appending("userInfo"), "changes the annotations of \(name)")
        }
        if old.fetchIndexes != new.fetchIndexes {
            record(.indexesChanged, name, at: pointer.appending("fetchIndexes"), "changes the fetch indexes of \(name)")
        }

        let attributesPointer = pointer.appending("attributes")
        let oldAttributes = Dictionary(old.attributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for (index, attribute) in new.attributes.enumerated() {
            let attributePointer = attributesPointer.appending(index)
            if let previous = oldAttributes[attribute.name] {
                compareAttribute(previous, attribute, of: name, at: attributePointer)
            } else if !attribute.optional, attribute.defaultValue == nil {
                record(.attributeAdded, name, attribute.name, at: attributePointer, destructive: true,
                       "adds the required attribute \(name).\(attribute.name) without a default; stored objects would have no value")
            } else {
                record(.attributeAdded, name, attribute.name, at: attributePointer, "adds the attribute \(name).\(attribute.name)")
            }
        }
        let newAttributeNames = Set(new.attributes.map(\.name))
        for attribute in old.attributes where !newAttributeNames.contains(attribute.name) {
            record(.attributeRemoved, name, attribute.name, at: attributesPointer, destructive: true,
                   "removes the attribute \(name).\(attribute.name) and its stored values")
        }

        let relationshipsPointer = pointer.appending("relationships")
        let oldRelationships = Dictionary(old.relationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for (index, relationship) in new.relationships.enumerated() {
            let relationshipPointer = relationshipsPointer.appending(index)
            if let previous = oldRelationships[relationship.name] {
                compareRelationship(previous, relationship, of: name, at: relationshipPointer)
            } else if !relationship.optional || (relationship.minCount ?? 0) > 0 {
                record(.relationshipAdded, name, relationship.name, at: relationshipPointer, destructive: true,
                       "adds the required relationship \(name).\(relationship.name); stored objects would have no destination")
            } else {
                record(.relationshipAdded, name, relationship.name, at: relationshipPointer, "adds the relationship \(name).\(relationship.name)")
            }
        }
        let newRelationshipNames = Set(new.relationships.map(\.name))
        for relationship in old.relationships where !newRelationshipNames.contains(relationship.name) {
            record(.relationshipRemoved, name, relationship.name, at: relationshipsPointer, destructive: true,
                   "removes the relationship \(name).\(relationship.name) and its stored links")
        }
    }

    private mutating func compareAttribute(_ old: Attribute, _ new: Attribute, of entity: String, at pointer: JSONPointer) {
        let label = "\(entity).\(new.name)"
        if old.optional != new.optional {
            let destructive = !new.optional && new.defaultValue == nil
            record(.optionalityChanged, entity, new.name, at: pointer.appending("optional"), destructive: destructive,
                   new.optional ? "makes \(label) optional"
                       : destructive ? "makes \(label) required without a default; stored objects without a value would be invalid"
                       : "makes \(label) required; stored objects without a value get the default")
        }
        if old.userInfo != new.userInfo {
            record(.annotationsChanged, entity, new.name, at: pointer.appending("userInfo"), "changes the annotations of \(label)")
        }
        if old.indexed != new.indexed {
            record(.indexesChanged, entity, new.name, at: pointer.appending("indexed"), new.indexed ? "indexes \(label)" : "drops the index on \(label)")
        }
        if old.searchable != new.searchable {
            record(.indexesChanged, entity, new.name, at: pointer.appending("searchable"),
                   new.searchable ? "indexes the words of \(label) for search" : "drops the full-text index of \(label)")
        }
        guard old.type == new.type else {
            // Defaults and bounds of different types do not compare; the type change says it all.
            record(.typeChanged, entity, new.name, at: pointer.appending("type"), destructive: true,
                   "changes the type of \(label) from \(old.type) to \(new.type); stored values would be lost")
            return
        }
        if old.defaultValue != new.defaultValue {
            record(.defaultChanged, entity, new.name, at: pointer.appending("default"), "changes the default of \(label)")
        }
        compareBound("minValue", of: entity, new.name, old.minValue, new.minValue, isLower: true, at: pointer) { a, b in
            guard let a = old.boundValue(a), let b = new.boundValue(b) else { return nil }
            return a.isOrdered(before: b)
        }
        compareBound("maxValue", of: entity, new.name, old.maxValue, new.maxValue, isLower: false, at: pointer) { a, b in
            guard let a = old.boundValue(a), let b = new.boundValue(b) else { return nil }
            return a.isOrdered(before: b)
        }
        compareBound("minLength", of: entity, new.name, old.minLength, new.minLength, isLower: true, at: pointer) { $0 < $1 }
        compareBound("maxLength", of: entity, new.name, old.maxLength, new.maxLength, isLower: false, at: pointer) { $0 < $1 }
        if old.regex != new.regex {
            // Any new pattern may reject stored values; only dropping it loosens.
            let loosened = new.regex == nil
            record(loosened ? .boundsLoosened : .boundsTightened, entity, new.name, at: pointer.appending("regex"), destructive: !loosened,
                   loosened ? "removes the regex of \(label)" : "changes the regex of \(label); stored values may no longer match")
        }
    }

    private mutating func compareRelationship(_ old: Relationship, _ new: Relationship, of entity: String, at pointer: JSONPointer) {
        let label = "\(entity).\(new.name)"
        if old.destination != new.destination {
            record(.destinationChanged, entity, new.name, at: pointer.appending("destination"), destructive: true,
                   "changes the destination of \(label) from \(old.destination) to \(new.destination); stored links would be lost")
        }
        if old.toMany != new.toMany {
            record(.cardinalityChanged, entity, new.name, at: pointer.appending("toMany"), destructive: true,
                   "changes \(label) from \(old.toMany ? "to-many" : "to-one") to \(new.toMany ? "to-many" : "to-one"); stored links would be lost")
        } else if old.ordered != new.ordered {
            record(.orderingChanged, entity, new.name, at: pointer.appending("ordered"), destructive: old.ordered,
                   old.ordered ? "makes \(label) unordered; the stored order would be lost" : "makes \(label) ordered")
        }
        if old.optional != new.optional {
            record(.optionalityChanged, entity, new.name, at: pointer.appending("optional"), destructive: !new.optional,
                   new.optional ? "makes \(label) optional" : "makes \(label) required; stored objects without a destination would be invalid")
        }
        compareBound("minCount", of: entity, new.name, old.minCount, new.minCount, isLower: true, at: pointer) { $0 < $1 }
        compareBound("maxCount", of: entity, new.name, old.maxCount, new.maxCount, isLower: false, at: pointer) { $0 < $1 }
        if old.inverse != new.inverse {
            record(.inverseChanged, entity, new.name, at: pointer.appending("inverse"), "changes the inverse of \(label)")
        }
        if old.deleteRule != new.deleteRule {
            record(.deleteRuleChanged, entity, new.name, at: pointer.appending("deleteRule"),
                   "changes the delete rule of \(label) from \(old.deleteRule.rawValue) to \(new.deleteRule.rawValue)")
        }
        if old.userInfo != new.userInfo {
            record(.annotationsChanged, entity, new.name, at: pointer.appending("userInfo"), "changes the annotations of \(label)")
        }
    }

    /// Records a changed bound: a lower bound that rises, an upper bound that falls, or a bound that
    /// appears tightens (destructive); the opposite loosens. `isOrdered` returns nil when the two
    /// values do not compare, which records nothing.
    private mutating func compareBound<Value>(
        _ key: String, of entity: String, _ property: String, _ old: Value?, _ new: Value?, isLower: Bool, at pointer: JSONPointer,
        by isOrdered: (Value, Value) -> Bool?
    ) {
        let tightened: Bool
        switch (old, new) {
        case (nil, nil): return
        case (nil, _?): tightened = true
        case (_?, nil): tightened = false
        case (let before?, let after?):
            if isOrdered(before, after) == true { tightened = isLower
            } else if isOrdered(after, before) == true { tightened = !isLower
            } else { return }
        }
        let text = { (value: Value?) -> String in
            switch value {
            case nil: "none"
            case let json as JSONValue: json.jsonText
            case let other?: "\(other)"
            }
        }
        record(tightened ? .boundsTightened : .boundsLoosened, entity, property, at: pointer.appending(key), destructive: tightened,
               "\(tightened ? "tightens" : "loosens") \(key) of \(entity).\(property) (\(text(old)) -> \(text(new)))"
                   + (tightened ? "; stored values may no longer be valid" : ""))
    }
}
