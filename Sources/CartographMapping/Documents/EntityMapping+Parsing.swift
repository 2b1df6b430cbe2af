// Reads a mapping document (docs/mapping.md) against a model, strictly and as a whole: every problem —
// unknown members, unknown entities, attributes, relationships and transformers (inherited ones
// count), attributes mapped twice, `union` on a to-one, nested mappings of the wrong entity,
// connections naming missing attributes, predicates that do not parse or fit — is reported with
// its JSON Pointer (and a predicate's offset) in one 422, so a user fixes them in one round.
public import CartographCore
import CartographPredicate

extension EntityMapping {
    /// The members a mapping document may have. `keyPath`, `deleteMissing`, `identityReferences` and `cursor` apply to top-level
    /// mappings only (a nested mapping's representations are chosen by its relationship or case).
    static let documentMembers = [
        "entity", "keyPath", "dictionaryTransformer", "attributes", "identificationAttributes", "identificationInference",
        "identificationPredicate", "modificationAttribute", "assignsDefaultValueForMissingAttributes", "relationships",
        "connections", "deletionPredicate", "discardsInvalidObjectsOnInsert", "deleteMissing", "identityReferences", "dynamic",
        "fromAnnotations", "cursor", "contract", "archive",
    ]
    static let topLevelOnlyMembers = ["keyPath", "deleteMissing", "identityReferences", "cursor", "archive"]

    /// Parses and validates a mapping document against `model`.
    ///
    /// - Parameters:
    ///   - name: the name the mapping is registered under, which `{"ref": …}` may name to refer to itself.
    ///   - entityOfMapping: the entity of another registered mapping, nil when none has that name.
    /// - Throws: 422 `.unprocessable` listing every problem with its JSON Pointer; predicate
    ///   problems carry the predicate's `offset`.
    public static func parse(_ json: JSONValue, model: Model, name: String? = nil,
                             entityOfMapping: @escaping (String) -> String? = { _ in nil }) throws(CartographError) -> EntityMapping {
        var reader = MappingDocumentReader(model: model, name: name, entityOfMapping: entityOfMapping)
        let mapping = reader.readMapping(json, at: .root, placement: .topLevel, inheritedInference: nil)
        try reader.checker.throwIfAny(summary: "The mapping document is invalid")
        return mapping
    }
}

extension EntityMapping {
    /// Parses a mapping document registered (or to be registered) as `name`, and every registered mapping
    /// its `{"ref": …}` references reach, transitively: what a payload or an export through it needs.
    /// - Parameter registered: the document of a registered mapping by name, nil when none has it.
    public static func parse(_ json: JSONValue, model: Model, name: String?, registered: @escaping (String) -> JSONValue?)
        throws(CartographError) -> (mapping: EntityMapping, named: [String: EntityMapping]) {
        let entityOfMapping = { (other: String) in registered(other)?["entity"]?.stringValue }
        let mapping = try parse(json, model: model, name: name, entityOfMapping: entityOfMapping)
        var named: [String: EntityMapping] = name.map { [$0: mapping] } ?? [:]
        var pending = Array(mapping.referencedNames)
        while let next = pending.popLast() {
            guard named[next] == nil else { continue }
            guard let document = registered(next) else {
                throw CartographError(.unprocessable, "The mapping refers to mapping '\(next)', which is not registered any more; register it again or change the reference.")
            }
            let parsed = try parse(document, model: model, name: next, entityOfMapping: entityOfMapping)
            named[next] = parsed
            pending += parsed.referencedNames
        }
        return (mapping, named)
    }
}

/// One pass over a mapping document. Reading goes on after a problem so that all are reported;
/// what is read after one is never returned to callers.
struct MappingDocumentReader {
    /// Where a mapping sits in its document, which decides its entity and allowed members.
    enum Placement {
        case topLevel
        /// The nested mapping of a relationship mapping; `destination` is nil when the relationship is unknown.
        case relationship(name: String, destination: String?)
        /// A case of `dynamic`; `base` is nil when the enclosing mapping's entity is unknown.
        case dynamicCase(base: String?)
    }

    let model: Model
    /// Value transformers a mapping may name: the built-in ones and the model's declared ones.
    let transformerNames: Set<String>
    var checker = DocumentChecker()
    /// The name the document is registered under, and its entity once read: `{"ref": name}` is the document itself.
    let name: String?
    private var topLevelEntity: String?
    let entityOfMapping: (String) -> String?

    init(model: Model, name: String? = nil, entityOfMapping: @escaping (String) -> String? = { _ in nil }) {
        self.model = model
        self.name = name
        self.entityOfMapping = entityOfMapping
        self.transformerNames = ValueTransformerRegistry.builtInNames.union(model.valueTransformers.keys)
    }

    // MARK: Mappings

    mutating func readMapping(_ value: JSONValue, at pointer: JSONPointer, placement: Placement, inheritedInference: Bool?) -> EntityMapping {
        guard case .object(let object) = value else {
            checker.report(pointer, "expected a mapping object, got \(described(value))")
            return EntityMapping(entity: "")
        }
        let isTopLevel = if case .topLevel = placement { true } else { false }
        if let target = object["ref"] { return readReference(target, in: object, at: pointer, placement: placement) }
        checker.checkMembers(of: object, allowed: EntityMapping.documentMembers, at: pointer)
        if !isTopLevel {
            for key in EntityMapping.topLevelOnlyMembers where object[key] != nil {
                checker.report(pointer.appending(key), "applies to top-level mappings only")
            }
        }

        let name = readEntity(object, at: pointer, placement: placement)
        if isTopLevel { topLevelEntity = name }
        // Entity-dependent checks run only against an entity that exists.
        let entity = name.flatMap { model.entity(named: $0) == nil ? nil : $0 }
        if let reference = object["fromAnnotations"] {
            // A nested mapping may stand for its entity's annotation mapping (R-P10), and then says nothing else.
            if isTopLevel {
                checker.report(pointer.appending("fromAnnotations"), "applies to nested mappings only; a payload is mapped by annotations with its entity's annotation mapping, not a mapping document")
            } else if reference != .bool(true) {
                checker.report(pointer.appending("fromAnnotations"), "expected true")
            } else if let extra = object.keys.first(where: { $0 != "entity" && $0 != "fromAnnotations" }) {
                checker.report(pointer.appending(extra), "a mapping taken from annotations has only entity and fromAnnotations")
            }
            return .annotationReference(to: name ?? "")
        }
        var mapping = EntityMapping(entity: name ?? "")
        if isTopLevel, let keyPath = checker.keyPath(object, "keyPath", at: pointer) {
            if keyPath.root == .representation {
                mapping.keyPath = keyPath
            } else {
                checker.report(pointer.appending("keyPath"), "selects representations in the payload; \(keyPath.root.rawValue) applies to source key paths only")
            }
        }
        if let transformer = checker.string(object, "dictionaryTransformer", at: pointer) {
            if model.dictionaryTransformers[transformer] == nil {
                checker.report(pointer.appending("dictionaryTransformer"), "no dictionary transformer named \(quoted(transformer)) is declared in the model's dictionaryTransformers")
            }
            mapping.dictionaryTransformer = transformer
        }
        mapping.attributes = readAttributes(object["attributes"], at: pointer.appending("attributes"), entity: entity)

        mapping.identificationInference = checker.bool(object, "identificationInference", at: pointer)
        let inference = mapping.identificationInference ?? inheritedInference
        mapping.identificationAttributes = readIdentificationAttributes(object, at: pointer, entity: entity, mapped: mapping.attributes)
        if let entity {
            mapping.resolvedIdentificationAttributes = mapping.identificationAttributes
                ?? model.identificationAttributes(of: entity, inference: inference)
        }
        mapping.identificationPredicate = predicate(object, "identificationPredicate", at: pointer, entity: entity)
        mapping.modificationAttribute = readModificationAttribute(object, at: pointer, entity: entity)
        mapping.assignsDefaultValueForMissingAttributes = checker.bool(object, "assignsDefaultValueForMissingAttributes", at: pointer) ?? false

        mapping.relationships = readRelationships(object, at: pointer, entity: entity, inheritedInference: inference)
        let connections = checker.member(object, "connections", at: pointer, expecting: "an array of connections") { $0.arrayValue } ?? []
        mapping.connections = connections.enumerated().compactMap { index, connection in
            readConnection(connection, at: pointer.appending("connections").appending(index), entity: entity)
        }
        mapping.deletionPredicate = predicate(object, "deletionPredicate", at: pointer, entity: entity)
        mapping.discardsInvalidObjectsOnInsert = checker.bool(object, "discardsInvalidObjectsOnInsert", at: pointer) ?? false
        if let contract = object["contract"], contract != .null {
            let names = DriftContract.allCases.map(\.rawValue)
            if let value = contract.stringValue.flatMap(DriftContract.init(rawValue:)) {
                mapping.contract = value
            } else {
                checker.report(pointer.appending("contract"), "expected one of \(names.map { quoted($0) }.joined(separator: ", "))")
            }
        }
        if isTopLevel, let snapshot = checker.member(object, "deleteMissing", at: pointer, expecting: "an object", { $0.objectValue }) {
            mapping.deleteMissing = readDeleteMissing(snapshot, at: pointer.appending("deleteMissing"), entity: entity)
        }
        if isTopLevel { mapping.identityReferences = checker.bool(object, "identityReferences", at: pointer) ?? false }
        if isTopLevel, let cursor = object["cursor"], cursor != .null {
            mapping.cursor = readCursor(cursor, at: pointer.appending("cursor"), mapping: mapping)
        }
        if isTopLevel, let archive = checker.member(object, "archive", at: pointer, expecting: "an object", { $0.objectValue }) {
            mapping.archive = readArchive(archive, at: pointer.appending("archive"))
        }
        if let dynamic = checker.member(object, "dynamic", at: pointer, expecting: "an object", { $0.objectValue }) {
            mapping.dynamic = readDynamic(dynamic, at: pointer.appending("dynamic"), entity: entity, inheritedInference: inference)
        }
        return mapping
    }

    /// The mapping's entity: required at the top level and in dynamic cases; in a relationship's
    /// mapping it defaults to the destination and may be a sub-entity of it.
    private mutating func readEntity(_ object: JSONObject, at pointer: JSONPointer, placement: Placement) -> String? {
        let entityPointer = pointer.appending("entity")
        if case .relationship(_, let destination) = placement, object["entity"] == nil || object["entity"] == .null {
            return destination
        }
        guard let name = checker.requiredString(object, "entity", at: pointer) else { return nil }
        guard model.entity(named: name) != nil else {
            checker.report(entityPointer, "no entity is named \(quoted(name))")
            return name
        }
        checkPlacement(of: name, at: entityPointer, placement: placement, what: name)
        return name
    }

    /// Reports an entity that cannot stand where the mapping is placed: a relationship's mapping maps its
    /// destination or a sub-entity, a dynamic case the enclosing mapping's entity or a sub-entity.
    private mutating func checkPlacement(of entity: String, at pointer: JSONPointer, placement: Placement, what: String) {
        switch placement {
        case .topLevel, .relationship(_, nil), .dynamicCase(nil):
            break
        case .relationship(let relationship, let destination?):
            if !model.entityAndSubentities(of: destination).contains(entity) {
                checker.report(pointer, "\(what) is not \(destination) (the destination of \(quoted(relationship))) or one of its sub-entities")
            }
        case .dynamicCase(let base?):
            if !model.entityAndSubentities(of: base).contains(entity) {
                checker.report(pointer, "\(what) is not \(base) (the entity of the enclosing mapping) or one of its sub-entities")
            }
        }
    }

    /// `{"ref": "organization"}` in a relationship or dynamic case: the registered mapping of that name
    /// (the document itself when it names its own), so a tree of any depth maps (RestKit's recursive mappings).
    private mutating func readReference(_ target: JSONValue, in object: JSONObject, at pointer: JSONPointer, placement: Placement) -> EntityMapping {
        let refPointer = pointer.appending("ref")
        if case .topLevel = placement {
            checker.report(refPointer, "applies inside a relationship's or a dynamic case's mapping only")
            return EntityMapping(entity: "")
        }
        if let extra = object.keys.first(where: { $0 != "ref" }) {
            checker.report(pointer.appending(extra), "a reference to a mapping has only ref")
        }
        guard let referenced = target.stringValue, !referenced.isEmpty else {
            checker.report(refPointer, "expected the name of a registered mapping, got \(described(target))")
            return EntityMapping(entity: "")
        }
        guard let entity = referenced == name ? topLevelEntity : entityOfMapping(referenced) else {
            checker.report(refPointer, "no mapping named \(quoted(referenced)) is registered in this model")
            return EntityMapping(entity: "")
        }
        checkPlacement(of: entity, at: refPointer, placement: placement, what: "\(quoted(referenced)) maps \(entity), which")
        return .namedReference(referenced, entity: entity)
    }

    // MARK: Attributes and identification

    /// `{"source.key": "attribute", "key": {"to": "attribute", "transformer": "Name"}}` or
    /// `["name", ...]` (each mapped from the key of the same name, R-P1).
    private mutating func readAttributes(_ value: JSONValue?, at pointer: JSONPointer, entity: String?) -> [AttributeMapping] {
        var mappings: [AttributeMapping] = []
        // Each destination attribute's first mapping, for reporting a second one.
        var firstMapping: [String: JSONPointer] = [:]
        func add(_ mapping: AttributeMapping, at destinationPointer: JSONPointer, checker: inout DocumentChecker) {
            if let first = firstMapping[mapping.attribute] {
                checker.report(destinationPointer, "maps to \(quoted(mapping.attribute)), which \(first) already maps; an attribute is mapped once")
            } else {
                firstMapping[mapping.attribute] = destinationPointer
            }
            mappings.append(mapping)
        }

        switch value {
        case nil, .null?:
            break
        case .array(let names)?:
            for (index, item) in names.enumerated() {
                let itemPointer = pointer.appending(index)
                guard let name = item.stringValue, !name.isEmpty else {
                    checker.report(itemPointer, "expected an attribute name, got \(described(item))")
                    continue
                }
                checkAttribute(name, of: entity, at: itemPointer)
                add(AttributeMapping(source: SourceKeyPath(components: [name]), attribute: name), at: itemPointer, checker: &checker)
            }
        case .object(let object)?:
            var sources = Set<String>()
            for (key, target) in object {
                let keyPointer = pointer.appending(key)
                guard sources.insert(key).inserted else {
                    checker.report(keyPointer, "is given more than once")
                    continue
                }
                let source = checker.keyPath(key, at: keyPointer)
                let destination: String?
                let destinationPointer: JSONPointer
                var transformer: String?
                switch target {
                case .string(let name):
                    destination = name
                    destinationPointer = keyPointer
                case .object(let options):
                    checker.checkMembers(of: options, allowed: ["to", "transformer"], at: keyPointer)
                    destination = checker.requiredString(options, "to", at: keyPointer)
                    destinationPointer = keyPointer.appending("to")
                    transformer = checker.string(options, "transformer", at: keyPointer)
                    if let transformer, !transformerNames.contains(transformer) {
                        checker.report(
                            keyPointer.appending("transformer"),
                            "unknown value transformer \(quoted(transformer)); it is neither built in nor declared in the model's valueTransformers"
                        )
                    }
                default:
                    checker.report(keyPointer, "expected an attribute name or {\"to\", \"transformer\"}, got \(described(target))")
                    continue
                }
                guard let destination else { continue }
                checkAttribute(destination, of: entity, at: destinationPointer)
                if let source {
                    add(AttributeMapping(source: source, attribute: destination, transformer: transformer), at: destinationPointer, checker: &checker)
                }
            }
        case let other?:
            checker.report(pointer, "expected an object of source key paths or an array of attribute names, got \(described(other))")
        }
        return mappings
    }

    /// The mapping's own identification attributes: attributes of the entity, each once, each mapped
    /// (an unmapped one could never be read, so every representation would be invalid, R-I6).
    private mutating func readIdentificationAttributes(
        _ object: JSONObject, at pointer: JSONPointer, entity: String?, mapped: [AttributeMapping]
    ) -> [String]? {
        guard object["identificationAttributes"].map({ !$0.isNull }) == true,
            let names = checker.requiredNames(object, "identificationAttributes", at: pointer)
        else { return nil }
        let mappedAttributes = Set(mapped.map(\.attribute))
        var seen = Set<String>()
        for (index, name) in names.enumerated() {
            let namePointer = pointer.appending("identificationAttributes").appending(index)
            guard seen.insert(name).inserted else {
                checker.report(namePointer, "names \(quoted(name)) more than once")
                continue
            }
            guard checkAttribute(name, of: entity, at: namePointer), entity != nil else { continue }
            if !mappedAttributes.contains(name) {
                checker.report(namePointer, "\(quoted(name)) is not mapped by attributes, so no representation could be identified")
            }
        }
        return names
    }

    /// R-P7 compares strings for equality and numbers and dates by order.
    private mutating func readModificationAttribute(_ object: JSONObject, at pointer: JSONPointer, entity: String?) -> String? {
        guard let name = checker.string(object, "modificationAttribute", at: pointer) else { return nil }
        let attributePointer = pointer.appending("modificationAttribute")
        guard checkAttribute(name, of: entity, at: attributePointer), let entity, let attribute = model.attribute(name, of: entity) else {
            return name
        }
        switch attribute.type {
        case .string, .uuid, .uri, .date, .integer16, .integer32, .integer64, .decimal, .double, .float:
            break
        case .boolean, .binary, .transformable:
            checker.report(attributePointer, "\(quoted(name)) is \(attribute.type.withArticle) attribute; a modification attribute is a string, a number or a date")
        }
        return name
    }

    /// Reports `name` unless it is an attribute of `entity` (declared or inherited); true when it is
    /// one, or when `entity` is unknown (already reported).
    @discardableResult
    private mutating func checkAttribute(_ name: String, of entity: String?, at pointer: JSONPointer) -> Bool {
        guard let entity, model.attribute(name, of: entity) == nil else { return true }
        if model.relationship(name, of: entity) != nil {
            checker.report(pointer, "\(quoted(name)) is a relationship of \(entity), not an attribute; map it in relationships")
        } else {
            // A typo gets the name it was meant for (the entity's attributes are in its model already).
            let meant = NameSuggestion.closest(to: name, among: model.allAttributes(of: entity).map(\.name).filter { $0 != name })
            checker.report(pointer, "\(entity) has no attribute named \(quoted(name))" + (meant.map { "; did you mean \(quoted($0))?" } ?? ""))
        }
        return false
    }

    /// The relationship `name` of `entity` (declared or inherited); nil after reporting when there
    /// is none, or when `entity` is unknown.
    private mutating func existingRelationship(_ name: String, of entity: String?, at pointer: JSONPointer) -> Relationship? {
        guard let entity else { return nil }
        if let relationship = model.relationship(name, of: entity) { return relationship }
        if model.attribute(name, of: entity) != nil {
            checker.report(pointer, "\(quoted(name)) is an attribute of \(entity), not a relationship")
        } else {
            checker.report(pointer, "\(entity) has no relationship named \(quoted(name))")
        }
        return nil
    }

    /// The predicate at `key`, checked against `entity`; a problem is reported at the member with the offset.
    private mutating func predicate(_ object: JSONObject, _ key: String, at pointer: JSONPointer, entity: String?) -> MappingPredicate? {
        guard let format = checker.string(object, key, at: pointer), let entity else { return nil }
        do {
            return try MappingPredicate(format: format, entity: entity, model: model)
        } catch {
            checker.report(pointer.appending(key), error.message, offset: error.offset)
            return nil
        }
    }

    // MARK: Relationships

    private mutating func readRelationships(_ object: JSONObject, at pointer: JSONPointer, entity: String?, inheritedInference: Bool?) -> [RelationshipMapping] {
        let items = checker.member(object, "relationships", at: pointer, expecting: "an array of relationship mappings") { $0.arrayValue } ?? []
        var mappings: [RelationshipMapping] = []
        var firstMapping: [String: JSONPointer] = [:]
        for (index, item) in items.enumerated() {
            let itemPointer = pointer.appending("relationships").appending(index)
            guard let mapping = readRelationship(item, at: itemPointer, entity: entity, inheritedInference: inheritedInference) else { continue }
            if let first = firstMapping[mapping.relationship] {
                checker.report(itemPointer.appending("to"), "\(quoted(mapping.relationship)) is already mapped by \(first); a relationship is mapped once")
            } else {
                firstMapping[mapping.relationship] = itemPointer
            }
            mappings.append(mapping)
        }
        return mappings
    }

    /// `{"from": "tasks", "to": "tasks", "assignmentPolicy": "replace", "mapping": {...}}`; `from`
    /// defaults to `to`, and `null` maps the enclosing representation itself.
    private mutating func readRelationship(_ value: JSONValue, at pointer: JSONPointer, entity: String?, inheritedInference: Bool?) -> RelationshipMapping? {
        guard case .object(let object) = value else {
            checker.report(pointer, "expected a relationship mapping object, got \(described(value))")
            return nil
        }
        checker.checkMembers(of: object, allowed: ["from", "to", "assignmentPolicy", "mapping"], at: pointer)
        let name = checker.requiredString(object, "to", at: pointer)
        var relationship: Relationship?
        if let name { relationship = existingRelationship(name, of: entity, at: pointer.appending("to")) }

        let source: SourceKeyPath?
        switch object["from"] {
        case nil: source = name.map { SourceKeyPath(components: [$0]) }
        case .null?: source = nil
        default: source = checker.keyPath(object, "from", at: pointer)
        }

        var policy = AssignmentPolicy.set
        if let policyName = checker.string(object, "assignmentPolicy", at: pointer) {
            if let parsed = AssignmentPolicy(rawValue: policyName) {
                policy = parsed
            } else {
                let known = AssignmentPolicy.allCases.map(\.rawValue).joined(separator: ", ")
                checker.report(pointer.appending("assignmentPolicy"), "unknown assignment policy \(quoted(policyName)); expected one of \(known)")
            }
        }
        if policy == .union, let relationship, !relationship.toMany {
            checker.report(pointer.appending("assignmentPolicy"), "union adds to a to-many relationship, and \(quoted(relationship.name)) is to-one; use set or replace")
        }

        let mappingPointer = pointer.appending("mapping")
        guard let nested = object["mapping"], !nested.isNull else {
            checker.report(mappingPointer, "is required")
            return nil
        }
        let placement = Placement.relationship(name: name ?? "", destination: relationship?.destination)
        let mapping = readMapping(nested, at: mappingPointer, placement: placement, inheritedInference: inheritedInference)
        guard let name else { return nil }
        return RelationshipMapping(source: source, relationship: name, assignmentPolicy: policy, mapping: mapping)
    }

    // MARK: Connections

    private static let connectionMembers = ["relationship", "connectedBy", "keyPath", "sourcePredicate", "destinationPredicate", "includesSubentities"]
    /// Members that only make sense when destinations are fetched by foreign key.
    private static let foreignKeyOnlyMembers = ["destinationPredicate", "includesSubentities"]

    private mutating func readConnection(_ value: JSONValue, at pointer: JSONPointer, entity: String?) -> ConnectionDescription? {
        guard case .object(let object) = value else {
            checker.report(pointer, "expected a connection object, got \(described(value))")
            return nil
        }
        checker.checkMembers(of: object, allowed: Self.connectionMembers, at: pointer)
        let name = checker.requiredString(object, "relationship", at: pointer)
        var relationship: Relationship?
        if let name { relationship = existingRelationship(name, of: entity, at: pointer.appending("relationship")) }
        let sourcePredicate = predicate(object, "sourcePredicate", at: pointer, entity: entity)

        let kind: ConnectionDescription.Kind?
        var destinationPredicate: MappingPredicate?
        var includesSubentities = true
        switch (object["connectedBy"].map { !$0.isNull } == true, object["keyPath"].map { !$0.isNull } == true) {
        case (true, true):
            checker.report(pointer.appending("keyPath"), "a connection has either connectedBy (foreign keys) or keyPath, not both")
            kind = nil
        case (false, false):
            checker.report(pointer, "a connection needs connectedBy (foreign keys) or keyPath")
            kind = nil
        case (true, false):
            kind = readConnectedBy(object["connectedBy"] ?? .null, at: pointer.appending("connectedBy"), entity: entity, relationship: relationship)
                .map { .foreignKey($0) }
            destinationPredicate = predicate(object, "destinationPredicate", at: pointer, entity: relationship?.destination)
            includesSubentities = checker.bool(object, "includesSubentities", at: pointer) ?? true
        case (false, true):
            kind = readConnectionKeyPath(object, at: pointer, entity: entity, relationship: relationship).map { .keyPath($0) }
            for key in Self.foreignKeyOnlyMembers where object[key] != nil {
                checker.report(pointer.appending(key), "applies to foreign-key connections (connectedBy) only")
            }
        }
        guard let name, let kind else { return nil }
        return ConnectionDescription(
            relationship: name, kind: kind, sourcePredicate: sourcePredicate,
            destinationPredicate: destinationPredicate, includesSubentities: includesSubentities
        )
    }

    /// `"userID"` (the same attribute on both sides), `["a", "b"]`, or `{"teamMemberIDs": "userID"}`
    /// (source -> destination attribute).
    private mutating func readConnectedBy(
        _ value: JSONValue, at pointer: JSONPointer, entity: String?, relationship: Relationship?
    ) -> [ConnectionDescription.AttributePair]? {
        var located: [(pair: ConnectionDescription.AttributePair, pointer: JSONPointer)] = []
        switch value {
        case .string(let name):
            located = [(.init(source: name, destination: name), pointer)]
        case .array(let items):
            for (index, item) in items.enumerated() {
                guard let name = item.stringValue else {
                    checker.report(pointer.appending(index), "expected an attribute name, got \(described(item))")
                    continue
                }
                located.append((.init(source: name, destination: name), pointer.appending(index)))
            }
        case .object(let object):
            for (source, destination) in object {
                guard let destination = destination.stringValue else {
                    checker.report(pointer.appending(source), "expected a destination attribute name, got \(described(destination))")
                    continue
                }
                located.append((.init(source: source, destination: destination), pointer.appending(source)))
            }
        default:
            checker.report(pointer, "expected an attribute name, an array of them, or an object of source -> destination attributes, got \(described(value))")
            return nil
        }
        if located.isEmpty, value.stringValue == nil {
            checker.report(pointer, "names no attributes")
            return nil
        }
        var sources = Set<String>()
        for (pair, pairPointer) in located {
            if !sources.insert(pair.source).inserted {
                checker.report(pairPointer, "names the source attribute \(quoted(pair.source)) more than once")
                continue
            }
            if let entity, model.attribute(pair.source, of: entity) == nil {
                checker.report(pairPointer, "\(quoted(pair.source)) is not an attribute of \(entity)")
            }
            if let relationship, model.entity(named: relationship.destination) != nil,
                model.attribute(pair.destination, of: relationship.destination) == nil
            {
                checker.report(
                    pairPointer,
                    "\(quoted(pair.destination)) is not an attribute of \(relationship.destination), the destination of \(quoted(relationship.name))"
                )
            }
        }
        return located.map(\.pair)
    }

    /// `"user.organization"`: relationships followed from the source object whose end fits the
    /// connected relationship (its destination or a sub-entity; many objects only for a to-many).
    private mutating func readConnectionKeyPath(
        _ object: JSONObject, at pointer: JSONPointer, entity: String?, relationship: Relationship?
    ) -> [String]? {
        guard let keyPath = checker.keyPath(object, "keyPath", at: pointer) else { return nil }
        let keyPathPointer = pointer.appending("keyPath")
        guard keyPath.root == .representation else {
            checker.report(keyPathPointer, "follows relationships of the mapped object; \(keyPath.root.rawValue) applies to source key paths only")
            return nil
        }
        guard var current = entity else { return keyPath.components }
        var crossedToMany: String?
        for step in keyPath.components {
            guard let next = model.relationship(step, of: current) else {
                checker.report(keyPathPointer, "\(quoted(keyPath.description)) does not lead to objects: \(current) has no relationship named \(quoted(step))")
                return keyPath.components
            }
            if next.toMany, crossedToMany == nil { crossedToMany = step }
            current = next.destination
        }
        guard let relationship else { return keyPath.components }
        if !model.entityAndSubentities(of: relationship.destination).contains(current) {
            checker.report(
                keyPathPointer,
                "\(quoted(keyPath.description)) leads to \(current), which is not \(relationship.destination) (the destination of \(quoted(relationship.name))) or one of its sub-entities"
            )
        } else if let crossedToMany, !relationship.toMany {
            checker.report(
                keyPathPointer,
                "\(quoted(keyPath.description)) crosses the to-many relationship \(quoted(crossedToMany)), so it leads to many objects, and \(quoted(relationship.name)) is to-one"
            )
        }
        return keyPath.components
    }

    // MARK: Snapshots and dynamic mappings

    /// `{"scope": "<predicate>", "maxDeletes": 100}`, both required: a snapshot deletes, so its reach is explicit.
    private mutating func readDeleteMissing(_ object: JSONObject, at pointer: JSONPointer, entity: String?) -> DeleteMissing? {
        checker.checkMembers(of: object, allowed: ["scope", "maxDeletes"], at: pointer)
        if object["scope"] == nil || object["scope"] == .null { checker.report(pointer.appending("scope"), "is required") }
        let scope = predicate(object, "scope", at: pointer, entity: entity)
        let maxDeletes = checker.member(object, "maxDeletes", at: pointer, expecting: "a non-negative integer") { value -> Int? in
            value.numberValue?.int64Value.flatMap { $0 >= 0 ? Int(exactly: $0) : nil }
        }
        if object["maxDeletes"] == nil || object["maxDeletes"] == .null { checker.report(pointer.appending("maxDeletes"), "is required") }
        guard let scope, let maxDeletes else { return nil }
        return DeleteMissing(scope: scope, maxDeletes: maxDeletes)
    }

    /// `{"days": N}` (R-P18): how long accepted payloads are kept, 1 to `MappingArchive.maximumDays` whole days.
    private mutating func readArchive(_ object: JSONObject, at pointer: JSONPointer) -> MappingArchive? {
        checker.checkMembers(of: object, allowed: ["days"], at: pointer)
        let range = MappingArchive.allowedDays
        let expecting = "an integer from \(range.lowerBound) to \(range.upperBound)"
        let days = checker.member(object, "days", at: pointer, expecting: expecting) { value -> Int? in
            value.numberValue?.int64Value.flatMap { Int(exactly: $0) }.flatMap { range.contains($0) ? $0 : nil }
        }
        if object["days"] == nil || object["days"] == .null { checker.report(pointer.appending("days"), "is required") }
        return days.map(MappingArchive.init(days:))
    }

    /// `"cursor"` (R-P16): an attribute the mapping maps, of a type with an order, and the query parameters
    /// it is kept per.
    private mutating func readCursor(_ value: JSONValue, at pointer: JSONPointer, mapping: EntityMapping) -> MappingCursor? {
        let attributePointer: JSONPointer
        let attribute: String?
        var scope: [String] = []
        switch value {
        case .string(let name):
            (attributePointer, attribute) = (pointer, name)
        case .object(let object):
            checker.checkMembers(of: object, allowed: ["attribute", "scope"], at: pointer)
            attributePointer = pointer.appending("attribute")
            attribute = checker.requiredString(object, "attribute", at: pointer)
            let names = checker.member(object, "scope", at: pointer, expecting: "an array of query parameter names") { $0.arrayValue } ?? []
            for (index, name) in names.enumerated() {
                guard let name = name.stringValue, !name.isEmpty else {
                    checker.report(pointer.appending("scope").appending(index), "is not a query parameter name")
                    continue
                }
                if scope.contains(name) { checker.report(pointer.appending("scope").appending(index), "names \(quoted(name)) twice") }
                scope.append(name)
            }
        default:
            checker.report(pointer, "expected an attribute name or {\"attribute\", \"scope\"}")
            return nil
        }
        guard let attribute else { return nil }
        guard mapping.attributes.contains(where: { $0.attribute == attribute }) else {
            checker.report(attributePointer, "\(quoted(attribute)) is not an attribute this mapping maps")
            return nil
        }
        if let type = model.attribute(attribute, of: mapping.entity)?.type, !MappingCursor.orders(type) {
            checker.report(attributePointer, "\(quoted(attribute)) is \(type.rawValue), which has no order to resume from")
            return nil
        }
        return MappingCursor(attribute: attribute, scope: scope)
    }

    /// `{"keyPath": "type", "map": {"text": {mapping}, ...}}`: each case maps the base entity or a sub-entity.
    private mutating func readDynamic(_ object: JSONObject, at pointer: JSONPointer, entity: String?, inheritedInference: Bool?) -> DynamicMapping? {
        checker.checkMembers(of: object, allowed: ["keyPath", "map"], at: pointer)
        let keyPath = checker.keyPath(object, "keyPath", at: pointer, required: true)
        let mapPointer = pointer.appending("map")
        guard let map = checker.member(object, "map", at: pointer, expecting: "an object of discriminator values -> mappings", { $0.objectValue }) else {
            if object["map"] == nil || object["map"] == .null { checker.report(mapPointer, "is required") }
            return nil
        }
        if map.isEmpty { checker.report(mapPointer, "has no cases") }
        var cases: [DynamicMapping.Case] = []
        var values = Set<String>()
        for (value, nested) in map {
            guard values.insert(value).inserted else {
                checker.report(mapPointer.appending(value), "is given more than once")
                continue
            }
            let mapping = readMapping(nested, at: mapPointer.appending(value), placement: .dynamicCase(base: entity), inheritedInference: inheritedInference)
            cases.append(DynamicMapping.Case(value: value, mapping: mapping))
        }
        guard let keyPath else { return nil }
        return DynamicMapping(keyPath: keyPath, cases: cases)
    }
}
