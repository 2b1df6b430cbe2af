// R-Q4 `shape=json`: an object exported through its model annotations, as Groot's
// `JSONDictionaryFromObject` serializes a managed object back to JSON (docs/mapping.md#export-shapejson-r-q4).
//
// - Each attribute or relationship with a `JSONKeyPath` is written at that key path; a dotted path
//   creates nested objects (`publisher.name` -> `{"publisher": {"name": …}}`). Without one a
//   property is not exported, unless the model option `mapUnannotatedByName` is on (then by its
//   own name). Key paths that cannot be written (empty keys; `@parent.`, `@root.`, `@metadata.`,
//   which only read) leave the property out.
// - An attribute goes through the reverse of its `JSONTransformerName`. A nil value is JSON null
//   (Groot writes NSNull). A value the reverse transform refuses is left out, as Groot leaves out a
//   reverse transform's nil. A transformer the model neither declares nor has built in is a 422, as
//   a payload that needs it is (docs/mapping.md#export-shapejson-r-q4). Without a transformer a value is written as
//   `shape=model` writes it (ISO 8601 dates, decimals as strings, base64).
// - A relationship nests its destinations as objects exported the same way (to-one: an object or
//   null; to-many: an array), skipping a relationship whose inverse is being serialized, as Groot
//   does. Groot keeps the relationships it has serialized in one set for the whole export and never
//   removes them, so which inverses it skips depends on the (hash) order it visits properties in;
//   here "being serialized" means "on the path from the exported object", which is the same on
//   Groot's own cases and does not depend on property order.
// - Groot recurses without bound, so a cycle that is not an inverse pair (`friends` without an
//   inverse, or a ring through three entities) never ends there. Here an object already on the path,
//   and any object deeper than `Limits.maximumDepth`, is written as a reference instead: an object
//   holding only its exported identification attributes — what a mapping needs to find it again.
//   `Limits.maximumObjects` bounds one export (a graph can nest the same objects along many paths).
public import CartographCore

/// Exports objects of one model through its annotations. Cheap to build; holds no state between exports.
public struct AnnotationExporter: Sendable {
    /// Bounds on one export.
    public struct Limits: Sendable, Equatable {
        /// How many relationship levels below an exported object are nested; deeper objects are references.
        public var maximumDepth: Int
        /// How many objects (exported objects, nested objects and references) one export may write.
        public var maximumObjects: Int

        /// 32 levels (a re-import stays far below the 512 levels of JSON nesting a payload may have)
        /// and 100,000 objects.
        public init(maximumDepth: Int = 32, maximumObjects: Int = 100_000) {
            self.maximumDepth = maximumDepth
            self.maximumObjects = maximumObjects
        }
    }

    public let model: Model
    public let limits: Limits
    private let transformers: ValueTransformerRegistry

    /// An exporter for `model`.
    ///
    /// - Throws: 422 when the model's declared value transformers are malformed (a registered model's never are).
    public init(model: Model, limits: Limits = Limits()) throws(CartographError) {
        self.model = model
        self.limits = limits
        self.transformers = try ValueTransformerRegistry(model: model)
    }

    /// `object` as JSON: a JSON object.
    public func export(_ object: ExistingObject, from graph: some ExportGraph) throws(CartographError) -> JSONValue {
        var walk = Walk()
        return try document(of: object, depth: 0, graph: graph, walk: &walk)
    }

    /// Each of `objects` as JSON, in order; `Limits.maximumObjects` counts them all together.
    public func export(_ objects: [ExistingObject], from graph: some ExportGraph) throws(CartographError) -> [JSONValue] {
        var walk = Walk()
        var documents: [JSONValue] = []
        documents.reserveCapacity(objects.count)
        for object in objects { documents.append(try document(of: object, depth: 0, graph: graph, walk: &walk)) }
        return documents
    }

    // MARK: Walking the graph

    /// The state of one export: what is on the path from the exported object, how much was written,
    /// and what to write for each entity met so far (an export meets few of a model's entities).
    private struct Walk {
        var plans: [String: EntityPlan] = [:]
        var written = 0
        var objectsOnPath: Set<Int64> = []
        /// Relationship ids on the path, with how often each occurs (`friends` of `friends`).
        var relationshipsOnPath: [String: Int] = [:]
    }

    /// What to write for objects of `entity` (its own and inherited properties).
    private func plan(of entity: String, _ walk: inout Walk) -> EntityPlan {
        if let plan = walk.plans[entity] { return plan }
        let plan = EntityPlan(entity: entity, model: model, registry: transformers)
        walk.plans[entity] = plan
        return plan
    }

    private func count(_ walk: inout Walk) throws(CartographError) {
        walk.written += 1
        guard walk.written <= limits.maximumObjects else {
            throw CartographError(.unprocessable, "The shape=json export would write more than \(limits.maximumObjects) objects "
                + "(related objects nest as the model's annotations say); ask for fewer objects with limit, or use shape=model.")
        }
    }

    private func document(of object: ExistingObject, depth: Int, graph: some ExportGraph, walk: inout Walk) throws(CartographError) -> JSONValue {
        try count(&walk)
        let plan = plan(of: object.entity, &walk)
        walk.objectsOnPath.insert(object.id)
        defer { walk.objectsOnPath.remove(object.id) }
        var document = JSONObject()
        for property in plan.properties {
            let value: JSONValue?
            switch property.kind {
            case .attribute(let name, let transformer):
                value = try attributeValue(object, name, transformer)
            case .relationship(let relationship, let id, let inverseID):
                value = try relationshipValue(object, relationship, id: id, inverseID: inverseID, depth: depth, graph: graph, walk: &walk)
            }
            if let value { Self.write(value, at: property.keyPath, into: &document) }
        }
        return .object(document)
    }

    /// The exported value of an attribute; nil leaves it out.
    private func attributeValue(_ object: ExistingObject, _ name: String, _ transformer: TransformerPlan?) throws(CartographError) -> JSONValue? {
        guard let value = object.values[name] else { return .null }  // nil passes through every transformer
        switch transformer {
        case nil:
            return Self.exportedValue(value, through: nil)
        case .resolved(let transformer)?:
            return Self.exportedValue(value, through: transformer)
        case .unknown(let transformer)?:
            throw CartographError(.unprocessable, "Cannot export '\(object.entity).\(name)' as JSON: its JSONTransformerName '\(transformer)' "
                + "is neither built in nor declared in the model's valueTransformers.")
        }
    }

    /// The exported value of a relationship; nil leaves it out (the inverse of one being serialized).
    private func relationshipValue(_ object: ExistingObject, _ relationship: Relationship, id: String, inverseID: String?, depth: Int,
                                   graph: some ExportGraph, walk: inout Walk) throws(CartographError) -> JSONValue? {
        let inverseOnPath = inverseID.map { walk.relationshipsOnPath[$0, default: 0] > 0 } ?? false
        // A to-many is never nil in Core Data (an empty set), so Groot skips it whatever it holds.
        if inverseOnPath, relationship.toMany { return nil }
        let destinations = try graph.destinations(of: object, relationship: relationship)
        // Groot writes a nil to-one as null before it looks at inverses.
        if !relationship.toMany, destinations.isEmpty { return .null }
        if inverseOnPath { return nil }
        walk.relationshipsOnPath[id, default: 0] += 1
        defer { walk.relationshipsOnPath[id, default: 1] -= 1 }
        var nested: [JSONValue] = []
        nested.reserveCapacity(destinations.count)
        for destination in destinations {
            if depth >= limits.maximumDepth || walk.objectsOnPath.contains(destination.id) {
                nested.append(try reference(to: destination, walk: &walk))
            } else {
                nested.append(try document(of: destination, depth: depth + 1, graph: graph, walk: &walk))
            }
        }
        return relationship.toMany ? .array(nested) : nested[0]
    }

    /// An object written by its exported identification attributes only (a cycle, or too deep).
    private func reference(to object: ExistingObject, walk: inout Walk) throws(CartographError) -> JSONValue {
        try count(&walk)
        var document = JSONObject()
        for property in plan(of: object.entity, &walk).identity {
            guard case .attribute(let name, let transformer) = property.kind else { continue }
            if let value = try attributeValue(object, name, transformer) { Self.write(value, at: property.keyPath, into: &document) }
        }
        return .object(document)
    }

    /// A stored value as exported: through the reverse of `transformer` when given, a value it refuses
    /// is nil (left out), as Groot leaves out a reverse transform's nil.
    static func exportedValue(_ value: AttributeValue, through transformer: JSONValueTransformer?) -> JSONValue? {
        guard let transformer else { return value.jsonValue }
        return try? transformer.reverseTransform(value.jsonValue)
    }

    /// Whether the annotations export anything of `entity` or its sub-entities: without a `JSONKeyPath`
    /// (or `mapUnannotatedByName`) every object would export as `{}`.
    public func describes(_ entity: String) -> Bool {
        model.entityAndSubentities(of: entity).contains { !EntityPlan(entity: $0, model: model, registry: transformers).properties.isEmpty }
    }

    /// Writes `value` at a key path, creating objects for its leading keys (replacing a value that is
    /// not an object); an object written where an object already is merges into it, its members winning.
    static func write(_ value: JSONValue, at path: some Collection<String>, into document: inout JSONObject) {
        guard let key = path.first else { return }
        let rest = path.dropFirst()
        if rest.isEmpty {
            if case .object(let members) = value, case .object(var existing)? = document[key] {
                for (member, memberValue) in members { write(memberValue, at: CollectionOfOne(member), into: &existing) }
                document[key] = .object(existing)
            } else {
                document[key] = value
            }
            return
        }
        var child = document[key]?.objectValue ?? JSONObject()
        write(value, at: rest, into: &child)
        document[key] = .object(child)
    }
}

// MARK: - Plans

/// A value transformer named by an annotation.
private enum TransformerPlan: Sendable {
    case resolved(JSONValueTransformer)
    /// Neither built in nor declared (the model registered with a warning).
    case unknown(String)
}

/// One exported property.
private struct PropertyPlan: Sendable {
    enum Kind: Sendable {
        case attribute(name: String, transformer: TransformerPlan?)
        /// `id` and `inverseID` name relationships as `DeclaringEntity.name`.
        case relationship(Relationship, id: String, inverseID: String?)
    }

    let keyPath: [String]
    let kind: Kind
}

/// What an export writes for objects of one entity.
private struct EntityPlan: Sendable {
    /// Attributes, then relationships, inherited ones first.
    let properties: [PropertyPlan]
    /// The exported identification attributes: what a reference holds.
    let identity: [PropertyPlan]

    init(entity: String, model: Model, registry: ValueTransformerRegistry) {
        let byName = model.options.mapUnannotatedByName
        var properties: [PropertyPlan] = []
        for attribute in model.allAttributes(of: entity) {
            guard let keyPath = Self.keyPath(attribute.userInfo, name: attribute.name, byName: byName) else { continue }
            let transformer = attribute.userInfo["JSONTransformerName"]?.stringValue.map { (name) -> TransformerPlan in
                (try? registry.transformer(named: name)).map(TransformerPlan.resolved) ?? .unknown(name)
            }
            properties.append(PropertyPlan(keyPath: keyPath, kind: .attribute(name: attribute.name, transformer: transformer)))
        }
        for relationship in model.allRelationships(of: entity) {
            guard let keyPath = Self.keyPath(relationship.userInfo, name: relationship.name, byName: byName) else { continue }
            let declaring = model.declaringEntity(ofRelationship: relationship.name, from: entity) ?? entity
            let inverseID = relationship.inverse.map { inverse in
                "\(model.declaringEntity(ofRelationship: inverse, from: relationship.destination) ?? relationship.destination).\(inverse)"
            }
            properties.append(PropertyPlan(keyPath: keyPath, kind: .relationship(relationship, id: "\(declaring).\(relationship.name)", inverseID: inverseID)))
        }
        let identification = Set(model.identificationAttributes(of: entity))
        self.properties = properties
        self.identity = properties.filter {
            if case .attribute(let name, _) = $0.kind { identification.contains(name) } else { false }
        }
    }

    /// The keys a property is written at: its `JSONKeyPath`, else its name when `byName`; nil when
    /// it is not exported.
    static func keyPath(_ userInfo: JSONObject, name: String, byName: Bool) -> [String]? {
        guard let annotation = userInfo["JSONKeyPath"], !annotation.isNull else { return byName ? [name] : nil }
        guard let text = annotation.stringValue, let parsed = try? SourceKeyPath(parsing: text), parsed.root == .representation else {
            return nil
        }
        return parsed.components
    }
}
