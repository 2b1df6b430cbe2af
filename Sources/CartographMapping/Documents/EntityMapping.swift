// A mapping document (docs/mapping.md) once parsed and validated against a model: RestKit's
// RKEntityMapping, RKRelationshipMapping, RKConnectionDescription and RKDynamicMapping as values.
// Names are resolved (entities, attributes, relationships, transformers) and predicates checked,
// so the mapping engine never meets a dangling reference. The shape is also what annotation
// mappings (R-P10) compile to: `JSONKeyPath` is a `SourceKeyPath`, `JSONTransformerName` a
// transformer name, `entityMapperName` a `DynamicMapping`, `JSONDictionaryTransformerName` a
// dictionary transformer name.
public import CartographCore
public import CartographPredicate

/// How one entity's objects are mapped from representations (RKEntityMapping).
public struct EntityMapping: Sendable, Equatable {
    /// The entity whose objects this mapping inserts and updates.
    public var entity: String
    /// Top-level mappings only: selects the representation(s) in the payload (R-P2); nil maps the payload itself.
    public var keyPath: SourceKeyPath?
    /// A dictionary transformer declared in the model that pre-processes each representation
    /// (Groot's `JSONDictionaryTransformerName`).
    public var dictionaryTransformer: String?
    /// Attribute mappings in document order; each attribute is mapped at most once (R-P1).
    public var attributes: [AttributeMapping]
    /// The document's `identificationAttributes`, nil when it names none (R-I1's first source).
    public var identificationAttributes: [String]?
    /// The document's `identificationInference`, nil when it leaves it to the enclosing mapping or the model.
    public var identificationInference: Bool?
    /// The attributes that identify this mapping's objects, resolved by R-I1: the mapping's list,
    /// else the entity's annotations, else inference unless disabled. Empty: every
    /// representation inserts (R-I4).
    public var resolvedIdentificationAttributes: [String]
    /// Filters identification candidates (R-I3), checked against `entity`.
    public var identificationPredicate: MappingPredicate?
    /// The attribute that tells whether a representation is newer than the stored object (R-P7).
    public var modificationAttribute: String?
    /// Reset attributes missing from a representation to their defaults on update (R-P4).
    public var assignsDefaultValueForMissingAttributes: Bool
    /// Nested representations mapped into relationships (R-P5, R-P6).
    public var relationships: [RelationshipMapping]
    /// Relationships connected after mapping (R-C1…R-C4).
    public var connections: [ConnectionDescription]
    /// Stored objects of `entity` (and sub-entities) matching it are deleted after mapping (R-D1).
    public var deletionPredicate: MappingPredicate?
    /// Drop invalid new objects instead of failing the payload (R-P8).
    public var discardsInvalidObjectsOnInsert: Bool
    /// What a representation that drifts from this mapping does to the payload (R-P17).
    public var contract: DriftContract = .evolve
    /// Top-level mappings only: the payload is a complete snapshot of the objects in scope (R-D5).
    public var deleteMissing: DeleteMissing?
    /// Top-level mappings only: the attribute whose greatest mapped value the store keeps as the
    /// mapping's incremental cursor (R-P16), per the values of the query parameters of its scope.
    public var cursor: MappingCursor?
    /// Top-level mappings only: keep every committed payload's body, and the objects it discarded, for
    /// this many days, to list and replay through the mapping as registered later (R-P18).
    public var archive: MappingArchive?
    /// Top-level mappings only: a top-level scalar is an identity value, found or stubbed (R-P5), rather
    /// than an invalid object. The entity payload route sets it: it takes an array of identity values.
    public var identityReferences = false
    /// Chooses another mapping per representation by a discriminator (R-P9); this mapping is the fallback.
    public var dynamic: DynamicMapping?
    /// Stands for `entity`'s annotation mapping (R-P10), which the engine compiles when it is used;
    /// every other member is unused. Written `{"entity": …, "fromAnnotations": true}` in documents.
    public var isAnnotationReference = false
    /// Stands for the registered mapping of this name (`{"ref": "organization"}`, RestKit's recursive
    /// mappings), resolved by the engine when a representation needs it, so a tree of any depth maps
    /// and mappings may refer to each other in cycles. `entity` is that mapping's entity; every other
    /// member is unused.
    public var reference: String?

    /// A mapping of `entity`; the caller resolves `resolvedIdentificationAttributes` (R-I1) and
    /// checks names against the model, as `parse(_:model:)` does.
    public init(
        entity: String, keyPath: SourceKeyPath? = nil, dictionaryTransformer: String? = nil, attributes: [AttributeMapping] = [],
        identificationAttributes: [String]? = nil, identificationInference: Bool? = nil, resolvedIdentificationAttributes: [String] = [],
        identificationPredicate: MappingPredicate? = nil, modificationAttribute: String? = nil,
        assignsDefaultValueForMissingAttributes: Bool = false, relationships: [RelationshipMapping] = [],
        connections: [ConnectionDescription] = [], deletionPredicate: MappingPredicate? = nil,
        discardsInvalidObjectsOnInsert: Bool = false, deleteMissing: DeleteMissing? = nil, dynamic: DynamicMapping? = nil
    ) {
        self.entity = entity
        self.keyPath = keyPath
        self.dictionaryTransformer = dictionaryTransformer
        self.attributes = attributes
        self.identificationAttributes = identificationAttributes
        self.identificationInference = identificationInference
        self.resolvedIdentificationAttributes = resolvedIdentificationAttributes
        self.identificationPredicate = identificationPredicate
        self.modificationAttribute = modificationAttribute
        self.assignsDefaultValueForMissingAttributes = assignsDefaultValueForMissingAttributes
        self.relationships = relationships
        self.connections = connections
        self.deletionPredicate = deletionPredicate
        self.discardsInvalidObjectsOnInsert = discardsInvalidObjectsOnInsert
        self.deleteMissing = deleteMissing
        self.dynamic = dynamic
    }
}

/// What a mapping does with a representation that drifts from it (R-P17): a key it does not read, or a
/// value of another JSON type than its attribute takes.
public enum DriftContract: String, Sendable, Hashable, CaseIterable {
    /// Map and store it, and report the drift in the answer (the default).
    case evolve
    /// Refuse the payload (422, nothing stored), naming each drift.
    case freeze
    /// Drop the objects that drift, listed in `discarded`, and map the others.
    case discardObject
}

/// One attribute mapped from a source key path, optionally through a value transformer (R-P1).
public struct AttributeMapping: Sendable, Hashable {
    /// Where the value is read.
    public var source: SourceKeyPath
    /// The destination attribute (declared on the entity or inherited).
    public var attribute: String
    /// A built-in value transformer or one declared in the model's `valueTransformers`.
    public var transformer: String?

    /// Maps the value at `source` to `attribute`, through `transformer` when given.
    public init(source: SourceKeyPath, attribute: String, transformer: String? = nil) {
        self.source = source
        self.attribute = attribute
        self.transformer = transformer
    }
}

/// How a relationship's new value combines with its existing one (R-P6).
public enum AssignmentPolicy: String, Sendable, Hashable, CaseIterable {
    /// The relationship becomes exactly the new value; old destinations stay, disconnected.
    case set
    /// As `set`, and old destinations no longer referenced are deleted.
    case replace
    /// The new value is added to the existing destinations (to-many only).
    case union
}

/// A nested representation mapped into a relationship (RKRelationshipMapping, R-P5).
public struct RelationshipMapping: Sendable, Equatable {
    /// Where the nested representation is read; nil maps the enclosing representation itself.
    public var source: SourceKeyPath?
    /// The relationship assigned (declared on the entity or inherited).
    public var relationship: String
    /// How the new value combines with the existing one (R-P6).
    public var assignmentPolicy: AssignmentPolicy
    /// The mapping of the nested representation; its entity is the relationship's destination or a sub-entity.
    public var mapping: EntityMapping {
        get { nested.mapping }
        set { nested = NestedMapping(newValue) }
    }
    /// Held boxed: relationship mappings are copied wherever a payload's objects are walked (each node
    /// keeps its assignments with theirs), and an `EntityMapping` held inline would retain every one of
    /// its parts on each copy. The box is immutable, so a copy shares it and a change replaces it.
    private var nested: NestedMapping

    /// Maps the representation at `source` (nil: the enclosing one) with `mapping` into `relationship`.
    public init(source: SourceKeyPath?, relationship: String, assignmentPolicy: AssignmentPolicy = .set, mapping: EntityMapping) {
        self.source = source
        self.relationship = relationship
        self.assignmentPolicy = assignmentPolicy
        nested = NestedMapping(mapping)
    }

    public static func == (left: RelationshipMapping, right: RelationshipMapping) -> Bool {
        left.source == right.source && left.relationship == right.relationship && left.assignmentPolicy == right.assignmentPolicy
            && (left.nested === right.nested || left.nested.mapping == right.nested.mapping)
    }

    /// See `nested`.
    private final class NestedMapping: Sendable {
        let mapping: EntityMapping
        init(_ mapping: EntityMapping) { self.mapping = mapping }
    }
}

/// A relationship connected after mapping, by foreign key or by key path (RKConnectionDescription).
public struct ConnectionDescription: Sendable, Equatable {
    /// Which source attribute matches which destination attribute (R-C2).
    public struct AttributePair: Sendable, Hashable {
        /// An attribute of the mapping's entity.
        public var source: String
        /// An attribute of the relationship's destination entity.
        public var destination: String

        /// A source attribute matched with a destination attribute.
        public init(source: String, destination: String) {
            self.source = source
            self.destination = destination
        }
    }

    /// How the destination objects are found.
    public enum Kind: Sendable, Equatable {
        /// Destinations whose attributes equal the source's, every pair (AND); a collection value
        /// matches any of its members (OR) (R-C2).
        case foreignKey([AttributePair])
        /// Relationships followed from the source object; the result is assigned (R-C4).
        case keyPath([String])
    }

    /// The relationship connected (declared on the mapping's entity or inherited).
    public var relationship: String
    /// Foreign keys or a key path.
    public var kind: Kind
    /// Whether the connection runs at all, evaluated on the source object (R-C3).
    public var sourcePredicate: MappingPredicate?
    /// Filters the candidates, checked against the destination entity (foreign keys only, R-C3).
    public var destinationPredicate: MappingPredicate?
    /// Whether candidates include the destination's sub-entities (foreign keys only, R-C3).
    public var includesSubentities: Bool

    /// A connection of `relationship`; foreign-key options are ignored for key-path connections.
    public init(relationship: String, kind: Kind, sourcePredicate: MappingPredicate? = nil,
                destinationPredicate: MappingPredicate? = nil, includesSubentities: Bool = true) {
        self.relationship = relationship
        self.kind = kind
        self.sourcePredicate = sourcePredicate
        self.destinationPredicate = destinationPredicate
        self.includesSubentities = includesSubentities
    }
}

/// A scoped snapshot (R-D5): stored objects in `scope` that the payload did not mention are deleted.
public struct DeleteMissing: Sendable, Equatable {
    /// Which stored objects of the entity the payload is the complete set of.
    public var scope: MappingPredicate
    /// More deletions than this fail the payload (409): the guard against truncated payloads.
    public var maxDeletes: Int

    /// A snapshot of the objects in `scope`, deleting at most `maxDeletes`.
    public init(scope: MappingPredicate, maxDeletes: Int) {
        self.scope = scope
        self.maxDeletes = maxDeletes
    }
}

/// Picks a mapping per representation by the value at `keyPath` (RKDynamicMapping, R-P9).
public struct DynamicMapping: Sendable, Equatable {
    /// One discriminator value and the mapping it selects.
    public struct Case: Sendable, Equatable {
        /// The discriminator value, as text.
        public var value: String
        /// A mapping of the base entity or one of its sub-entities.
        public var mapping: EntityMapping

        /// The case selecting `mapping` for `value`.
        public init(value: String, mapping: EntityMapping) {
            self.value = value
            self.mapping = mapping
        }
    }

    /// Where the discriminator is read.
    public var keyPath: SourceKeyPath
    /// The cases in document order, each value once.
    public var cases: [Case]

    /// Reads the discriminator at `keyPath` and chooses among `cases`.
    public init(keyPath: SourceKeyPath, cases: [Case]) {
        self.keyPath = keyPath
        self.cases = cases
    }

    /// The mapping a discriminator selects: strings match a case's value, numbers by their text,
    /// booleans as `true`/`false`. Nil for other values and unknown ones (the caller falls back
    /// to the base mapping).
    public func mapping(forDiscriminator discriminator: JSONValue) -> EntityMapping? {
        let text: String
        switch discriminator {
        case .string(let string): text = string
        case .number(let number): text = number.text
        case .bool(let flag): text = flag ? "true" : "false"
        default: return nil
        }
        return cases.first { $0.value == text }?.mapping
    }
}

/// A predicate of a mapping document as written, checked against the entity it tests.
public struct MappingPredicate: Sendable, Equatable {
    /// The predicate as written in the document.
    public let format: String
    /// The predicate resolved against the model, ready to evaluate or compile to SQL.
    public let checked: CheckedPredicate

    /// Parses and checks `format` against `entity` of `model`.
    public init(format: String, entity: String, model: Model) throws(PredicateError) {
        self.format = format
        self.checked = try CheckedPredicate(format: format, entity: entity, model: model)
    }

    /// Two predicates are the same when written the same for the same entity.
    public static func == (lhs: MappingPredicate, rhs: MappingPredicate) -> Bool {
        lhs.format == rhs.format && lhs.checked.entityName == rhs.checked.entityName
    }
}
