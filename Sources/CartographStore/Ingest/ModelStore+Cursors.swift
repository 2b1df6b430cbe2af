// Incremental cursors (R-P16, docs/mapping.md "Incremental cursors"): the greatest value of a mapping's
// `cursor` attribute among the objects of its committed payloads, per the values of the query parameters
// of its scope. Raised in the payload's own write transaction, so what a fetcher reads back is exactly
// where the last committed payload ended — after a crash too, and never past a dry run or a rolled-back one.
public import CartographCore
public import CartographMapping
import Foundation

/// One scope's cursor: the query parameters' values it is kept per (in the cursor's `scope` order; nil
/// for a parameter the payload did not carry), the greatest value committed, and when.
public struct StoredCursor: Sendable, Equatable {
    public let scope: [String?]
    public let value: AttributeValue
    /// When the transaction that last raised it started (the store's clock), milliseconds since 1970.
    public let updatedAt: Int64
}

/// The table the cursors live in, one row per (mapping, attribute, scope).
enum CursorTable {
    static let name = "_cartograph_cursors"

    /// Created when any store opens (IF NOT EXISTS: stores made before cursors get it too). `scope` is the
    /// JSON array of the scope's values; `value` is stored as the attribute's values are (`ValueStorage`).
    static let schema = """
        CREATE TABLE IF NOT EXISTS \(quoted(name)) (
            mapping TEXT NOT NULL, attribute TEXT NOT NULL, scope TEXT NOT NULL, value NOT NULL, updated_at INTEGER NOT NULL,
            PRIMARY KEY (mapping, attribute, scope)) WITHOUT ROWID;
        """

    /// The scope's values in the payload's metadata (`@metadata.query.<name>`), as the row's key.
    static func scopeValues(of cursor: MappingCursor, metadata: JSONValue) -> [String?] {
        cursor.scope.map { metadata["query"]?[$0]?.stringValue }
    }

    static func key(_ values: [String?]) -> String {
        JSONValue.array(values.map { $0.map(JSONValue.string) ?? .null }).jsonText
    }

    /// Forgets a mapping's cursors: the mapping is deleted, or registered again with another cursor.
    static func drop(mapping: String, _ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.run("DELETE FROM \(quoted(name)) WHERE mapping = ?", [.text(mapping)])
    }
}

extension StoreTransaction {
    /// Raises the cursor of mapping `name` (of `entity`) for the scope `metadata` gives to `value`, unless
    /// it holds a greater one already.
    func advanceCursor(mapping name: String, entity: String, cursor: MappingCursor, value: AttributeValue,
                       metadata: JSONValue) throws(CartographError) {
        let scope = CursorTable.key(CursorTable.scopeValues(of: cursor, metadata: metadata))
        let type = model.attribute(cursor.attribute, of: entity)?.type
        do {
            let stored = try connection.rows("SELECT value FROM \(quoted(CursorTable.name)) WHERE mapping = ? AND attribute = ? AND scope = ?",
                                             [.text(name), .text(cursor.attribute), .text(scope)]).first?.first
            let current = stored.flatMap { stored in type.flatMap { ValueStorage.attributeValue(stored, type: $0) } }
            if let current, MappingCursor.greater(current, value) == current { return }
            try connection.run("INSERT OR REPLACE INTO \(quoted(CursorTable.name)) (mapping, attribute, scope, value, updated_at) VALUES (?, ?, ?, ?, ?)",
                               [.text(name), .text(cursor.attribute), .text(scope), ValueStorage.sqlite(value),
                                .integer(Int64((startedAt.timeIntervalSince1970 * 1000).rounded()))])
        } catch { throw CartographError.store(error, "Cannot keep the cursor of mapping '\(name)'") }
    }
}

extension ModelStore {
    /// The cursors of mapping `name` (of `entity`) whose scope has the values `matching` gives (by the
    /// scope's parameter names; a name it does not give matches any value), ordered by scope.
    public func cursors(mapping name: String, entity: String, cursor: MappingCursor,
                        matching: [String: String] = [:]) throws(CartographError) -> [StoredCursor] {
        try read { (reader) throws(CartographError) -> [StoredCursor] in
            guard let type = reader.model.attribute(cursor.attribute, of: entity)?.type else { return [] }
            let rows: [[SQLiteValue]]
            do {
                rows = try reader.reader.connection.rows(
                    "SELECT scope, value, updated_at FROM \(quoted(CursorTable.name)) WHERE mapping = ? AND attribute = ? ORDER BY scope",
                    [.text(name), .text(cursor.attribute)])
            } catch { throw CartographError.store(error, "Cannot read the cursor of mapping '\(name)'") }
            return rows.compactMap { row -> StoredCursor? in
                guard let scopeText = row[0].textValue, let scope = (try? JSONReader().parse(scopeText))?.arrayValue,
                      let value = ValueStorage.attributeValue(row[1], type: type) else { return nil }
                let values = scope.map(\.stringValue)
                guard zip(cursor.scope, values).allSatisfy({ name, value in matching[name].map { $0 == value } ?? true }) else { return nil }
                return StoredCursor(scope: values, value: value, updatedAt: row[2].integerValue ?? 0)
            }
        }
    }
}
