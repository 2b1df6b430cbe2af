// Phases 5 and 6 of a payload, after every object is written: connections (R-C1…R-C5), then deletion
// predicates and snapshots (R-D1, R-D5). Both see the store as the payload left it, so order inside
// a payload never matters and objects stored by earlier payloads count.
import CartographCore
import CartographPredicate

extension MappingRun {
    // MARK: Phase 5: connect

    /// Foreign-key connections, then key-path connections (so `user.organization` sees a connected
    /// `user`), then connections of earlier payloads waiting for the objects this one wrote (R-C5),
    /// then R-P8 on the connected relationships.
    mutating func connect(in store: some MappingStore) throws(CartographError) {
        let sources = nodes.filter { $0.reachable && !$0.discarded && !$0.skipped && $0.id != nil && !$0.mapping.connections.isEmpty }
        var runs: [(node: MappedNode, connection: ConnectionDescription)] = []
        var predicateChecks: [String: (predicate: CheckedPredicate, ids: [Int64])] = [:]
        for node in sources {
            for connection in node.mapping.connections where model.relationship(connection.relationship, of: entity(of: node)) != nil {
                runs.append((node, connection))
                if let predicate = connection.sourcePredicate, let id = node.id {
                    predicateChecks[predicate.checked.entityName + "|" + predicate.format, default: (predicate.checked, [])].ids.append(id)
                }
            }
        }
        // R-C3: sourcePredicate decides whether a connection runs; one query per predicate.
        var passing: [String: Set<Int64>] = [:]
        for (key, check) in predicateChecks {
            passing[key] = Set(try store.objects(matching: check.predicate, among: check.ids).map(\.id))
        }
        runs.removeAll { run in
            guard let predicate = run.connection.sourcePredicate, let id = run.node.id else { return false }
            return passing[predicate.checked.entityName + "|" + predicate.format]?.contains(id) != true
        }
        // Connections resolved before the write (`preconnect`) only record what they wait for.
        for node in sources { for resolution in node.preconnected { try apply(resolution, preconnected: true, in: store) } }
        let foreignKeys = runs.filter { run in
            guard case .foreignKey = run.connection.kind else { return false }
            return !run.node.preconnected.contains { $0.connection == run.connection }
        }
        for resolution in try resolveForeignKeys(foreignKeys, in: store) { try apply(resolution, preconnected: false, in: store) }
        for (node, connection) in runs {
            guard case .keyPath(let steps) = connection.kind, let id = node.id else { continue }
            try connectByKeyPath(node, id: id, connection: connection, steps: steps, in: store)
        }
        try completePendingConnections(in: store)
        var failures: [CartographError.Detail] = []
        for (node, connection) in runs {
            guard let id = node.id, let relationship = model.relationship(connection.relationship, of: entity(of: node)),
                  Self.isCounted(relationship) else { continue }
            let count = try store.destinationIDs(of: id, entity: entity(of: node), relationship: relationship.name).count
            failures += Self.countProblems(relationship, count: count).map { .init(pointer: node.pointer, message: $0 + " after connecting") }
        }
        guard failures.isEmpty else {
            throw CartographError(.unprocessable, "The payload has \(failures.count) invalid relationship(s) after connecting; nothing was stored.", errors: failures)
        }
    }

    private func entity(of node: MappedNode) -> String { node.existing?.entity ?? node.entity }

    /// A foreign-key connection resolved for one source object (R-C2).
    struct ForeignKeyResolution {
        let node: MappedNode
        let connection: ConnectionDescription
        let relationship: Relationship
        let pairs: [ConnectionDescription.AttributePair]
        let target: PendingConnection.Target
        let destinations: [Int64]
        /// Values that found nothing and wait for a later payload (R-C5).
        let waiting: [[AttributeValue]]
    }

    /// R-C2: one batched lookup per destination (the target a waiting connection would also name) for
    /// the whole payload.
    private func resolveForeignKeys(_ runs: [(node: MappedNode, connection: ConnectionDescription)],
                                    in store: some MappingStore) throws(CartographError) -> [ForeignKeyResolution] {
        var candidates: [(run: (node: MappedNode, connection: ConnectionDescription), relationship: Relationship,
                          pairs: [ConnectionDescription.AttributePair], target: PendingConnection.Target, tuples: [[AttributeValue]])] = []
        var lookups: [PendingConnection.Target: (predicate: CheckedPredicate?, identities: Set<[AttributeValue]>)] = [:]
        for run in runs {
            guard case .foreignKey(let pairs) = run.connection.kind,
                  let relationship = model.relationship(run.connection.relationship, of: entity(of: run.node)) else { continue }
            let tuples = try sourceTuples(of: run.node, pairs: pairs, destination: relationship.destination)
            let target = PendingConnection.Target(entity: relationship.destination, attributes: pairs.map(\.destination),
                                                  includesSubentities: run.connection.includesSubentities,
                                                  predicate: run.connection.destinationPredicate?.format)
            candidates.append((run, relationship, pairs, target, tuples))
            lookups[target, default: (run.connection.destinationPredicate?.checked, [])].identities.formUnion(tuples)
        }
        var found: [PendingConnection.Target: [[AttributeValue]: [ExistingObject]]] = [:]
        for (target, query) in lookups where !query.identities.isEmpty {
            // Only ids and entities are needed: no values are decoded.
            found[target] = try store.existingObjects(entity: target.entity, attributes: target.attributes,
                                                      identities: Array(query.identities), predicate: query.predicate, reading: [])
        }
        return candidates.map { candidate in
            let (run, relationship, target) = (candidate.run, candidate.relationship, candidate.target)
            var matched: [Int64] = []
            var waiting: [[AttributeValue]] = []
            for tuple in candidate.tuples {
                let objects = (found[target]?[tuple] ?? []).filter { target.includesSubentities || $0.entity == target.entity }
                if objects.isEmpty { waiting.append(tuple) }
                matched += objects.map(\.id)
            }
            let destinations = relationship.toMany ? Array(Set(matched)).sorted() : matched.min().map { [$0] } ?? []
            return ForeignKeyResolution(
                node: run.node, connection: run.connection, relationship: relationship, pairs: candidate.pairs,
                target: target, destinations: destinations,
                // R-C5: what found nothing waits for its destination (a to-one only while it has none).
                waiting: relationship.toMany || destinations.isEmpty ? waiting : [])
        }
    }

    /// Records what a resolved connection waits for and assigns its destinations (unless the insert
    /// already wrote them: `preconnected`).
    private mutating func apply(_ resolution: ForeignKeyResolution, preconnected: Bool, in store: some MappingStore) throws(CartographError) {
        let node = resolution.node
        guard let id = node.id else { return }
        let relationship = resolution.relationship
        // A new object waits for nothing yet: only what it waits for now needs writing.
        if !(node.isNew && resolution.waiting.isEmpty) {
            try store.replacePendingConnections(
                source: id, sourceEntity: entity(of: node), relationship: relationship.name,
                with: resolution.waiting.map {
                    PendingConnection(sourceID: id, sourceEntity: entity(of: node), relationship: relationship.name, target: resolution.target, values: $0)
                })
        }
        func reason() -> String {
            let pairs = resolution.pairs.map { $0.source == $0.destination ? $0.source : "\($0.source) -> \($0.destination)" }.joined(separator: ", ")
            let waiting = resolution.waiting.isEmpty ? "" : ", \(resolution.waiting.count) value(s) waiting for a later payload"
            return "connected by \(pairs): \(resolution.destinations.count) match(es)\(waiting)"
        }
        if preconnected {
            try record(pointer: node.pointer, entity: entity(of: node), key: Self.key(of: node), action: "connect",
                       reason: "'\(relationship.name)' \(reason()) (written with the insert)")
        } else {
            try assign(resolution.destinations, to: relationship, of: node, id: id, in: store, reason: reason())
        }
    }

    /// Before the write phase: a new object's to-one foreign-key connection whose destinations can
    /// only be objects stored before this payload (no object of the destination's hierarchy is in it,
    /// and no sourcePredicate needs the written object) is resolved now, so the insert writes the
    /// relationship with the row instead of updating it afterwards. The result is the same as
    /// connecting after the write.
    mutating func preconnect(in store: some MappingStore) throws(CartographError) {
        var payloadRoots = Set<String>()
        var lastEntity: String?
        for node in nodes where node.reachable && node.entity != lastEntity {
            // Runs of one entity (most of a payload) add their root once.
            payloadRoots.insert(tables.root(of: node.entity))
            lastEntity = node.entity
        }
        var runs: [(node: MappedNode, connection: ConnectionDescription)] = []
        for node in nodes where node.reachable && !node.discarded && node.isNew {
            for connection in node.mapping.connections where connection.sourcePredicate == nil {
                guard case .foreignKey = connection.kind, let relationship = model.relationship(connection.relationship, of: node.entity),
                      !relationship.toMany, !payloadRoots.contains(tables.root(of: relationship.destination)) else { continue }
                runs.append((node, connection))
            }
        }
        guard !runs.isEmpty else { return }
        for resolution in try resolveForeignKeys(runs, in: store) { resolution.node.preconnected.append(resolution) }
    }

    /// The destination-typed value tuples a source object connects by: every pair must match (AND),
    /// a collection value matches any of its members (OR). Empty when a value is nil (R-C2).
    private func sourceTuples(of node: MappedNode, pairs: [ConnectionDescription.AttributePair],
                              destination: String) throws(CartographError) -> [[AttributeValue]] {
        // The mapped values, else the stored or default ones (computed only when a pair needs them).
        lazy var stored = finalValues(of: node)
        var tuples: [[AttributeValue]] = [[]]
        for pair in pairs {
            let mapped: AttributeValue?? = node.values[pair.source]
            guard let value = mapped ?? stored[pair.source], let type = model.attribute(pair.destination, of: destination)?.type else { return [] }
            let coerced: [AttributeValue]
            if case .json(.array(let elements)) = value {
                coerced = elements.compactMap { try? AttributeValue.coerce($0, to: type) }
            } else if value.fits(type) {
                coerced = [value]  // already the destination's type: no round trip through JSON
            } else {
                coerced = (try? AttributeValue.coerce(value.jsonValue, to: type)).map { [$0] } ?? []
            }
            tuples = tuples.flatMap { prefix in coerced.map { prefix + [$0] } }
            if tuples.count > Self.maximumConnectionValues {
                throw CartographError(.unprocessable, "A connection has more than \(Self.maximumConnectionValues) value combinations.",
                                      errors: [.init(pointer: node.pointer, message: "'\(pair.source)' and the other connectedBy values combine to more than \(Self.maximumConnectionValues) candidates")])
            }
        }
        return Array(Set(tuples))
    }

    static var maximumConnectionValues: Int { 10_000 }

    /// What a foreign-key connection looks for: destinations in a hierarchy, by some of their attributes.
    struct ForeignKeyTarget: Hashable {
        let root: String
        let attributes: [String]
    }

    /// For `MappingEngine.streamingPlan`: the values `node`'s foreign-key connections will look for, by
    /// target, read from its representation alone; nil when one reads a value the representation does
    /// not hold (the stored one, unknown before the transaction) or names too many.
    func foreignKeyLookups(of node: MappedNode) -> [(target: ForeignKeyTarget, tuples: [[AttributeValue]])]? {
        var lookups: [(target: ForeignKeyTarget, tuples: [[AttributeValue]])] = []
        for connection in node.mapping.connections {
            guard case .foreignKey(let pairs) = connection.kind,
                  let relationship = model.relationship(connection.relationship, of: node.entity) else { continue }
            guard pairs.allSatisfy({ node.values[$0.source] != nil }),
                  let tuples = try? sourceTuples(of: node, pairs: pairs, destination: relationship.destination) else { return nil }
            lookups.append((ForeignKeyTarget(root: tables.root(of: relationship.destination), attributes: pairs.map(\.destination)), tuples))
        }
        return lookups
    }

    /// R-C4: follows `steps` from the source object; the result is assigned.
    private mutating func connectByKeyPath(_ node: MappedNode, id: Int64, connection: ConnectionDescription, steps: [String],
                                           in store: some MappingStore) throws(CartographError) {
        guard let relationship = model.relationship(connection.relationship, of: entity(of: node)) else { return }
        var frontier: [(id: Int64, entity: String)] = [(id, entity(of: node))]
        for step in steps {
            var next: [(id: Int64, entity: String)] = []
            var seen = Set<Int64>()
            for object in frontier {
                guard let hop = model.relationship(step, of: object.entity) else { continue }
                for destination in try store.destinationIDs(of: object.id, entity: object.entity, relationship: step) where seen.insert(destination).inserted {
                    next.append((destination, hop.destination))
                }
            }
            frontier = next
        }
        let destinations = relationship.toMany ? frontier.map(\.id) : frontier.prefix(1).map(\.id)
        try assign(destinations, to: relationship, of: node, id: id, in: store,
                   reason: "connected by key path \(steps.joined(separator: ".")): \(destinations.count) object(s)")
    }

    private mutating func assign(_ destinations: [Int64], to relationship: Relationship, of node: MappedNode, id: Int64,
                                 in store: some MappingStore, reason: @autoclosure () -> String) throws(CartographError) {
        // A new object's relationship is empty unless the payload mapped it.
        let current = node.isNew && !node.relationships.contains(where: { $0.mapping.relationship == relationship.name }) ? []
            : try store.destinationIDs(of: id, entity: entity(of: node), relationship: relationship.name)
        let changed = relationship.toMany ? Set(current) != Set(destinations) : current != destinations
        if changed {
            try store.setDestinations(of: id, entity: entity(of: node), relationship: relationship.name, from: current, to: destinations)
            node.changed = true
        }
        guard trace != nil else { return }
        let text = "'\(relationship.name)' \(reason())\(changed ? "" : " (unchanged)")"
        try record(pointer: node.pointer, entity: entity(of: node), key: Self.key(of: node), action: "connect", reason: text)
    }

    /// R-C5: each object this payload inserted or changed completes the connections of earlier
    /// payloads waiting for it — one indexed lookup per object and waiting target.
    private mutating func completePendingConnections(in store: some MappingStore) throws(CartographError) {
        guard try store.hasPendingConnections() else { return }
        var destinationPredicates: [String: CheckedPredicate] = [:]
        var updatedSources = Set<Int64>()
        let payloadNodes = Dictionary(nodes.compactMap { node in node.id.map { ($0, node) } }, uniquingKeysWith: { first, _ in first })
        let arrivals = nodes.filter { $0.reachable && !$0.discarded && ($0.isNew || $0.changed) && $0.id != nil }.sorted { $0.id! < $1.id! }
        for node in arrivals {
            guard let id = node.id else { continue }
            // To-one sources of one relationship complete together: one statement each, not one per source.
            var toOne: [[String]: [Int64]] = [:]
            for pending in try store.pendingConnections(awaiting: entity(of: node), values: finalValues(of: node)) {
                guard let relationship = model.relationship(pending.relationship, of: pending.sourceEntity) else { continue }
                if let format = pending.target.predicate {
                    let predicate: CheckedPredicate
                    if let cached = destinationPredicates[format] { predicate = cached } else {
                        // A predicate that no longer fits a migrated model matches nothing.
                        guard let checked = try? CheckedPredicate(format: format, entity: pending.target.entity, model: model) else { continue }
                        destinationPredicates[format] = checked
                        predicate = checked
                    }
                    guard try !store.objects(matching: predicate, among: [id]).isEmpty else { continue }
                }
                if relationship.toMany {
                    let current = try store.destinationIDs(of: pending.sourceID, entity: pending.sourceEntity, relationship: relationship.name)
                    guard !current.contains(id) else { continue }
                    try store.setDestinations(of: pending.sourceID, entity: pending.sourceEntity, relationship: relationship.name, from: current, to: current + [id])
                } else {
                    toOne[[pending.sourceEntity, relationship.name], default: []].append(pending.sourceID)
                }
                if let source = payloadNodes[pending.sourceID] {
                    source.changed = true
                } else if updatedSources.insert(pending.sourceID).inserted {
                    result.updated += 1
                }
                let sourceKey = trace == nil ? .null : try store.key(ofObject: pending.sourceID, entity: pending.sourceEntity) ?? .null
                let reason = "'\(relationship.name)' completed by this \(entity(of: node)) (late binding of an earlier payload's connection)"
                try record(pointer: node.pointer, entity: pending.sourceEntity, key: sourceKey, action: "connect", reason: reason)
            }
            for (group, sources) in toOne {
                try store.completeWaiting(sources: sources, sourceEntity: group[0], relationship: group[1], with: id)
            }
        }
    }

    // MARK: Phase 6: deletion predicates and snapshots

    /// R-D1 for every mapping the payload used, then R-D5 for the top-level mapping.
    mutating func applyDeletions(of topLevel: EntityMapping, in store: some MappingStore) throws(CartographError) {
        for predicate in deletionPredicates(of: topLevel) {
            for object in try store.objects(matching: predicate.checked, among: nil) {
                try delete(object.id, entity: object.entity, pointer: "", reason: "matches the deletionPredicate \(predicate.format)", in: store)
            }
        }
        guard let snapshot = topLevel.deleteMissing else { return }
        let mentioned = mentionedInEarlierChunks.union(nodes.compactMap(\.id))
        if engine.defersDeleteMissing {
            // A page of a snapshot session: its completion deletes, keeping what every page mentioned.
            result.mentionedIDs = mentioned
            return
        }
        try deleteMissing(snapshot, keeping: mentioned, listedBy: .payload, in: store)
    }
}
