// R-Q4 `shape=json&mapping=<name>`: objects exported through a mapping's inverse, as RestKit's
// `inverseMapping` serializes an object with the mapping that read it (docs/mapping.md#export-through-a-mapping-shapejsonmappingname).
//
// - Each attribute is written at its source key path (a dotted path nests: `user.login` ->
//   `{"user": {"login": …}}`), through the reverse of its transformer; nil is `null`, a value the
//   reverse transform refuses is left out. Key paths that only read (`@parent.`, `@root.`,
//   `@metadata.`) are not written.
// - A relationship nests its destinations, each exported through the nested mapping (to-one: an
//   object or null; to-many: an array). A nested mapping that maps nothing but one identification
//   attribute renders the destination as that value (`"author": 7`), the form such a mapping reads
//   back by identity. A relationship mapped from the enclosing representation (`from: null`) merges
//   its destination into the object.
// - `dynamic` picks, per object, the case for the object's entity (else the mapping itself); an
//   annotation reference (`fromAnnotations`) exports through the object's own entity's annotation
//   mapping. Connections and the discriminator are not written: they are not read at a key path of
//   their own.
// - Mapping documents are trees, but annotation references may cycle: an object already on the path,
//   or deeper than `Limits.maximumDepth`, is written as a reference holding only its identification
//   attributes, and `Limits.maximumObjects` bounds one export — as `AnnotationExporter` does.
public import CartographCore

/// Exports objects of one model through mappings' inverses. Cheap to build; holds no state between exports.
public struct MappingExporter: Sendable {
    public typealias Limits = AnnotationExporter.Limits

    public let model: Model
    public let limits: Limits
    private let transformers: ValueTransformerRegistry
    /// The registered mappings `{"ref": …}` references reach, by name.
    private let namedMappings: [String: EntityMapping]

    /// An exporter for `model`.
    ///
    /// - Throws: 422 when the model's declared value transformers are malformed (a registered model's never are).
    public init(model: Model, limits: Limits = Limits(), namedMappings: [String: EntityMapping] = [:]) throws(CartographError) {
        self.model = model
        self.limits = limits
        self.namedMappings = namedMappings
        self.transformers = try ValueTransformerRegistry(model: model)
    }

    /// Each of `objects` as JSON through `mapping`'s inverse, in order; `Limits.maximumObjects` counts them all together.
    public func export(_ objects: [ExistingObject], through mapping: EntityMapping, from graph: some ExportGraph) throws(CartographError) -> [JSONValue] {
        var walk = Walk()
        var documents: [JSONValue] = []
        documents.reserveCapacity(objects.count)
        for object in objects { documents.append(try document(of: object, through: mapping, depth: 0, graph: graph, walk: &walk)) }
        return documents
    }

    // MARK: Walking the graph

    private struct Walk {
        var written = 0
        var objectsOnPath: Set<Int64> = []
        /// Annotation mappings compiled so far, by entity (R-P10).
        var annotationMappings: [String: EntityMapping] = [:]
    }

    private func count(_ walk: inout Walk) throws(CartographError) {
        walk.written += 1
        guard walk.written <= limits.maximumObjects else {
            throw CartographError(.unprocessable, "The shape=json export would write more than \(limits.maximumObjects) objects "
                + "(related objects nest as the mapping says); ask for fewer objects with limit, or use shape=model.")
        }
    }

    /// The mapping that writes `object`: an annotation reference becomes the object's own entity's
    /// annotation mapping, a reference by name the registered mapping, a dynamic mapping its case for
    /// the object's entity.
    private func applicable(_ mapping: EntityMapping, for object: ExistingObject, _ walk: inout Walk) -> EntityMapping {
        if let name = mapping.reference, let named = namedMappings[name] { return applicable(named, for: object, &walk) }
        if mapping.isAnnotationReference {
            if let compiled = walk.annotationMappings[object.entity] { return compiled }
            let compiled = EntityMapping.annotationMapping(of: object.entity, model: model)
            walk.annotationMappings[object.entity] = compiled
            return compiled
        }
        guard let chosen = mapping.dynamic?.cases.first(where: { $0.mapping.entity == object.entity })?.mapping else { return mapping }
        return applicable(chosen, for: object, &walk)
    }

    private func document(of object: ExistingObject, through base: EntityMapping, depth: Int, graph: some ExportGraph,
                          walk: inout Walk) throws(CartographError) -> JSONValue {
        try count(&walk)
        let mapping = applicable(base, for: object, &walk)
        walk.objectsOnPath.insert(object.id)
        defer { walk.objectsOnPath.remove(object.id) }
        var document = JSONObject()
        for attribute in mapping.attributes where attribute.source.root == .representation {
            if let value = try attributeValue(object, attribute) { AnnotationExporter.write(value, at: attribute.source.components, into: &document) }
        }
        for relationshipMapping in mapping.relationships {
            guard let relationship = model.relationship(relationshipMapping.relationship, of: object.entity) else { continue }
            let value = try relationshipValue(object, relationship, through: relationshipMapping.mapping, depth: depth, graph: graph, walk: &walk)
            switch relationshipMapping.source {
            case nil:
                // Read from the enclosing representation: the destination's members are this object's.
                if case .object(let members) = value {
                    for (key, member) in members { AnnotationExporter.write(member, at: CollectionOfOne(key), into: &document) }
                }
            case let source? where source.root == .representation:
                AnnotationExporter.write(value, at: source.components, into: &document)
            case _?:
                continue
            }
        }
        return .object(document)
    }

    private func attributeValue(_ object: ExistingObject, _ attribute: AttributeMapping) throws(CartographError) -> JSONValue? {
        guard let value = object.values[attribute.attribute] else { return .null }  // nil passes through every transformer
        guard let transformerName = attribute.transformer else { return AnnotationExporter.exportedValue(value, through: nil) }
        let transformer: JSONValueTransformer
        do { transformer = try transformers.transformer(named: transformerName) } catch {
            throw CartographError(.unprocessable, "Cannot export '\(object.entity).\(attribute.attribute)' as JSON: its transformer "
                + "'\(transformerName)' is neither built in nor declared in the model's valueTransformers.", underlying: error)
        }
        return AnnotationExporter.exportedValue(value, through: transformer)
    }

    private func relationshipValue(_ object: ExistingObject, _ relationship: Relationship, through mapping: EntityMapping, depth: Int,
                                   graph: some ExportGraph, walk: inout Walk) throws(CartographError) -> JSONValue {
        let destinations = try graph.destinations(of: object, relationship: relationship)
        var nested: [JSONValue] = []
        nested.reserveCapacity(destinations.count)
        for destination in destinations {
            let destinationMapping = applicable(mapping, for: destination, &walk)
            if let identity = Self.identityOnly(destinationMapping) {
                try count(&walk)
                nested.append(try attributeValue(destination, identity) ?? .null)
            } else if depth >= limits.maximumDepth || walk.objectsOnPath.contains(destination.id) {
                nested.append(try reference(to: destination, through: destinationMapping, walk: &walk))
            } else {
                nested.append(try document(of: destination, through: mapping, depth: depth + 1, graph: graph, walk: &walk))
            }
        }
        return relationship.toMany ? .array(nested) : nested.first ?? .null
    }

    /// The one attribute a mapping maps when it maps nothing but one identification attribute: its
    /// objects are written as that value.
    private static func identityOnly(_ mapping: EntityMapping) -> AttributeMapping? {
        guard mapping.relationships.isEmpty, mapping.attributes.count == 1, let only = mapping.attributes.first,
              only.source.root == .representation, mapping.resolvedIdentificationAttributes == [only.attribute] else { return nil }
        return only
    }

    /// An object written by its mapped identification attributes only (a cycle, or too deep).
    private func reference(to object: ExistingObject, through mapping: EntityMapping, walk: inout Walk) throws(CartographError) -> JSONValue {
        try count(&walk)
        var document = JSONObject()
        let identification = Set(mapping.resolvedIdentificationAttributes)
        for attribute in mapping.attributes where attribute.source.root == .representation && identification.contains(attribute.attribute) {
            if let value = try attributeValue(object, attribute) { AnnotationExporter.write(value, at: attribute.source.components, into: &document) }
        }
        return .object(document)
    }
}
