// The state of mapping one payload: nodes by identity, and the phases that fill them.
import Foundation
import CartographCore
import CartographPredicate

struct MappingRun {
    let engine: MappingEngine
    let root: JSONValue
    let metadata: JSONValue
    /// Every distinct object in first-seen order.
    private(set) var nodes: [MappedNode] = []
    /// Nodes by root entity and identity (R-I5: the same object across nesting levels and mappings).
    private var byIdentity: [String: [[AttributeValue]: MappedNode]] = [:]
    /// Representations read so far (objects and identity values), against the engine's maximumObjects.
    private var representationsRead = 0
    /// The mappings nodes were read with, by entity: nodes read with equal mappings share one.
    private var mappingReferences: [String: [MappingReference]] = [:]
    /// References resolved so far: annotation mappings compiled (R-P10), registered mappings by name.
    private var resolvedReferences: [ResolvedReference: EntityMapping] = [:]
    /// Identities that a lookup before the read found no stored object for, by identification group:
    /// `identify` does not look them up again.
    private var knownAbsent: [String: AbsentIdentities] = [:]
    /// The nodes `identifyAhead` identified in a read snapshot (`forgetChangedSince`), and the change
    /// feed's head of the oldest snapshot its lookups read.
    private var identifiedAhead: [MappedNode] = []
    private(set) var identifiedAheadAt: Int64?
    /// Whether current top-level objects are found before the read (R-P7, `currentObjects`).
    private(set) var readsAhead: Bool
    /// A representation met a node that was only read ahead: the payload must be mapped again without
    /// reading ahead (the node's representation was not read).
    private(set) var readAheadMet = false
    /// Per-entity facts, computed as entities are met.
    let tables: EntityTables
    /// Counts and lists as they happen (R-P12).
    var result = MappingResult()
    /// R-D5: the objects the chunks of a streamed payload before this one wrote (their nodes are gone),
    /// kept when the top-level mapping has `deleteMissing` (see `rememberMentioned`).
    private(set) var mentionedInEarlierChunks: Set<Int64> = []
    /// R-P17: where each listed drift stands in `result.drift`, by the path of its representation, then
    /// its path below it and kind; kept across chunks.
    var driftIndex: [String: [String: Int]] = [:]
    /// R-D1: the deletion predicates of the mappings the chunks before this one used (their nodes are gone).
    private(set) var deletionPredicatesOfEarlierChunks: [MappingPredicate] = []
    /// R-D1 in a streamed payload: the listed top-level objects named by their stored key, which is not
    /// their identity (`summarize`). Deletions run after every chunk was listed, and an object they delete
    /// is named by its identity, as when the whole payload is listed after them (`relistDeleted`).
    var listedByStoredKey: [(index: Int, id: Int64, entity: String, identity: JSONValue)]?
    /// Whether the last mapping and entity `listedObject(of:)` was asked about identify by the entity's key attributes.
    var lastIdentifiesByKey: (reference: ObjectIdentifier, entity: String, answer: Bool)?
    /// R-P6 replace: destinations dropped from a relationship as it was written, with what dropped them
    /// (see `deleteDroppedDestinations`); kept across the chunks of a streamed payload.
    var droppedDestinations: [(id: Int64, entity: String, relationship: String, destination: String, pointer: String)] = []
    /// The explain trace (R-P13); nil when not asked for.
    var trace: [JSONValue]?
    /// The engine's model, stored: a computed copy cost a retain of every part of it per property lookup.
    let model: Model

    init(engine: MappingEngine, root: JSONValue, metadata: JSONValue, explain: Bool = false, readsAhead: Bool = true) {
        self.readsAhead = readsAhead
        self.engine = engine
        self.model = engine.model
        self.tables = EntityTables(model: engine.model)
        self.root = root
        self.metadata = metadata
        self.trace = explain ? [] : nil
    }

    /// Adds an entry to the explain trace, when one is recorded.
    mutating func record(pointer: String, entity: String, key: @autoclosure () throws(CartographError) -> JSONValue,
                         action: String, reason: @autoclosure () -> String) throws(CartographError) {
        guard trace != nil else { return }
        trace?.append(.object(JSONObject([
            ("pointer", .string(pointer)), ("entity", .string(entity)), ("key", try key()),
            ("action", .string(action)), ("reason", .string(reason())),
        ])))
    }

    // MARK: Phase 1: read

    /// The representations at the mapping's key path (R-P2), one node each, in payload order, and
    /// whether the key path was present at all. R-P7's read-ahead looks current objects up in `lookup`
    /// (none without one).
    mutating func readTopLevel(_ payload: JSONValue, mapping: EntityMapping, lookup: (any MappingLookup)?) throws(CartographError)
        -> (representations: [(node: MappedNode, pointer: String)], keyPathPresent: Bool) {
        var selected: [Selected] = []
        var keyPathPresent = mapping.keyPath == nil
        func select(from container: JSONValue, pointer: String) {
            guard let keyPath = mapping.keyPath else {
                selected.append((container, container, pointer))
                return
            }
            var value = container
            var path = pointer
            for key in keyPath.components {
                guard let next = value[key] else { return }  // a missing key path maps nothing
                value = next
                path += "/" + Self.escape(key)
            }
            keyPathPresent = true
            if case .array(let elements) = value {
                for (index, element) in elements.enumerated() where !element.isNull { selected.append((element, container, path + "/\(index)")) }
            } else if !value.isNull {
                selected.append((value, container, path))
            }
        }
        if case .array(let elements) = payload, mapping.keyPath != nil {
            // A root array with a keyPath: the key path is read from each element (docs/mapping.md#members).
            for (index, element) in elements.enumerated() { select(from: element, pointer: "/\(index)") }
        } else if case .array(let elements) = payload {
            for (index, element) in elements.enumerated() where !element.isNull { selected.append((element, payload, "/\(index)")) }
        } else {
            select(from: payload, pointer: "")
        }
        return (try readSelected(selected, mapping: mapping, lookup: lookup), keyPathPresent)
    }

    /// `readTopLevel` for a payload read shallowly: the read-ahead looks at the elements as read (their
    /// identity and modification members), and the others are parsed whole before they are read.
    mutating func readTopLevel(_ shallow: ShallowPayload, lookup: (any MappingLookup)?) throws(CartographError)
        -> [(node: MappedNode, pointer: String)] {
        var selected: [Selected] = []
        var elementIndexes: [Int] = []
        for (index, element) in shallow.elements.enumerated() where !element.value.isNull {
            selected.append((element.value, .null, shallow.pointer + "/\(index)"))
            elementIndexes.append(index)
        }
        let current = try currentObjects(among: selected, mapping: shallow.mapping, in: lookup)
        // Each element registers its identity: sized once rather than grown (and rehashed) a dozen times.
        byIdentity[tables.root(of: resolved(shallow.mapping).entity), default: [:]].reserveCapacity(selected.count)
        for position in selected.indices where current[position] == nil {
            selected[position].value = try shallow.element(elementIndexes[position])
        }
        return try read(selected, mapping: shallow.mapping, current: current)
    }

    /// A top-level representation, the container its key path was read from, and its pointer.
    typealias Selected = (value: JSONValue, parent: JSONValue, pointer: String)

    // MARK: Chunks of a streamed payload

    /// Keeps the ids of this chunk's objects for R-D5's `deleteMissing` at the end of the payload.
    mutating func rememberMentioned() {
        mentionedInEarlierChunks.formUnion(nodes.compactMap(\.id))
    }

    /// Keeps the deletion predicates this chunk's mappings have for R-D1 at the end of the payload.
    mutating func rememberDeletionPredicates() {
        deletionPredicatesOfEarlierChunks = deletionPredicates(of: nil)
    }

    /// The deletion predicates of `topLevel` and of every mapping a reachable node of this run (or of the
    /// chunks before) was mapped with, each once.
    func deletionPredicates(of topLevel: EntityMapping?) -> [MappingPredicate] {
        var predicates = deletionPredicatesOfEarlierChunks
        if let predicate = topLevel?.deletionPredicate, !predicates.contains(predicate) { predicates.append(predicate) }
        for node in nodes where node.reachable {
            // Read through the node: copying each node's mapping would cost more than the check.
            if let predicate = node.mapping.deletionPredicate, !predicates.contains(predicate) { predicates.append(predicate) }
        }
        return predicates
    }

    /// Names the objects R-D1 deleted among those listed by their stored key by their identity instead
    /// (see `listedByStoredKey`).
    mutating func relistDeleted(in store: some MappingStore) throws(CartographError) {
        guard let listed = listedByStoredKey else { return }
        var replacements: [Int: JSONValue] = [:]
        for entry in listed where try store.key(ofObject: entry.id, entity: entry.entity) == nil {
            replacements[entry.index] = entry.identity
        }
        result.replaceObjectKeys(replacements)
    }

    /// Starts the next chunk of a streamed payload (see `MappingEngine.map(_ streamed:)`): the nodes of
    /// the chunk before are written and summarized, so they are dropped; what the run counts and lists
    /// (the result, the objects read) goes on.
    mutating func startChunk(readsAhead: Bool = true) {
        nodes = []
        byIdentity = [:]
        knownAbsent = [:]
        identifiedAhead = []
        identifiedAheadAt = nil
        repeatedShared = []
        readAheadMet = false
        self.readsAhead = readsAhead
    }

    /// Reads selected top-level representations in order — a payload's, or a chunk of a streamed one —
    /// those R-P7 finds current in `lookup` by their identity and modification value only.
    mutating func readSelected(_ selected: [Selected], mapping: EntityMapping, lookup: (any MappingLookup)?) throws(CartographError)
        -> [(node: MappedNode, pointer: String)] {
        try read(selected, mapping: mapping, current: try currentObjects(among: selected, mapping: mapping, in: lookup))
    }

    /// A hash of the identity a top-level object representation has with a flat mapping (see
    /// `MappingEngine.streamingPlan`), read through `sources` (`identitySources`, found once for the
    /// payload); nil when it has none (no identification attributes, or a value missing or with a
    /// problem: such a representation is never merged with another).
    func identityHash(of representation: JSONValue, sources: IdentitySources) -> Int? {
        guard sources.count > 0 else { return nil }
        var slots = [AttributeValue?](repeating: nil, count: sources.count)
        var errors: [CartographError.Detail] = []
        var typeDrift: [ValueTypeDrift] = []
        for source in sources.attributes {
            guard let slot = source.slot, case .some(.some(let value)) = mappedValue(source.mapping, type: source.type, in: representation, parent: .null,
                                                                                      pointer: "", errors: &errors, typeDrift: &typeDrift) else { continue }
            slots[slot] = value
        }
        var hasher = Hasher()
        for slot in slots {
            guard let value = slot else { return nil }
            hasher.combine(value)
        }
        return hasher.finalize()
    }

    /// The attribute mappings of `mapping` that give an identification value (its slot in the identity)
    /// or the value of `modification`, in mapping order: as when a representation is read, a later mapping
    /// of one attribute wins where its source is present.
    func identitySources(of mapping: EntityMapping, modification: String? = nil) -> IdentitySources {
        let names = mapping.resolvedIdentificationAttributes
        let attributes = mapping.attributes.compactMap { (attributeMapping) -> IdentitySources.Source? in
            let slot = names.firstIndex(of: attributeMapping.attribute), isModification = attributeMapping.attribute == modification
            guard slot != nil || isModification else { return nil }
            return .init(mapping: attributeMapping, type: tables.attributeType(attributeMapping.attribute, of: mapping.entity), slot: slot, isModification: isModification)
        }
        return IdentitySources(attributes: attributes, count: names.count)
    }

    /// See `identitySources`.
    struct IdentitySources {
        struct Source {
            let mapping: AttributeMapping
            let type: AttributeType?
            let slot: Int?
            let isModification: Bool
        }
        let attributes: [Source]
        /// The number of identification attributes.
        let count: Int
    }

    /// A hash of a node's root entity and identity, nil without one (such a node is never merged):
    /// what `MappingEngine.streamingPlan` compares across chunks.
    func identityHash(of node: MappedNode) -> Int? {
        guard let identity = node.identity else { return nil }
        var hasher = Hasher()
        hasher.combine(tables.root(of: node.entity))
        hasher.combine(identity)
        return hasher.finalize()
    }

    /// A hash of what a node maps: its values, whether it is only an identity (R-P5), its problems so
    /// far and its relationships' destinations by identity. Nil when a destination has no identity (each
    /// copy of the node would insert its own). Copies in several chunks with one content hash map as one.
    func contentHash(of node: MappedNode) -> Int? {
        var hasher = Hasher()
        hasher.combine(node.values)
        hasher.combine(node.isReference)
        hasher.combine(node.errors.count)
        for (mapping, destinations) in node.relationships {
            hasher.combine(mapping.relationship)
            guard let destinations else {
                hasher.combine(-1)
                continue
            }
            hasher.combine(destinations.count)
            for destination in destinations {
                guard let hash = identityHash(of: destination) else { return nil }
                hasher.combine(hash)
            }
        }
        return hasher.finalize()
    }

    /// Objects a streamed payload names in several chunks, all alike (see `MappingEngine.streamingPlan`),
    /// by identity hash, once an earlier chunk has mapped them.
    private var sharedMapped: Set<Int> = []
    /// The nodes of this chunk that stand for such an object: written again (an unchanged object, or
    /// discarded again), but neither counted nor listed again.
    private(set) var repeatedShared: Set<ObjectIdentifier> = []

    /// Finds the nodes of this chunk that stand for shared objects an earlier chunk mapped; the others
    /// count as mapped for later chunks.
    mutating func markRepeatedShared(_ shared: Set<Int>) {
        guard !shared.isEmpty else { return }
        var mappedHere: [Int] = []
        for node in nodes {
            guard let hash = identityHash(of: node), shared.contains(hash) else { continue }
            if sharedMapped.contains(hash) { repeatedShared.insert(ObjectIdentifier(node)) } else { mappedHere.append(hash) }
        }
        sharedMapped.formUnion(mappedHere)
    }

    /// Whether `node` stands for a shared object an earlier chunk mapped (see `repeatedShared`).
    func isRepeatedShared(_ node: MappedNode) -> Bool {
        !repeatedShared.isEmpty && repeatedShared.contains(ObjectIdentifier(node))
    }

    /// Reads the selected representations in payload order, registering the `current` ones (read ahead)
    /// as they are; stops when a representation meets a node read ahead (the caller starts again).
    private mutating func read(_ selected: [Selected], mapping: EntityMapping, current: [MappedNode?]) throws(CartographError)
        -> [(node: MappedNode, pointer: String)] {
        var result: [(node: MappedNode, pointer: String)] = []
        result.reserveCapacity(selected.count)
        let known = MappingReference.readsAsItIs(mapping) ? reference(to: mapping) : nil
        for (index, item) in selected.enumerated() {
            if let node = current[index] {
                try count(pointer: item.pointer)
                readAheadMet = readAheadMet || !register(node)
                result.append((node, item.pointer))
            } else if !mapping.identityReferences, item.value.objectValue == nil {
                result.append((try scalarAtTopLevel(item, mapping: mapping), item.pointer))
            } else {
                result.append((try read(item.value, mapping: mapping, known: known, parent: item.parent, pointer: item.pointer), item.pointer))
            }
            if readAheadMet { break }
        }
        return result
    }

    /// R-P7 before the read: the top-level representations whose stored object `modificationAttribute`
    /// says is current, by index into `selected`, found with one lookup that reads only identities and
    /// modification values. Their attribute and relationship mappings are skipped, so they are not read
    /// further and their nested representations not at all (on a re-load, most of the payload).
    /// Nothing when the mapping decides per representation what it maps (dynamic, dictionary transformer).
    private mutating func currentObjects(among selected: [Selected],
                                         mapping base: EntityMapping, in lookup: (any MappingLookup)?) throws(CartographError) -> [MappedNode?] {
        var current = [MappedNode?](repeating: nil, count: selected.count)
        guard readsAhead, let store = lookup else { return current }
        let mapping = resolved(base)
        guard let (identityNames, modification) = mapping.readAheadAttributes else { return current }
        let sources = identitySources(of: mapping, modification: modification).attributes
        var candidates: [(index: Int, identity: [AttributeValue], modification: AttributeValue)] = []
        candidates.reserveCapacity(selected.count)
        var slots = [AttributeValue??](repeating: nil, count: identityNames.count)
        for (index, item) in selected.enumerated() {
            guard case .object = item.value else { continue }
            var errors: [CartographError.Detail] = []
            // Drift is counted when the representation is read, if it is (an object found current is not, R-P17).
            var typeDrift: [ValueTypeDrift] = []
            for slot in slots.indices { slots[slot] = nil }
            var incoming: AttributeValue?? = nil
            for source in sources {
                guard let value = mappedValue(source.mapping, type: source.type, in: item.value, parent: item.parent, pointer: item.pointer,
                                              errors: &errors, typeDrift: &typeDrift) else { continue }
                if let slot = source.slot { slots[slot] = value }
                if source.isModification { incoming = value }
            }
            let identity = slots.compactMap { $0 ?? nil }
            // A representation with a problem is read in full, which reports it.
            guard errors.isEmpty, identity.count == identityNames.count, case .some(.some(let modificationValue)) = incoming else { continue }
            candidates.append((index, identity, modificationValue))
        }
        guard !candidates.isEmpty else { return current }
        let group = Self.identificationGroup(entity: mapping.entity, mapping: mapping)
        var absent = AbsentIdentities(root: model.rootEntity(of: mapping.entity), attributes: identityNames,
                                      predicated: mapping.identificationPredicate != nil)
        defer { if !absent.identities.isEmpty { knownAbsent[group] = absent } }
        let found = try store.firstObjects(entity: mapping.entity, attributes: identityNames, identities: candidates.map(\.identity),
                                           predicate: mapping.identificationPredicate?.checked, reading: [modification])
        let reference = reference(to: mapping)
        for (position, candidate) in candidates.enumerated() {
            guard let existing = found.objects[position] else {
                absent.identities.insert(candidate.identity)
                continue
            }
            guard let stored = found[position, 0], Self.isCurrent(stored: stored, incoming: candidate.modification) else { continue }
            // Skipped from the start, with no mapped values: nothing of it is validated or written, and a
            // representation of the same object elsewhere in the payload makes the read start again without
            // reading ahead (`readAheadMet`), so its values are never merged with another's.
            let node = MappedNode(mapping: reference, pointer: selected[candidate.index].pointer, identity: candidate.identity, isReference: false)
            node.existing = existing
            node.identified = true
            node.readAhead = true
            node.skipped = true
            current[candidate.index] = node
        }
        return current
    }

    /// The stored objects R-P7's read-ahead found current (their nodes are not read further).
    var readAheadIDs: [Int64] { nodes.compactMap { $0.readAhead ? $0.existing?.id : nil } }

    /// The stored objects the lookups before the write found: by R-P7's read-ahead, and by `identifyAhead`.
    var foundAheadIDs: [Int64] { readAheadIDs + identifiedAhead.compactMap { $0.existing?.id } }

    /// Whether the payload must be read again inside the write, given the objects found before it that
    /// `changed` since and what the commits since `written` (nil: anything): an object R-P7 found current
    /// changed; or a top-level object read whole (not found current) may be current now, so that its nested
    /// representations must not have been read (R-P7 skips them): it changed, or its identity was absent and
    /// may have been given. Only a mapping with a `modificationAttribute` and relationship mappings can tell
    /// the latter: without nested representations, identification and validation inside the write see the
    /// object as it is now.
    func mustReadAgain(_ topLevel: [MappedNode], mapping: EntityMapping, changed: Set<Int64>, written: WrittenIdentities?) -> Bool {
        if changed.isEmpty, let written, written.digests.isEmpty { return false }
        if nodes.contains(where: { $0.readAhead && $0.existing.map { changed.contains($0.id) } == true }) { return true }
        guard mapping.modificationAttribute != nil, !mapping.relationships.isEmpty else { return false }
        for node in topLevel where !node.readAhead {
            guard let identity = node.identity else { continue }
            if let existing = node.existing {
                if changed.contains(existing.id) { return true }
                continue
            }
            let reference = node.mappingReference
            // Not identified before the write, nor known absent: it may be anything now.
            guard node.identified || knownAbsent[reference.identificationGroup]?.identities.contains(identity) == true else { return true }
            if mayHaveBeenGiven(identity, to: node, written: written) { return true }
        }
        return false
    }

    /// What the lookups before the write found that the commits since may have changed, forgotten, so that
    /// `identify` looks it up again: an object that `changed`, an identity found absent that a commit may
    /// have given to an object (`written`; nil: any).
    mutating func forgetChangedSince(changed: Set<Int64>, written: WrittenIdentities?) {
        for (group, absent) in knownAbsent {
            var kept = absent
            kept.identities = absent.identities.filter {
                !WrittenIdentities.mayHaveGiven(written, root: absent.root, attributes: absent.attributes, identity: $0, predicated: absent.predicated)
            }
            knownAbsent[group] = kept
        }
        for node in identifiedAhead {
            if let existing = node.existing {
                guard changed.contains(existing.id) else { continue }
                node.existing = nil
            } else if let identity = node.identity, !mayHaveBeenGiven(identity, to: node, written: written) {
                continue
            }
            node.identified = false
        }
        identifiedAhead = []
    }

    /// Whether a commit that wrote `written` may have given `node`'s identity to an object.
    private func mayHaveBeenGiven(_ identity: [AttributeValue], to node: MappedNode, written: WrittenIdentities?) -> Bool {
        let mapping = node.mapping
        return WrittenIdentities.mayHaveGiven(written, root: model.rootEntity(of: node.identificationEntity),
                                              attributes: mapping.resolvedIdentificationAttributes, identity: identity,
                                              predicated: mapping.identificationPredicate != nil)
    }

    /// The shared reference for `mapping` (a payload uses few mappings; their comparison finds equal
    /// arrays and strings by identity first, as copies of one mapping share them).
    private mutating func reference(to mapping: EntityMapping) -> MappingReference {
        if let found = mappingReferences[mapping.entity]?.first(where: { $0.mapping == mapping }) { return found }
        let reference = MappingReference(mapping, model: model, tables: tables)
        mappingReferences[mapping.entity, default: []].append(reference)
        return reference
    }

    /// The mapping that applies: a reference becomes the mapping it stands for (`MappingEngine.resolve`),
    /// resolved once per payload.
    private mutating func resolved(_ mapping: EntityMapping) -> EntityMapping {
        let key: ResolvedReference
        if let name = mapping.reference {
            key = .named(name)
        } else if mapping.isAnnotationReference {
            key = .annotations(mapping.entity)
        } else {
            return mapping
        }
        if let compiled = resolvedReferences[key] { return compiled }
        let compiled = engine.resolve(mapping)
        resolvedReferences[key] = compiled
        return compiled
    }

    /// What a reference stands for: an entity's annotation mapping (R-P10) or a registered mapping by name.
    enum ResolvedReference: Hashable {
        case annotations(String)
        case named(String)
    }

    /// The mapping that reads `representation`, and why it cannot insert if it cannot: the
    /// dictionary transformer pre-processes the representation, then `dynamic` (R-P9) picks a case
    /// by the discriminator; an unknown one falls back to `mapping` (invalid to insert when abstract).
    private mutating func choose(_ base: EntityMapping, for representation: inout JSONValue, parent: JSONValue,
                                 pointer: String, errors: inout [CartographError.Detail]) -> MappingChoice {
        var mapping = resolved(base)
        if MappingReference.readsAsItIs(mapping) { return choice(reading: reference(to: mapping), pointer: pointer) }
        let dynamicBase = mapping.dynamic == nil ? nil : mapping
        transform(&representation, with: mapping.dictionaryTransformer, pointer: pointer, errors: &errors)
        var fallback: String?
        if let dynamic = mapping.dynamic {
            let discriminator = value(at: dynamic.keyPath, in: representation, parent: parent)
            if let discriminator, let chosen = dynamic.mapping(forDiscriminator: discriminator) {
                let chosenMapping = resolved(chosen)
                if chosenMapping.dictionaryTransformer != mapping.dictionaryTransformer {
                    transform(&representation, with: chosenMapping.dictionaryTransformer, pointer: pointer, errors: &errors)
                }
                mapping = chosenMapping
            } else {
                fallback = "no case of the dynamic mapping at '\(dynamic.keyPath)' matches \(discriminator.map { $0.jsonText } ?? "a missing value")"
            }
        }
        // A case's objects are identified across the base's hierarchy when its identification attributes exist there.
        var identificationEntity = mapping.entity
        if let dynamicBase, mapping.entity != dynamicBase.entity, mapping.identificationPredicate == nil,
           mapping.resolvedIdentificationAttributes.allSatisfy({ model.attribute($0, of: dynamicBase.entity) != nil }) {
            identificationEntity = dynamicBase.entity
        }
        let problem = tables.isAbstract(mapping.entity) ? Self.abstractProblem(of: mapping.entity, pointer: pointer, fallback: fallback) : nil
        return MappingChoice(reference: reference(to: mapping), identificationEntity: identificationEntity, insertionProblem: problem,
                             dynamicBase: dynamicBase)
    }

    /// The choice of a mapping that reads representations as they are (see `MappingReference.readsAsItIs`).
    private func choice(reading reference: MappingReference, pointer: String) -> MappingChoice {
        MappingChoice(reference: reference, identificationEntity: reference.mapping.entity,
                      insertionProblem: reference.isAbstract ? Self.abstractProblem(of: reference.mapping.entity, pointer: pointer, fallback: nil) : nil,
                      dynamicBase: nil)
    }

    private static func abstractProblem(of entity: String, pointer: String, fallback: String?) -> CartographError.Detail {
        CartographError.Detail(pointer: pointer, message: "\(fallback.map { $0 + ", and " } ?? "")\(entity) is abstract, so a new object needs a concrete sub-entity")
    }

    /// What `choose` decided for one representation.
    struct MappingChoice {
        /// The mapping that reads it, shared.
        let reference: MappingReference
        /// The entity whose hierarchy identification searches.
        let identificationEntity: String
        /// Why the representation cannot insert, if it cannot (it may still update).
        let insertionProblem: CartographError.Detail?
        /// The resolved mapping whose `dynamic` chose, kept to read the representation again (R-P9).
        let dynamicBase: EntityMapping?
    }

    /// Applies the dictionary transformer `name` to an object representation.
    private func transform(_ representation: inout JSONValue, with name: String?, pointer: String, errors: inout [CartographError.Detail]) {
        guard let name, case .object(let object) = representation else { return }
        guard let transformer = engine.dictionaryTransformers.transformer(named: name) else {
            errors.append(.init(pointer: pointer, message: "the dictionary transformer '\(name)' is not declared in the model's dictionaryTransformers"))
            return
        }
        do { representation = .object(try transformer.apply(to: object)) } catch {
            errors.append(.init(pointer: pointer, message: error.description))
        }
    }

    /// Reads one representation (an object, or an identity value standing for one) into its node, with
    /// `base`, or with `known`: the shared reference of a mapping that reads representations as they are
    /// (`MappingReference.readsAsItIs`), which the caller has found already.
    mutating func read(_ original: JSONValue, mapping base: EntityMapping, known: MappingReference? = nil, parent: JSONValue,
                       pointer: String) throws(CartographError) -> MappedNode {
        try count(pointer: pointer)
        var representation = original
        var errors: [CartographError.Detail] = []
        let choice = if let known { choice(reading: known, pointer: pointer) }
            else { choose(base, for: &representation, parent: parent, pointer: pointer, errors: &errors) }
        let reference = choice.reference
        let entity = reference.mapping.entity
        let identityNames = reference.mapping.resolvedIdentificationAttributes
        guard case .object = representation else {
            // R-P5: a primitive where an object is expected is an identity value.
            guard identityNames.count == 1, let type = tables.attributeType(identityNames[0], of: entity) else {
                let node = MappedNode(mapping: reference, pointer: pointer, identity: nil, isReference: true)
                node.errors.append(.init(pointer: pointer, message: "expected an object (\(entity) has \(identityNames.count) identification attributes, so a bare value cannot identify it)"))
                nodes.append(node)
                return node
            }
            var identity: [AttributeValue]?
            do {
                if let value = try AttributeValue.coerce(representation, to: type) { identity = [value] }
            } catch {
                errors.append(.init(pointer: pointer, message: "\(error.message)"))
            }
            let node = intern(MappedNode(mapping: reference, pointer: pointer, identity: identity, isReference: true))
            node.errors += errors
            node.insertionProblem = node.insertionProblem ?? choice.insertionProblem
            node.identificationEntity = choice.identificationEntity
            // A stub is inserted with its identity (and model defaults) only.
            if let value = identity?.first, node.values[identityNames[0]] == nil { node.values[identityNames[0]] = .some(value) }
            if identity == nil, errors.isEmpty { node.errors.append(.init(pointer: pointer, message: "an identity value cannot be null")) }
            return node
        }
        // Sized once: grown one insert at a time, a dictionary reallocates and rehashes as it goes.
        let attributeMappings = reference.mapping.attributes
        var values = [String: AttributeValue?](minimumCapacity: attributeMappings.count)
        var typeDrift: [ValueTypeDrift] = []
        for (index, attributeMapping) in attributeMappings.enumerated() {
            if let value = mappedValue(attributeMapping, type: reference.attributeTypes[index], in: representation, parent: parent,
                                       pointer: pointer, errors: &errors, typeDrift: &typeDrift) {
                values[attributeMapping.attribute] = .some(value)
            }
        }
        // R-I6: every identification attribute needs a value; a missing one makes an invalid object.
        var identity: [AttributeValue]? = identityNames.isEmpty ? nil : []
        for name in identityNames {
            if case .some(.some(let value)) = values[name] {
                identity?.append(value)
            } else {
                identity = nil
                errors.append(.init(pointer: pointer, message: "the identification attribute '\(name)' has no value"
                                        + Self.unreadKeysHint(of: representation, attribute: name,
                                                              keys: reference.representationKeys(discriminator: choice.dynamicBase?.dynamic?.keyPath))))
            }
        }
        let node = intern(MappedNode(mapping: reference, pointer: pointer, identity: identity, isReference: false))
        if case .object(let object) = representation {
            noteDrift(of: object, node: node, mapping: reference.mapping, reference: reference, discriminator: choice.dynamicBase?.dynamic?.keyPath,
                      pointer: pointer, typeDrift: typeDrift)
        }
        // R-I5 with R-P7: of two copies of one object in a payload, the newest wins wherever it stands (an
        // event stream is newest-first); a copy that is not newer than the one read changes nothing.
        if let name = reference.mapping.modificationAttribute, case .some(.some(let kept)) = node.values[name],
           case .some(.some(let incoming)) = values[name], Self.isCurrent(stored: kept, incoming: incoming) {
            return node
        }
        node.isReference = false
        node.errors += errors
        node.insertionProblem = choice.insertionProblem
        node.identificationEntity = choice.identificationEntity
        if let dynamicBase = choice.dynamicBase { node.dynamicSource = (original, parent, self.reference(to: dynamicBase)) }
        // Later representations win (R-I5); a node read for the first time takes the values whole.
        if node.values.isEmpty { node.values = values } else { for (name, value) in values { node.values[name] = value } }
        for (index, relationshipMapping) in reference.mapping.relationships.enumerated() {
            let source = relationshipMapping.source.map { value(at: $0, in: representation, parent: parent) } ?? representation
            guard let source, let toMany = reference.relationshipIsToMany[index] else { continue }
            let relationshipPointer = relationshipMapping.source.map { Self.pointer(pointer, $0) } ?? pointer
            let known = destinationReference(of: reference, at: index)
            var destinations: [MappedNode]?
            switch source {
            case .null:
                destinations = nil
            case .array(let elements):
                if !toMany {
                    node.errors.append(.init(pointer: relationshipPointer, message: "an array where the to-one relationship '\(relationshipMapping.relationship)' expects one object"))
                    continue
                }
                // An array naming one destination twice holds it once (a to-many is a set, or an ordered set).
                var seen = Set<ObjectIdentifier>()
                destinations = []
                for (elementIndex, element) in elements.enumerated() where !element.isNull {
                    let destination = try read(element, mapping: relationshipMapping.mapping, known: known, parent: representation,
                                               pointer: relationshipPointer + "/" + String(elementIndex))
                    if seen.insert(ObjectIdentifier(destination)).inserted { destinations?.append(destination) }
                }
            default:
                destinations = [try read(source, mapping: relationshipMapping.mapping, known: known, parent: representation, pointer: relationshipPointer)]
            }
            node.relationships.removeAll { $0.mapping.relationship == relationshipMapping.relationship }
            node.relationships.append((relationshipMapping, destinations))
        }
        return node
    }

    /// What a representation missing an identity holds that its mapping does not read (as R-P17's drift
    /// finds it): usually the identity under another key (`id` for `identifier`), which the mapping, or on
    /// an entity's own payload route a `JSONKeyPath` annotation, must name. Empty when every key is read.
    static func unreadKeysHint(of representation: JSONValue, attribute: String, keys: RepresentationKeys) -> String {
        guard case .object(let object) = representation else { return "" }
        var unread: [String] = []
        keys.forEachUnread(in: object) { path, _ in unread.append(path) }
        guard !unread.isEmpty else { return "" }
        let listed = unread.prefix(5).map { "'\($0)'" }.joined(separator: ", ") + (unread.count > 5 ? " and \(unread.count - 5) more" : "")
        return "; keys the mapping does not read: \(listed) (if the identity is under one of them, map it to '\(attribute)' in the mapping's "
            + "attributes, or with a JSONKeyPath annotation on the attribute for the entity's own payload route)"
    }

    /// The shared reference of the mapping of `reference`'s relationship mapping at `index` when it reads
    /// representations as they are, found the first time (nil: each representation chooses its mapping).
    private mutating func destinationReference(of reference: MappingReference, at index: Int) -> MappingReference? {
        switch reference.destinations[index] {
        case .plain(let known): return known
        case .chosenPerRepresentation: return nil
        case .unknown:
            let mapping = reference.mapping.relationships[index].mapping
            guard MappingReference.readsAsItIs(mapping) else {
                reference.destinations[index] = .chosenPerRepresentation
                return nil
            }
            let known = self.reference(to: mapping)
            reference.destinations[index] = .plain(known)
            return known
        }
    }

    /// A top-level scalar (`{"results": 5}`) where the mapping does not take identity values: an invalid
    /// object, never a stub (inside a representation, R-P5 reads a scalar as an identity value).
    private mutating func scalarAtTopLevel(_ item: Selected, mapping base: EntityMapping) throws(CartographError) -> MappedNode {
        try count(pointer: item.pointer)
        let mapping = resolved(base)
        let node = MappedNode(mapping: reference(to: mapping), pointer: item.pointer, identity: nil, isReference: true)
        node.errors.append(.init(pointer: item.pointer, message: "expected an object representing \(mapping.entity), got \(DocumentProblems.describe(item.value)); "
                                    + "set identityReferences on the mapping to read top-level values as identities"))
        nodes.append(node)
        return node
    }

    /// Counts a representation against the engine's maximumObjects, and checks the time limit now and then.
    private mutating func count(pointer: String) throws(CartographError) {
        representationsRead += 1
        guard representationsRead <= engine.maximumObjects else {
            throw CartographError(.payloadTooLarge, "The payload has more than \(engine.maximumObjects) objects; split it into smaller payloads.",
                                  errors: [.init(pointer: pointer, message: "object \(representationsRead) is over the limit of \(engine.maximumObjects)")])
        }
        if representationsRead % 256 == 0 { try RequestDeadline.check() }
    }

    /// One attribute mapping's value in a representation, transformed and coerced (R-P3): nil when the
    /// source is missing or the value has a problem (added to `errors`), `.some(nil)` for null. A value
    /// read from the representation without a value transformer, of another JSON type than the attribute
    /// takes, is added to `typeDrift` (R-P17).
    /// `type` is the attribute's (nil when the entity has no such attribute: nothing is mapped).
    private func mappedValue(_ attributeMapping: AttributeMapping, type: AttributeType?, in representation: JSONValue, parent: JSONValue,
                             pointer: String, errors: inout [CartographError.Detail],
                             typeDrift: inout [ValueTypeDrift]) -> AttributeValue?? {
        guard let type, let raw = value(at: attributeMapping.source, in: representation, parent: parent) else { return nil }
        // Built only for an error or a drift: most values have none.
        var valuePointer: String { Self.pointer(pointer, attributeMapping.source) }
        if attributeMapping.transformer == nil, attributeMapping.source.root == .representation,
           let expected = Self.expectedJSONType(of: type, for: raw) {
            typeDrift.append(ValueTypeDrift(pointer: valuePointer, attribute: attributeMapping.attribute, expected: expected, found: raw.kindName))
        }
        do {
            var transformed = raw
            if let name = attributeMapping.transformer, !raw.isNull {
                let transformer = try engine.transformers.transformer(named: name)
                if type == .date, let milliseconds = try transformer.instant(raw) { return .some(.date(millisecondsSince1970: milliseconds)) }
                transformed = try transformer.transform(raw)
            }
            return .some(try AttributeValue.coerce(transformed, to: type))
        } catch let error as ValueTransformError {
            errors.append(.init(pointer: valuePointer, message: error.description))
        } catch let error as ValueCoercionError {
            errors.append(.init(pointer: valuePointer, message: error.message))
        } catch {
            errors.append(.init(pointer: valuePointer, message: "\(error)"))
        }
        return nil
    }

    /// The node already standing for this identity, or `node` registered as it.
    private mutating func intern(_ node: MappedNode) -> MappedNode {
        guard let identity = node.identity else {
            nodes.append(node)
            return node
        }
        let standing = standing(for: node, identity: identity)
        if standing !== node {
            readAheadMet = readAheadMet || standing.readAhead
            return standing
        }
        nodes.append(node)
        return node
    }

    /// Registers a node with an identity; false when one already stands for it.
    private mutating func register(_ node: MappedNode) -> Bool {
        guard let identity = node.identity, standing(for: node, identity: identity) === node else { return false }
        nodes.append(node)
        return true
    }

    /// The node registered for `identity` in `node`'s hierarchy, which is `node` when none was: one
    /// search of the identity either way (the default subscript inserts it in place).
    private mutating func standing(for node: MappedNode, identity: [AttributeValue]) -> MappedNode {
        func take(_ slot: inout MappedNode) -> MappedNode { slot }
        return take(&byIdentity[node.mappingReference.rootEntity, default: [:]][identity, default: node])
    }

    /// The value at a source key path (nil when a key is missing).
    func value(at keyPath: SourceKeyPath, in representation: JSONValue, parent: JSONValue) -> JSONValue? {
        // Most key paths name one member of the representation.
        if keyPath.root == .representation, keyPath.components.count == 1 {
            guard case .object(let object) = representation else { return nil }
            return object[keyPath.components[0]]
        }
        var value: JSONValue
        switch keyPath.root {
        case .representation: value = representation
        case .parent: value = parent
        case .root: value = root
        case .metadata: value = metadata
        }
        for (index, key) in keyPath.components.enumerated() {
            // Header names are case-insensitive.
            let lookup = keyPath.root == .metadata && index == 1 && keyPath.components.first == "header" ? key.lowercased() : key
            guard let next = value[lookup] else { return nil }
            value = next
        }
        return value
    }

    static func escape(_ key: String) -> String {
        guard key.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return key }
        return key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }

    static func pointer(_ base: String, _ keyPath: SourceKeyPath) -> String {
        keyPath.root == .representation ? base + keyPath.components.map { "/" + escape($0) }.joined() : base
    }

    // MARK: Phase 2: identify

    /// One lookup per (mapping entity, identification attributes, predicate) group (R-I1…R-I3).
    /// Nodes already identified are not looked up again.
    mutating func identify(in store: some MappingStore) throws(CartographError) {
        for group in identificationGroups(ahead: false).values {
            let first = group[0].mapping
            let found = try store.existingObjects(entity: group[0].identificationEntity, attributes: first.resolvedIdentificationAttributes,
                                                  identities: group.compactMap(\.identity), predicate: first.identificationPredicate?.checked, reading: nil)
            for node in group { node.existing = node.identity.flatMap { found[$0]?.first } }
        }
        try remapByStoredEntity(in: store)
    }

    /// `identify` before the write transaction, in the read snapshot the payload was read in (with two
    /// payloads posted at once, the other one's write runs meanwhile): each group's lookup notes the
    /// change feed's head it read at, and the transaction re-checks what it found
    /// (`MappingEngine.map(_ read:)`, `forgetChangedSince`). Identities the read-ahead found absent, nodes that a dynamic mapping
    /// may read again by the stored object's entity, and groups the snapshot cannot answer (a migration
    /// committed since) are left to the transaction.
    mutating func identifyAhead(in snapshot: some SnapshotLookup) throws(CartographError) {
        for group in identificationGroups(ahead: true).values {
            let first = group[0].mapping
            guard let (found, head) = try snapshot.existingObjectsAhead(entity: group[0].identificationEntity, attributes: first.resolvedIdentificationAttributes,
                                                                       identities: group.compactMap(\.identity), predicate: first.identificationPredicate?.checked) else {
                for node in group { node.identified = false }
                continue
            }
            for node in group { node.existing = node.identity.flatMap { found[$0]?.first } }
            identifiedAhead += group
            identifiedAheadAt = min(identifiedAheadAt ?? head, head)
        }
    }

    /// The nodes a lookup must identify, by identification group (R-I1…R-I3), marked identified; nodes
    /// whose identity the read-ahead found absent need none (`knownAbsent`). With `ahead` (see
    /// `identifyAhead`), those and the nodes of dynamic mappings are left unmarked.
    private func identificationGroups(ahead: Bool) -> [String: [MappedNode]] {
        var groups: [String: [MappedNode]] = [:]
        for node in nodes where !node.identified {
            guard let identity = node.identity, !ahead || node.dynamicSource == nil else { continue }
            let reference = node.mappingReference
            let key = node.identificationEntity == reference.mapping.entity ? reference.identificationGroup
                : Self.identificationGroup(entity: node.identificationEntity, mapping: reference.mapping)
            if knownAbsent[key]?.identities.contains(identity) == true {
                if !ahead { node.identified = true }
                continue
            }
            node.identified = true
            groups[key, default: []].append(node)
        }
        return groups
    }

    /// Nodes identified by one lookup: the same entity hierarchy, identification attributes and predicate.
    static func identificationGroup(entity: String, mapping: EntityMapping) -> String {
        "\(entity)|\(mapping.resolvedIdentificationAttributes.joined(separator: ","))|\(mapping.identificationPredicate?.format ?? "")"
    }

    /// R-P9 decides the entity only for inserts: a representation that a dynamic mapping or entity
    /// mapper read as one entity but that found a stored object of another is read again with the
    /// mapping for the stored object's entity — its dynamic case, or its annotation mapping (as
    /// Groot maps an existing object by its own entity's properties).
    private mutating func remapByStoredEntity(in store: some MappingStore) throws(CartographError) {
        var remapped = false
        for node in nodes {
            guard let source = node.dynamicSource, let existing = node.existing, existing.entity != node.entity,
                  let cases = source.base.mapping.dynamic?.cases else { continue }
            node.dynamicSource = nil
            let candidate = cases.first { $0.mapping.entity == existing.entity }?.mapping
                ?? (cases.contains { $0.mapping.isAnnotationReference }
                    ? .annotationReference(to: existing.entity, discardsInvalidObjectsOnInsert: source.base.mapping.discardsInvalidObjectsOnInsert)
                    : nil)
            guard var mapping = candidate.map({ resolved($0) }) else { continue }
            mapping.dynamic = nil
            _ = try read(source.representation, mapping: mapping, parent: source.parent, pointer: node.pointer)
            remapped = true
        }
        if remapped { try identify(in: store) }
    }
}

/// The identities of one identification group that a lookup before the read found no object for.
struct AbsentIdentities {
    /// The root entity of the hierarchy looked in.
    let root: String
    /// The identification attributes, in the order of each identity's values.
    let attributes: [String]
    /// Whether they were looked up with an identification predicate.
    let predicated: Bool
    var identities: Set<[AttributeValue]> = []
}
