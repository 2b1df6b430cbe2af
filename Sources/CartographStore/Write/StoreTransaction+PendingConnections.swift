// Late binding (R-C5): foreign-key connections that found nothing wait in the store until a matching
// destination arrives through any mapping. Each distinct target (destination entity, attributes,
// includesSubentities, destinationPredicate) is a row of a small table; each waiting (source,
// relationship, value) a row of the pending table, indexed by (target, value) — index names outside
// the `ix:` namespace that model migrations manage. An arriving object
// costs one indexed lookup per target that its entity can satisfy — never a scan of the sources.
public import CartographCore
public import CartographMapping

extension StoreTransaction {
    static let pendingTargetsTable = "_cartograph_pending_targets", pendingTable = "_cartograph_pending"

    /// The DDL of the late-binding tables (created with the store's other bookkeeping tables).
    static let pendingConnectionsSchema = """
        CREATE TABLE IF NOT EXISTS \(quoted(pendingTargetsTable)) (
            id INTEGER PRIMARY KEY, entity TEXT NOT NULL, attributes TEXT NOT NULL,
            includes_subentities INTEGER NOT NULL, predicate TEXT NOT NULL,
            UNIQUE (entity, attributes, includes_subentities, predicate));
        CREATE TABLE IF NOT EXISTS \(quoted(pendingTable)) (
            target INTEGER NOT NULL, value_key TEXT NOT NULL, source_id INTEGER NOT NULL,
            source_entity TEXT NOT NULL, relationship TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS "_cartograph_pending_by_target" ON \(quoted(pendingTable)) (target, value_key);
        CREATE INDEX IF NOT EXISTS "_cartograph_pending_by_source" ON \(quoted(pendingTable)) (source_id, relationship);
        """

    public func replacePendingConnections(source: Int64, sourceEntity: String, relationship: String,
                                          with pending: [PendingConnection]) throws(CartographError) {
        try pendingStore { () throws(SQLiteError) in
            // Nothing waits anywhere (the usual case): nothing to replace.
            if pending.isEmpty, try pendingTargets().isEmpty { return }
            try connection.run("DELETE FROM \(quoted(Self.pendingTable)) WHERE source_id = ? AND relationship = ?", [.integer(source), .text(relationship)])
            for connection in pending {
                let target = try targetID(connection.target)
                try self.connection.run("""
                    INSERT INTO \(quoted(Self.pendingTable)) (target, value_key, source_id, source_entity, relationship) VALUES (?, ?, ?, ?, ?)
                    """, [.integer(target), .text(Self.valueKey(connection.values)), .integer(source), .text(sourceEntity), .text(relationship)])
            }
        }
    }

    public func completeWaiting(sources: [Int64], sourceEntity: String, relationship: String, with destination: Int64) throws(CartographError) {
        try setToOne(sources, entity: sourceEntity, relationship: relationship, to: destination)
        try pendingStore { () throws(SQLiteError) in
            for start in stride(from: 0, to: sources.count, by: 500) {
                let chunk = sources[start..<min(start + 500, sources.count)]
                try connection.run("DELETE FROM \(quoted(Self.pendingTable)) WHERE relationship = ? AND source_id IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ", ")))",
                                   [.text(relationship)] + chunk.map { .integer($0) })
            }
        }
    }

    public func hasPendingConnections() throws(CartographError) -> Bool {
        try pendingStore { () throws(SQLiteError) -> Bool in try !pendingTargets().isEmpty }
    }

    public func pendingConnections(awaiting entity: String, values: [String: AttributeValue]) throws(CartographError) -> [PendingConnection] {
        let lineage = Set(model.lineage(of: entity).map(\.name))
        return try pendingStore { () throws(SQLiteError) -> [PendingConnection] in
            var found: [PendingConnection] = []
            for (target, id) in try pendingTargets() where lineage.contains(target.entity) && (target.includesSubentities || target.entity == entity) {
                let key = target.attributes.compactMap { values[$0] }
                guard key.count == target.attributes.count else { continue }
                let rows = try connection.rows("""
                    SELECT source_id, source_entity, relationship FROM \(quoted(Self.pendingTable)) WHERE target = ? AND value_key = ? ORDER BY source_id
                    """, [.integer(id), .text(Self.valueKey(key))])
                for row in rows {
                    guard let source = row[0].integerValue, let sourceEntity = row[1].textValue, let relationship = row[2].textValue else { continue }
                    found.append(PendingConnection(sourceID: source, sourceEntity: sourceEntity, relationship: relationship, target: target, values: key))
                }
            }
            return found.sorted { $0.sourceID < $1.sourceID }
        }
    }

    /// Forgets what a deleted object was waiting for.
    func removePendingConnections(of source: Int64) throws(SQLiteError) {
        guard try !pendingTargets().isEmpty else { return }
        try connection.run("DELETE FROM \(quoted(Self.pendingTable)) WHERE source_id = ?", [.integer(source)])
    }

    /// Targets by id, read once per transaction.
    private func pendingTargets() throws(SQLiteError) -> [PendingConnection.Target: Int64] {
        if let pendingTargetCache { return pendingTargetCache }
        var targets: [PendingConnection.Target: Int64] = [:]
        for row in try connection.rows("SELECT id, entity, attributes, includes_subentities, predicate FROM \(quoted(Self.pendingTargetsTable))") {
            guard let id = row[0].integerValue, let entity = row[1].textValue, let attributes = row[2].textValue,
                  let includes = row[3].integerValue, let predicate = row[4].textValue else { continue }
            targets[PendingConnection.Target(entity: entity, attributes: attributes.split(separator: ",").map(String.init),
                                             includesSubentities: includes != 0, predicate: predicate.isEmpty ? nil : predicate)] = id
        }
        pendingTargetCache = targets
        return targets
    }

    private func targetID(_ target: PendingConnection.Target) throws(SQLiteError) -> Int64 {
        if let id = try pendingTargets()[target] { return id }
        let inserted = try connection.rows("""
            INSERT INTO \(quoted(Self.pendingTargetsTable)) (entity, attributes, includes_subentities, predicate) VALUES (?, ?, ?, ?) RETURNING id
            """, [.text(target.entity), .text(target.attributes.joined(separator: ",")), .integer(target.includesSubentities ? 1 : 0),
                  .text(target.predicate ?? "")])
        guard let id = inserted.first?.first?.integerValue else { throw SQLiteError(code: .error, message: "no id for a pending-connection target", sql: "") }
        pendingTargetCache?[target] = id
        return id
    }

    /// Values as comparable text: the JSON form of values already coerced to the destination's types.
    static func valueKey(_ values: [AttributeValue]) -> String {
        JSONValue.array(values.map(\.jsonValue)).jsonText
    }

    private func pendingStore<T>(_ body: () throws(SQLiteError) -> T) throws(CartographError) -> T {
        do { return try body() } catch { throw CartographError.store(error, "Store write failed (pending connections)") }
    }
}
