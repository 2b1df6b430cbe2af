// Mapping documents, kept in their model's file: deleting the model deletes them, and a migration and
// the mappings it may invalidate are never out of step on disk. Validation is the caller's (it needs the
// mapping language); the store keeps the normalized document.
public import CartographCore
import Synchronization

extension ModelStore {

    /// Stores (or replaces) a mapping document; true when it was created.
    public func putMapping(name: String, document: JSONValue) throws(CartographError) -> Bool {
        touchLastUsed()
        let writer = self.writer
        return try writeLock.withLock { () throws(CartographError) -> Bool in
            do {
                let existing = try writer.connection.rows("SELECT document FROM \(quoted(Self.mappingsTable)) WHERE name = ?", [.text(name)]).first?.first
                try writer.connection.transaction { () throws(SQLiteError) in
                    try writer.connection.run("INSERT OR REPLACE INTO \(quoted(Self.mappingsTable)) (name, document) VALUES (?, ?)",
                                              [.text(name), .text(document.jsonText)])
                    // R-P16: a cursor kept for another attribute or scope says nothing of the new one.
                    let previous = existing?.textValue.flatMap { try? JSONReader().parse($0) }
                    if previous?["cursor"] != document["cursor"] { try CursorTable.drop(mapping: name, writer.connection) }
                    // R-P17: what drifted from the old document may be what the new one reads.
                    if previous != document { try DriftTable.drop(mapping: name, writer.connection) }
                    // R-P18: another document keeps the archive (replaying it through a fixed mapping is its
                    // point); a document without one forgets it, or nothing would ever delete its rows.
                    if document["archive"] == nil || document["archive"] == .null { try ArchiveTables.drop(mapping: name, writer.connection) }
                }
                let existed = existing != nil
                remeasure(writer.connection)
                return !existed
            } catch { throw CartographError.store(error, "Cannot store mapping '\(name)'") }
        }
    }

    /// Deletes a mapping, its snapshot sessions, its cursors, its drift and its archive (a mapping registered later under the name starts
    /// with none); false when there was none.
    public func deleteMapping(name: String) throws(CartographError) -> Bool {
        let writer = self.writer
        return try writeLock.withLock { () throws(CartographError) -> Bool in
            do {
                let deleted = try writer.connection.transaction { () throws(SQLiteError) -> Bool in
                    try writer.connection.run("DELETE FROM \(quoted(Self.mappingsTable)) WHERE name = ?", [.text(name)])
                    let deleted = writer.connection.changes > 0
                    try SnapshotSessionTables.drop(mapping: name, writer.connection)
                    try CursorTable.drop(mapping: name, writer.connection)
                    try DriftTable.drop(mapping: name, writer.connection)
                    try ArchiveTables.drop(mapping: name, writer.connection)
                    return deleted
                }
                remeasure(writer.connection)
                return deleted
            } catch { throw CartographError.store(error, "Cannot delete mapping '\(name)'") }
        }
    }

    /// The stored mapping documents by name (all, or the one named).
    public func mappings(named name: String? = nil) throws(CartographError) -> [(name: String, document: JSONValue)] {
        let texts = try read { (reader) throws(CartographError) in try reader.mappingTexts(named: name) }
        return texts.map { ($0.name, parsedMappingDocument($0.text)) }
    }

    /// How many parsed mapping documents a store keeps.
    static let parsedMappingDocumentLimit = 16

    /// A stored document's text, parsed: every payload reads its mapping's text from the store (so it
    /// maps with the mapping registered now) but parses it once while the text stays the same.
    private func parsedMappingDocument(_ text: String) -> JSONValue {
        if let kept = parsedMappingDocuments.withLock({ $0[text] }) { return kept }
        let document = StoreReader.mappingDocument(text)
        parsedMappingDocuments.withLock { (kept) in
            if kept.count >= Self.parsedMappingDocumentLimit { kept.removeAll() }
            kept[text] = document
        }
        return document
    }

    /// The 404 for a mapping this model does not have, naming the closest one and the model's mappings.
    public func unknownMapping(_ name: String) -> CartographError {
        (try? read { (reader) throws(CartographError) in try reader.unknownMapping(name) })
            ?? CartographError(.notFound, "No mapping '\(name)' in model '\(self.name)'.")
    }
}

extension StoreReader {
    /// The mapping documents stored in this snapshot by name (all, or the one named).
    public func mappings(named name: String? = nil) throws(CartographError) -> [(name: String, document: JSONValue)] {
        try mappingTexts(named: name).map { ($0.name, Self.mappingDocument($0.text)) }
    }

    /// A stored mapping document's text, parsed (the store wrote it: it parses).
    static func mappingDocument(_ text: String) -> JSONValue { (try? JSONReader().parse(text)) ?? .null }

    /// The texts of the mapping documents stored in this snapshot by name (all, or the one named).
    func mappingTexts(named name: String? = nil) throws(CartographError) -> [(name: String, text: String)] {
        let sql = "SELECT name, document FROM \(quoted(ModelStore.mappingsTable))" + (name == nil ? "" : " WHERE name = ?") + " ORDER BY name"
        do {
            return try reader.connection.rows(sql, name.map { [.text($0)] } ?? []).map { row in (row[0].textValue ?? "", row[1].textValue ?? "null") }
        } catch { throw CartographError.store(error, "Cannot read mappings") }
    }

    /// `No mapping 'evnts' in model 'm'; did you mean 'events'? (mappings: events, users). Register one with
    /// PUT …/mappings/evnts.`: a name that is no typo may be a mapping not registered yet.
    func unknownMapping(_ name: String) throws(CartographError) -> CartographError {
        CartographError(.notFound, "No mapping '\(name)' in model '\(model.name)'"
            + NameSuggestion.hint(for: name, among: try mappingTexts().map(\.name), kind: "mappings")
            + ". Register one with PUT …/models/\(model.name)/mappings/\(name) (docs/mapping.md).")
    }
}
