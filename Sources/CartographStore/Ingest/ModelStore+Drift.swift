// Schema drift kept per mapping (R-P17, docs/mapping.md "Drift and contracts"): each path at which a
// committed payload drifted from the mapping, with when it was first and last seen, how often, and the
// first pointer that showed it. Recorded in the payload's own write transaction, so a dry run or a refused
// payload leaves nothing; registering the mapping again with another document, or deleting it, forgets it.
public import CartographCore
public import CartographMapping

/// One path at which a mapping's committed payloads drifted: as a payload's answer lists it (its count
/// over every payload), and when it was first and last seen.
public struct StoredDrift: Sendable, Equatable {
    public let drift: MappingResult.Drift
    /// When the transactions that first and last showed it started (the store's clock), milliseconds since 1970.
    public let firstSeen: Int64
    public let lastSeen: Int64
}

/// The table drift lives in, one row per (mapping, path, kind).
enum DriftTable {
    static let name = "_cartograph_drift"

    /// Created when any store opens (IF NOT EXISTS: stores made before drift was kept get it too).
    static let schema = """
        CREATE TABLE IF NOT EXISTS \(quoted(name)) (
            mapping TEXT NOT NULL, path TEXT NOT NULL, kind TEXT NOT NULL, first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,
            count INTEGER NOT NULL, example TEXT NOT NULL, PRIMARY KEY (mapping, path, kind)) WITHOUT ROWID;
        """

    /// `unread`, or `type` with the JSON types expected and found, as the row's `kind`.
    static func text(_ kind: MappingResult.Drift.Kind) -> String {
        switch kind {
        case .unread: "unread"
        case .type(let expected, let found): "type:\(expected):\(found)"
        }
    }

    static func kind(_ text: String) -> MappingResult.Drift.Kind? {
        if text == "unread" { return .unread }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "type" else { return nil }
        return .type(expected: String(parts[1]), found: String(parts[2]))
    }

    /// Forgets a mapping's drift: the mapping is deleted, or registered again with another document.
    static func drop(mapping: String, _ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.run("DELETE FROM \(quoted(name)) WHERE mapping = ?", [.text(mapping)])
    }
}

extension StoreTransaction {
    /// Adds a payload's drift to what mapping `name` has seen.
    func recordDrift(mapping name: String, _ drift: [MappingResult.Drift]) throws(CartographError) {
        let now = startedAt.millisecondsSince1970
        do {
            for entry in drift {
                try connection.run("""
                    INSERT INTO \(quoted(DriftTable.name)) (mapping, path, kind, first_seen, last_seen, count, example) VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (mapping, path, kind) DO UPDATE SET last_seen = excluded.last_seen, count = count + excluded.count
                    """, [.text(name), .text(entry.path), .text(DriftTable.text(entry.kind)), .integer(now), .integer(now),
                          .integer(Int64(entry.count)), .text(entry.example)])
            }
        } catch { throw CartographError.store(error, "Cannot keep the drift of mapping '\(name)'") }
    }
}

extension ModelStore {
    /// The drift mapping `name`'s committed payloads showed, first seen first.
    public func drift(mapping name: String) throws(CartographError) -> [StoredDrift] {
        try read { (reader) throws(CartographError) -> [StoredDrift] in
            let rows: [[SQLiteValue]]
            do {
                rows = try reader.reader.connection.rows(
                    "SELECT path, kind, first_seen, last_seen, count, example FROM \(quoted(DriftTable.name)) WHERE mapping = ? ORDER BY first_seen, path, kind",
                    [.text(name)])
            } catch { throw CartographError.store(error, "Cannot read the drift of mapping '\(name)'") }
            return rows.compactMap { row -> StoredDrift? in
                guard let path = row[0].textValue, let kind = row[1].textValue.flatMap(DriftTable.kind), let example = row[5].textValue else { return nil }
                return StoredDrift(drift: MappingResult.Drift(path: path, kind: kind, example: example, count: Int(row[4].integerValue ?? 0)),
                                   firstSeen: row[2].integerValue ?? 0, lastSeen: row[3].integerValue ?? 0)
            }
        }
    }
}
