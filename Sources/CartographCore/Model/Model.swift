// The normalized model (docs/model.md): what a model document or a Core Data `contents` file becomes
// once parsed and validated. Every default is explicit; annotations (`userInfo`) are kept verbatim.

/// What happens to a relationship's destinations when its source is deleted (R-M2, R-D2).
public enum DeleteRule: String, Sendable, Hashable, CaseIterable {
    case nullify, cascade, deny, noAction
}

/// An attribute of an entity (R-M1).
public struct Attribute: Sendable, Equatable {
    public var name: String
    public var type: AttributeType
    public var optional: Bool = true
    /// The default for new objects, as written in the document (coerced when used).
    public var defaultValue: JSONValue?
    /// Inclusive numeric (or date) bounds, as written in the document.
    public var minValue: JSONValue?
    public var maxValue: JSONValue?
    /// Inclusive length bounds for strings (and binary).
    public var minLength: Int?
    public var maxLength: Int?
    /// A whole-string regular expression the value must match.
    public var regex: String?
    /// The store keeps an index on the attribute (Core Data's `indexed="YES"`), for queries that filter
    /// or sort by it.
    public var indexed: Bool = false
    /// The store keeps a full-text index of the attribute (a string), for `search=` (R-Q6); Core Data
    /// models say it with the user-info key `searchable`.
    public var searchable: Bool = false
    public var userInfo: JSONObject = JSONObject()

    public init(name: String, type: AttributeType, optional: Bool = true, defaultValue: JSONValue? = nil,
                minValue: JSONValue? = nil, maxValue: JSONValue? = nil, minLength: Int? = nil, maxLength: Int? = nil,
                regex: String? = nil, indexed: Bool = false, searchable: Bool = false, userInfo: JSONObject = JSONObject()) {
        self.name = name
        self.type = type
        self.optional = optional
        self.defaultValue = defaultValue
        self.minValue = minValue
        self.maxValue = maxValue
        self.minLength = minLength
        self.maxLength = maxLength
        self.regex = regex
        self.indexed = indexed
        self.searchable = searchable
        self.userInfo = userInfo
    }
}

/// An index over several attributes of an entity, in order, each ascending or descending: Core Data's
/// `<fetchIndex>` (R-M7). The name is the document's; the store names its index by what it covers.
public struct FetchIndex: Sendable, Equatable {
    public struct Element: Sendable, Equatable {
        /// An attribute of the entity, declared on it or inherited.
        public var attribute: String
        public var descending: Bool

        public init(attribute: String, descending: Bool = false) {
            self.attribute = attribute
            self.descending = descending
        }
    }

    public var name: String
    public var elements: [Element]

    public init(name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}

/// A relationship of an entity (R-M2).
public struct Relationship: Sendable, Equatable {
    public var name: String
    public var destination: String
    public var toMany: Bool = false
    public var ordered: Bool = false
    public var optional: Bool = true
    public var minCount: Int?
    public var maxCount: Int?
    /// The inverse relationship's name on the destination; both sides name each other.
    public var inverse: String?
    public var deleteRule: DeleteRule = .nullify
    public var userInfo: JSONObject = JSONObject()

    public init(name: String, destination: String, toMany: Bool = false, ordered: Bool = false, optional: Bool = true,
                minCount: Int? = nil, maxCount: Int? = nil, inverse: String? = nil, deleteRule: DeleteRule = .nullify,
                userInfo: JSONObject = JSONObject()) {
        self.name = name
        self.destination = destination
        self.toMany = toMany
        self.ordered = ordered
        self.optional = optional
        self.minCount = minCount
        self.maxCount = maxCount
        self.inverse = inverse
        self.deleteRule = deleteRule
        self.userInfo = userInfo
    }
}

/// An entity: its own properties (inherited ones are reached through `parent`, R-M3).
public struct Entity: Sendable, Equatable {
    public var name: String
    public var parent: String?
    public var abstract: Bool = false
    public var attributes: [Attribute] = []
    public var relationships: [Relationship] = []
    /// Indexes over several attributes (R-M7), in document order.
    public var fetchIndexes: [FetchIndex] = []
    public var userInfo: JSONObject = JSONObject()

    public init(name: String, parent: String? = nil, abstract: Bool = false, attributes: [Attribute] = [],
                relationships: [Relationship] = [], fetchIndexes: [FetchIndex] = [], userInfo: JSONObject = JSONObject()) {
        self.name = name
        self.parent = parent
        self.abstract = abstract
        self.attributes = attributes
        self.relationships = relationships
        self.fetchIndexes = fetchIndexes
        self.userInfo = userInfo
    }
}

/// Model-wide switches (docs/model.md#options).
public struct ModelOptions: Sendable, Equatable {
    /// R-I1 inference of identification attributes from names.
    public var identificationInference: Bool = true
    /// R-P10: map properties without `JSONKeyPath` by their own name.
    public var mapUnannotatedByName: Bool = false

    public init(identificationInference: Bool = true, mapUnannotatedByName: Bool = false) {
        self.identificationInference = identificationInference
        self.mapUnannotatedByName = mapUnannotatedByName
    }
}

/// A validated model. Construct it through `ModelDocument` (JSON or Core Data XML), which checks
/// R-M5; the resolved lookups below assume a valid model.
public struct Model: Sendable, Equatable {
    /// The model's name (the `{model}` path segment).
    public var name: String
    /// Incremented on every change that alters the store or the document (R-M6).
    public var version: Int
    /// Entities in document order.
    public var entities: [Entity] { didSet { (entityIndex, childIndex) = (Self.index(entities), Self.children(entities)) } }
    /// Positions of entities by name: lookups run per mapped value, so they must not scan.
    private var entityIndex: [String: Int] = [:]
    /// Positions of the entities that name each entity as their parent.
    private var childIndex: [String: [Int]] = [:]
    public var options: ModelOptions
    /// Declarative sections kept verbatim for the mapping engine (docs/mapping.md).
    public var valueTransformers: JSONObject
    public var entityMappers: JSONObject
    public var dictionaryTransformers: JSONObject
    /// Non-fatal findings, e.g. annotations naming undeclared transformers (docs/model.md#validation).
    public var warnings: [String]

    public init(name: String, version: Int = 1, entities: [Entity], options: ModelOptions = ModelOptions(),
                valueTransformers: JSONObject = JSONObject(), entityMappers: JSONObject = JSONObject(),
                dictionaryTransformers: JSONObject = JSONObject(), warnings: [String] = []) {
        self.name = name
        self.version = version
        self.entities = entities
        self.entityIndex = Self.index(entities)
        self.childIndex = Self.children(entities)
        self.options = options
        self.valueTransformers = valueTransformers
        self.entityMappers = entityMappers
        self.dictionaryTransformers = dictionaryTransformers
        self.warnings = warnings
    }

    private static func index(_ entities: [Entity]) -> [String: Int] {
        var index: [String: Int] = [:]
        for (position, entity) in entities.enumerated() where index[entity.name] == nil { index[entity.name] = position }
        return index
    }

    private static func children(_ entities: [Entity]) -> [String: [Int]] {
        var children: [String: [Int]] = [:]
        for (position, entity) in entities.enumerated() { if let parent = entity.parent { children[parent, default: []].append(position) } }
        return children
    }

    public static func == (a: Model, b: Model) -> Bool {
        a.name == b.name && a.version == b.version && a.entities == b.entities && a.options == b.options
            && a.valueTransformers == b.valueTransformers && a.entityMappers == b.entityMappers
            && a.dictionaryTransformers == b.dictionaryTransformers && a.warnings == b.warnings
    }

    /// The entity called `name`.
    public func entity(named name: String) -> Entity? { entityIndex[name].map { entities[$0] } }

    /// Positions of `name` and its ancestors, nearest first (stops at a cycle, which validation reports).
    /// Linear in the depth: a 1,000-entity chain is walked once per entity by the normalized form.
    private func lineagePositions(of name: String) -> [Int] {
        var positions: [Int] = []
        var visited = Set<Int>()
        var next: String? = name
        while let current = next, let position = entityIndex[current], visited.insert(position).inserted {
            positions.append(position)
            next = entities[position].parent
        }
        return positions
    }

    /// `name` and its ancestors, nearest first.
    public func lineage(of name: String) -> [Entity] { lineagePositions(of: name).map { entities[$0] } }

    /// The root of `name`'s inheritance hierarchy (the entity whose table holds its objects).
    public func rootEntity(of name: String) -> String { lineagePositions(of: name).last.map { entities[$0].name } ?? name }

    /// `name` and every entity that inherits from it, in document order. Walks down from `name`
    /// (the store asks this for every entity, so it must not walk up from every entity).
    public func entityAndSubentities(of name: String) -> [String] {
        guard let start = entityIndex[name] else { return [] }
        var found: Set = [start]
        var pending = [start]
        while let position = pending.popLast() {
            for child in childIndex[entities[position].name] ?? [] where found.insert(child).inserted { pending.append(child) }
        }
        return found.sorted().map { entities[$0].name }
    }

    /// Every attribute of `name`, inherited ones first (R-M3).
    public func allAttributes(of name: String) -> [Attribute] { lineage(of: name).reversed().flatMap(\.attributes) }

    /// Every relationship of `name`, inherited ones first (R-M3).
    public func allRelationships(of name: String) -> [Relationship] { lineage(of: name).reversed().flatMap(\.relationships) }

    /// The attribute `attribute` of `entity`, declared on it or an ancestor.
    public func attribute(_ attribute: String, of entity: String) -> Attribute? {
        nearest(from: entity) { $0.attributes.first { $0.name == attribute } }
    }

    /// The relationship `relationship` of `entity`, declared on it or an ancestor.
    public func relationship(_ relationship: String, of entity: String) -> Relationship? {
        nearest(from: entity) { $0.relationships.first { $0.name == relationship } }
    }

    /// The first non-nil `find` walking from `entity` up its ancestors. No array is built: these
    /// lookups run for every value of every payload.
    private func nearest<T>(from entity: String, _ find: (Entity) -> T?) -> T? {
        var next: String? = entity
        var steps = 0  // a cycle (only in a model that failed validation) ends the walk
        while let current = next, let position = entityIndex[current], steps <= entities.count {
            if let found = find(entities[position]) { return found }
            next = entities[position].parent
            steps += 1
        }
        return nil
    }

    /// The entity that declares `relationship` among `entity`'s lineage.
    public func declaringEntity(ofRelationship relationship: String, from entity: String) -> String? {
        lineage(of: entity).first { $0.relationships.contains { $0.name == relationship } }?.name
    }
}
