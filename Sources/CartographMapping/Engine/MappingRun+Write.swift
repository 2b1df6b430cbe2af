// Phases 3 and 4 of a payload: decide and validate every object's final state (R-P7, R-P8), then
// write objects and their relationships (R-P4…R-P6) and count what happened (R-P12).
import Foundation
import CartographCore

extension MappingRun {
    // MARK: Phase 3: validate

    /// Applies `modificationAttribute` (R-P7), then checks each object's final state (R-P8). Invalid new
    /// objects are discarded where the mapping allows it; any other invalid object fails the payload.
    func validate(topLevel: [MappedNode], in store: some MappingStore) throws(CartographError) {
        let failures = try validationFailures(topLevel: topLevel, in: store)
        guard failures.isEmpty else { throw Self.invalidPayload(failures) }
    }

    /// The error a payload with invalid objects fails with.
    static func invalidPayload(_ failures: [CartographError.Detail]) -> CartographError {
        CartographError(.unprocessable, "The payload has \(failures.count) invalid value(s); nothing was stored.", errors: failures)
    }

    /// `validate` without the throw: the problems that fail the payload (discarded objects are marked).
    func validationFailures(topLevel: [MappedNode], in store: some MappingStore) throws(CartographError) -> [CartographError.Detail] {
        // A node read ahead is skipped already (R-P7 found it current before the read).
        for node in nodes where !node.readAhead {
            if let existing = node.existing, let name = node.mapping.modificationAttribute,
               let stored = existing.values[name], case .some(.some(let incoming)) = node.values[name] {
                node.skipped = Self.isCurrent(stored: stored, incoming: incoming)
            }
        }
        var pending = topLevel
        while let node = pending.popLast() {
            guard !node.reachable else { continue }
            node.reachable = true
            if !node.skipped { pending += node.relationships.flatMap { $0.destinations ?? [] } }
        }
        var failures: [CartographError.Detail] = []
        for node in nodes where node.reachable {
            if node.skipped { continue }
            var problems = node.errors
            if node.isNew, let problem = node.insertionProblem { problems.append(problem) }
            // A bare identity only finds (or stubs) its object and writes nothing to it, so stubs stay exempt
            // until a full representation maps onto them — also when a later payload names them again.
            if !node.isReference {
                problems += try finalStateProblems(of: node, in: store)
                try RequestDeadline.check()  // a regex constraint gives up at the deadline as no match
            }
            // R-P17: a drifting object fails the payload under `freeze`; under `discardObject` a new one is
            // dropped (listed in `discarded`) and a stored one left as it is.
            if !node.driftProblems.isEmpty {
                switch node.mapping.contract {
                case .evolve:
                    break
                case .freeze:
                    problems += node.driftProblems
                case .discardObject:
                    if node.isNew {
                        node.discarded = true
                        node.errors = node.driftProblems + problems
                    } else {
                        node.skipped = true
                    }
                    continue
                }
            }
            guard !problems.isEmpty else { continue }
            if node.isNew && node.mapping.discardsInvalidObjectsOnInsert {
                node.discarded = true
                node.errors = problems  // listed in `discarded`
            } else if !isRepeatedShared(node) {
                // A shared object's copy in a later chunk had these problems in the chunk that listed them first.
                failures += problems
            }
        }
        return failures
    }

    /// R-P7 as RestKit's code compares: strings skip when equal, numbers and dates when stored >= incoming.
    static func isCurrent(stored: AttributeValue, incoming: AttributeValue) -> Bool {
        switch (stored, incoming) {
        case (.string(let a), .string(let b)): a == b
        case (.date(let a), .date(let b)): a >= b
        case (.integer(let a), .integer(let b)): a >= b
        case (.decimal(let a), .decimal(let b)): a >= b
        case (.double(let a), .double(let b)): a >= b
        default: stored == incoming
        }
    }

    /// The values an object will have once written: stored (or defaults) overlaid with the mapped ones.
    func finalValues(of node: MappedNode) -> [String: AttributeValue] {
        var values = node.existing?.values ?? defaults(of: node.entity)
        if node.existing != nil, node.mapping.assignsDefaultValueForMissingAttributes {
            for (name, value) in defaults(of: node.existing?.entity ?? node.entity) where node.values[name] == nil { values[name] = value }
        }
        if !node.values.isEmpty { values.reserveCapacity(values.count + node.values.count) }
        for (name, value) in node.values { values[name] = value }
        return values
    }

    /// The model defaults of an entity's attributes (R-P4).
    func defaults(of entity: String) -> [String: AttributeValue] { tables.defaults(of: entity) }

    private func finalStateProblems(of node: MappedNode, in store: some MappingStore) throws(CartographError) -> [CartographError.Detail] {
        let entity = node.existing?.entity ?? node.entity
        // Most entities check nothing (optional, unconstrained attributes): then no final state is built.
        let checked = tables.checkedAttributes(of: entity)
        let values = checked.isEmpty ? [:] : finalValues(of: node)
        var problems: [CartographError.Detail] = []
        for attribute in checked {
            // Built only for a problem: most attributes have none.
            var at: String {
                node.values[attribute.name] != nil
                    ? Self.pointer(node.pointer, node.mapping.attributes.first { $0.attribute == attribute.name }?.source ?? SourceKeyPath(components: [attribute.name]))
                    : node.pointer
            }
            guard let value = values[attribute.name] else {
                if !attribute.optional { problems.append(.init(pointer: at, message: "'\(attribute.name)' is required")) }
                continue
            }
            problems += AttributeConstraints.violations(of: value, attribute: attribute, regexes: tables).map { .init(pointer: at, message: $0) }
        }
        // Only constrained relationships are counted: counting a large to-many (an author's articles)
        // for every object would make each payload cost more as the store grows. Connected ones are
        // checked once connections have run.
        let connected = Set(node.mapping.connections.map(\.relationship))
        for relationship in tables.relationships(of: entity) where Self.isCounted(relationship) && !connected.contains(relationship.name) {
            let assignment = node.relationships.first { $0.mapping.relationship == relationship.name }
            var count: Int
            switch assignment {
            case nil:
                count = try node.existing.map { (existing) throws(CartographError) in
                    try store.destinationIDs(of: existing.id, entity: existing.entity, relationship: relationship.name).count
                } ?? 0
            case let (mapping, destinations)?:
                count = destinations?.count ?? 0
                if mapping.assignmentPolicy == .union, let existing = node.existing {
                    count += try store.destinationIDs(of: existing.id, entity: existing.entity, relationship: relationship.name).count
                }
            }
            let at = assignment.flatMap { $0.mapping.source }.map { Self.pointer(node.pointer, $0) } ?? node.pointer
            problems += Self.countProblems(relationship, count: count).map { .init(pointer: at, message: $0) }
        }
        return problems
    }

    /// Whether R-P8 counts a relationship's destinations at all.
    static func isCounted(_ relationship: Relationship) -> Bool {
        !relationship.optional || relationship.minCount != nil || relationship.maxCount != nil
    }

    /// R-P8 on a relationship holding `count` destinations.
    static func countProblems(_ relationship: Relationship, count: Int) -> [String] {
        var problems: [String] = []
        if !relationship.optional, count == 0 { problems.append("'\(relationship.name)' is required") }
        if let minimum = relationship.minCount, count < minimum, count > 0 || !relationship.optional {
            problems.append("'\(relationship.name)' needs at least \(minimum) object(s), has \(count)")
        }
        if let maximum = relationship.maxCount, relationship.toMany, count > maximum {
            problems.append("'\(relationship.name)' allows at most \(maximum) object(s), has \(count)")
        }
        return problems
    }

    // MARK: Phase 4: write

    /// Inserts and updates every object, then assigns mapped relationships with their policies.
    mutating func write(progress: ((String, Int, Int) -> Void)? = nil, into store: some MappingStore) throws(CartographError) {
        // Stored objects written so far: a second node finding the same object (by other identification
        // attributes) compares with what the first wrote, which only the store knows.
        var updated = Set<Int64>()
        for (index, node) in nodes.enumerated() where node.reachable && !node.discarded {
            if index % 1000 == 0 {
                progress?("objects", index, nodes.count)
                try RequestDeadline.check()
            }
            if let existing = node.existing {
                node.id = existing.id
                guard !node.skipped else { continue }
                // A dynamic case of a sub-entity may name attributes the stored object's entity lacks (R-P9: it is updated in place).
                var values = existing.entity == node.entity ? node.values : node.values.filter { model.attribute($0.key, of: existing.entity) != nil }
                if node.mapping.assignsDefaultValueForMissingAttributes {
                    for attribute in tables.attributes(of: existing.entity) where values[attribute.name] == nil {
                        values[attribute.name] = .some(defaults(of: existing.entity)[attribute.name])
                    }
                }
                // Values equal to the stored ones, read when the object was identified, write nothing: no
                // need to ask the store, which would read the row again to compare.
                let isFirstWrite = updated.insert(existing.id).inserted
                if isFirstWrite, !(existing.isStub && !node.isReference), values.allSatisfy({ existing.values[$0.key] == $0.value }) { continue }
                // The first write compares with the object as identified; a later one with what the first wrote.
                if try store.updateObject(id: existing.id, entity: existing.entity, values: values, clearStub: !node.isReference,
                                          stored: isFirstWrite ? existing : nil) {
                    node.changed = true
                }
            } else {
                // The defaults, copied once with room for the mapped values; an explicit null removes one (R-P4).
                var values = defaults(of: node.entity)
                values.reserveCapacity(values.count + node.values.count)
                for (name, value) in node.values { values[name] = value }
                node.id = try store.insertObject(entity: node.entity, values: values, stub: node.isReference,
                                                 toOne: toOneWrittenWithInsert(of: node))
                result.inserted += 1
            }
        }
        progress?("objects", nodes.count, nodes.count)
        let takenLater = destinationsTakenLater()
        for (index, node) in nodes.enumerated() where node.reachable && !node.discarded && !node.skipped {
            if index % 1000 == 0 { progress?("relationships", index, nodes.count) }
            guard let id = node.id else { continue }
            let entity = node.existing?.entity ?? node.entity
            for (mapping, destinations) in node.relationships {
                guard let relationship = model.relationship(mapping.relationship, of: entity) else { continue }
                var new = (destinations ?? []).filter { !$0.discarded }.compactMap(\.id)
                let old = try store.destinationIDs(of: id, entity: entity, relationship: mapping.relationship)
                if let taken = takenLater[index]?[mapping.relationship] {
                    // One this object holds already stays (the later one takes it from it, as it always did).
                    let held = Set(old)
                    new.removeAll { taken.contains($0) && !held.contains($0) }
                }
                var target = new
                if mapping.assignmentPolicy == .union { target = old + new.filter { !old.contains($0) } }
                guard target != old else { continue }
                // False when the store holds these already (the same set in another order): nothing changed.
                guard try store.setDestinations(of: id, entity: entity, relationship: mapping.relationship, from: old, to: target) else { continue }
                node.changed = true
                if mapping.assignmentPolicy == .replace {
                    for orphan in old where !target.contains(orphan) {
                        droppedDestinations.append((orphan, entity, mapping.relationship, relationship.destination, node.pointer))
                    }
                }
            }
        }
    }

    /// R-P6 replace: deletes the destinations dropped from a relationship (`droppedDestinations`) that no
    /// object holds through it any more, once the whole payload's relationships are written (a later
    /// object of the payload, in a later chunk too, may still take one).
    mutating func deleteDroppedDestinations(in store: some MappingStore) throws(CartographError) {
        var considered = Set<Int64>()
        for orphan in droppedDestinations where considered.insert(orphan.id).inserted {
            // A label removed from one issue stays on the others: only one no object holds any more goes.
            guard try !store.isReferenced(orphan.id, through: orphan.relationship, of: orphan.entity) else { continue }
            try delete(orphan.id, entity: orphan.destination, pointer: orphan.pointer,
                       reason: "no longer in '\(orphan.relationship)' of any object (assignmentPolicy replace)", in: store)
        }
        droppedDestinations = []
    }

    /// A to-many relationship whose inverse is to-one holds a destination for one source only: written in
    /// payload order, each source naming it takes it from the one before, and the last one keeps it. These
    /// are, by node index and relationship, the destinations a later node of the payload takes. Left out of
    /// an earlier node's write (unless that object holds one already: the later one takes it from it, as
    /// before), the final state is the same and a destination moves at most once, to the source that ends
    /// up holding it — so a payload posted again, whose last sources hold their destinations already,
    /// writes nothing (issue 29: RestKit's benchmark payload names most children under several parents,
    /// and moved each of them from parent to parent on every re-post).
    /// A relationship whose inverse the payload also maps (from the destinations' side) is left as it is:
    /// there the order of the two sides' writes decides.
    private func destinationsTakenLater() -> [Int: [String: Set<Int64>]] {
        /// A to-many and its to-one inverse, by the root of the destinations' entity (no string built per node).
        struct Pair: Hashable { let root: String, toMany: String, toOne: String }
        let written = nodes.indices.filter { nodes[$0].reachable && !nodes[$0].discarded && !nodes[$0].skipped && nodes[$0].id != nil }
        // By pair: each destination's last source, and the earlier sources that named it.
        var last: [Pair: [Int64: Int]] = [:]
        var earlier: [Pair: [(node: Int, relationship: String, destination: Int64)]] = [:]
        for index in written {
            let node = nodes[index], entity = node.existing?.entity ?? node.entity
            for (mapping, destinations) in node.relationships {
                guard let relationship = model.relationship(mapping.relationship, of: entity), relationship.toMany,
                      let inverse = relationship.inverse, model.relationship(inverse, of: relationship.destination)?.toMany == false else { continue }
                let pair = Pair(root: tables.root(of: relationship.destination), toMany: relationship.name, toOne: inverse)
                for destination in destinations ?? [] where !destination.discarded {
                    guard let id = destination.id else { continue }
                    if let previous = last[pair, default: [:]].updateValue(index, forKey: id), previous != index {
                        earlier[pair, default: []].append((previous, mapping.relationship, id))
                    }
                }
            }
        }
        // Most payloads name each destination once: only then are the to-one sides the payload maps looked for.
        guard !earlier.isEmpty else { return [:] }
        var mappedFromDestinations = Set<Pair>()
        for index in written {
            let node = nodes[index], entity = node.existing?.entity ?? node.entity
            for (mapping, _) in node.relationships {
                guard let relationship = model.relationship(mapping.relationship, of: entity), !relationship.toMany,
                      let inverse = relationship.inverse else { continue }
                mappedFromDestinations.insert(Pair(root: tables.root(of: entity), toMany: inverse, toOne: relationship.name))
            }
        }
        var taken: [Int: [String: Set<Int64>]] = [:]
        for (pair, claims) in earlier where !mappedFromDestinations.contains(pair) {
            guard let owners = last[pair] else { continue }
            for claim in claims where owners[claim.destination] != claim.node {
                taken[claim.node, default: [:]][claim.relationship, default: []].insert(claim.destination)
            }
        }
        return taken
    }

    /// The to-one destinations a new object's row can be inserted with: connections resolved before the
    /// write, and mapped destinations whose `_id` is known already (stored, or inserted earlier in the
    /// payload). The relationship pass then finds them written; the others it writes after the insert.
    private func toOneWrittenWithInsert(of node: MappedNode) -> [String: Int64] {
        var toOne: [String: Int64] = [:]
        for resolution in node.preconnected { toOne[resolution.relationship.name] = resolution.destinations.first }
        for (mapping, destinations) in node.relationships {
            guard let destinations, destinations.count == 1, !destinations[0].discarded,
                  let id = destinations[0].id ?? destinations[0].existing?.id,
                  model.relationship(mapping.relationship, of: node.entity)?.toMany == false else { continue }
            toOne[mapping.relationship] = id
        }
        return toOne
    }

    /// Deletes a stored object through the delete rules, counting it and what cascaded (R-D2, R-D3).
    mutating func delete(_ id: Int64, entity: String, pointer: String, reason: @autoclosure () -> String,
                         in store: some MappingStore) throws(CartographError) {
        let key = trace != nil ? try store.key(ofObject: id, entity: entity) ?? .null : .null
        let count = try store.deleteObject(id: id, entity: entity)
        guard count > 0 else { return }
        result.deleted += count
        try record(pointer: pointer, entity: entity, key: key, action: "delete", reason: reason())
    }

    // MARK: Result

    /// Why an identified object was updated or left unchanged, for the explain trace (R-P13).
    private static func reason(for node: MappedNode, foundAs id: Int64) -> String {
        let found = "found _id \(id) by \(node.mapping.resolvedIdentificationAttributes.joined(separator: ", "))"
        if node.skipped {
            return "\(found); its \(node.mapping.modificationAttribute ?? "modification attribute") is not older than the payload's"
        }
        return node.changed ? "\(found); values or relationships changed" : "\(found); every mapped value is equal"
    }

    /// Counts every object the payload touched and lists the top-level ones (R-P12, R-P13).
    /// - Parameter cursor: the top-level mapping's `cursor` attribute (R-P16), whose greatest value among
    ///   the top-level objects written or found (not discarded) the result keeps.
    mutating func summarize(topLevel: [(node: MappedNode, pointer: String)], cursor: String?,
                            in store: some MappingStore) throws(CartographError) -> MappingResult {
        // A shared object a chunk before this one mapped was counted and listed there (see `repeatedShared`).
        for node in nodes where node.reachable && !isRepeatedShared(node) {
            if node.discarded {
                try record(pointer: node.pointer, entity: node.entity, key: Self.key(of: node), action: "discard",
                           reason: node.errors.map(\.message).joined(separator: "; "))
            } else if let existing = node.existing {
                let updated = !node.skipped && node.changed
                if updated { result.updated += 1 } else { result.unchanged += 1 }
                // The reason is only written out for an explain trace.
                try record(pointer: node.pointer, entity: existing.entity, key: Self.key(of: node), action: updated ? "update" : "unchanged",
                           reason: Self.reason(for: node, foundAs: existing.id))
            } else {
                let why = node.identity == nil ? "the mapping has no identification attributes" : "no stored object has this identity"
                try record(pointer: node.pointer, entity: node.entity, key: Self.key(of: node), action: "insert",
                           reason: node.isReference ? "\(why): inserted as a stub" : why)
            }
        }
        for node in nodes where node.reachable && node.discarded && !isRepeatedShared(node) {
            result.discarded.append(.object(JSONObject([
                ("pointer", .string(node.pointer)), ("entity", .string(node.entity)),
                ("key", Self.key(of: node)),
                ("errors", .array(node.errors.map { .object(JSONObject([("pointer", .string($0.pointer)), ("message", .string($0.message))])) })),
            ])))
        }
        for (node, _) in topLevel { list(try listedObject(of: node, cursor: cursor, in: store)) }
        result.explain = trace
        return result
    }

    /// A top-level representation's entry in `objects` (R-P12).
    struct ListedObject {
        let entity: String
        let key: JSONValue
        let discarded: Bool
        /// The object's `_id` and identity when `key` was read from the store (see `listedByStoredKey`).
        let storedKeyOf: (id: Int64, identity: JSONValue)?
    }

    /// The entry `objects` lists for a top-level representation mapped to `node`; the payload's cursor
    /// moves past its value (R-P16).
    mutating func listedObject(of node: MappedNode, cursor: String?, in store: some MappingStore) throws(CartographError) -> ListedObject {
        let entity = node.existing?.entity ?? node.entity
        guard let id = node.id else { return ListedObject(entity: entity, key: Self.key(of: node), discarded: true, storedKeyOf: nil) }
        if let cursor, case .some(.some(let value)) = node.values[cursor] {
            result.cursorValue = MappingCursor.greater(result.cursorValue, value)
        }
        // The identity is the key when the mapping identifies by the entity's key attributes (no read);
        // an object the payload then deleted (R-D1) is named by its identity. Asked once per mapping and
        // entity in turn (the top level is mostly one of each).
        let reference = ObjectIdentifier(node.mappingReference)
        if lastIdentifiesByKey?.reference != reference || lastIdentifiesByKey?.entity != entity {
            lastIdentifiesByKey = (reference, entity, node.mapping.resolvedIdentificationAttributes == tables.keyAttributes(of: entity))
        }
        let identity = Self.key(of: node)
        guard node.identity == nil || lastIdentifiesByKey?.answer != true else {
            return ListedObject(entity: entity, key: identity, discarded: false, storedKeyOf: nil)
        }
        let key = try store.key(ofObject: id, entity: entity) ?? identity
        return ListedObject(entity: entity, key: key, discarded: false, storedKeyOf: key == identity ? nil : (id, identity))
    }

    /// Appends `entry` to `objects`.
    mutating func list(_ entry: ListedObject) {
        if let (id, identity) = entry.storedKeyOf { listedByStoredKey?.append((result.listedObjects, id, entry.entity, identity)) }
        result.appendObject(entity: entry.entity, key: entry.key, discarded: entry.discarded)
    }

    /// The key a node has, from its identity (also for discarded objects, which have no `_id`).
    static func key(of node: MappedNode) -> JSONValue {
        guard let identity = node.identity else { return .null }
        return identity.count == 1 ? identity[0].jsonValue : .array(identity.map(\.jsonValue))
    }
}
