// R-P7's read-ahead lookup (docs/mapping.md, "Re-loads"): a payload's identities and modification values
// looked up before its write transaction, on the writer connection, holding the write lock only for the
// lookup itself.
//
// Why the writer's connection and not a pooled reader's: SQLite drops a connection's whole page cache
// when it begins a read after another connection committed, so a reader re-read every index and table
// page of each payload's lookup from the OS (one pread each, ~7% of a re-load's CPU), while the writer's
// cache survives its own commits. The lookup is a few milliseconds per thousand objects; the parse before
// it and the reading after it still run beside another payload's write.
import CartographCore
import CartographPredicate
import CartographMapping

final class ReadAheadLookup: MappingLookup {
    let store: ModelStore
    /// The model the payload is read with.
    let model: Model
    /// The change feed's head at the first lookup, read in the same read transaction (one turn of the
    /// lock for both): the write re-checks every object changed after it.
    private var head: Int64?

    init(store: ModelStore, model: Model) {
        self.store = store
        self.model = model
    }

    /// Objects found by identity. After a migration committed mid-read this finds none: harmless, as the
    /// write transaction then maps the payload again from the start under the new model (`ingest`).
    func existingObjects(entity: String, attributes: [String], identities: [[AttributeValue]],
                         predicate: CheckedPredicate?, reading: [String]?) throws(CartographError) -> [[AttributeValue]: [ExistingObject]] {
        try lookUp { (reader) throws(CartographError) in
            try reader.findAll(entity: entity, attributes: attributes, identities: identities, predicate: predicate, reading: reading)
        } ?? [:]
    }

    /// As `existingObjects`, by position (R-P7's read-ahead of the top-level representations).
    func firstObjects(entity: String, attributes: [String], identities: [[AttributeValue]],
                      predicate: CheckedPredicate?, reading: [String]) throws(CartographError) -> FirstObjects {
        try lookUp { (reader) throws(CartographError) in
            try reader.findFirst(entity: entity, attributes: attributes, identities: identities, predicate: predicate, reading: reading)
        } ?? FirstObjects(count: identities.count, width: reading.count)
    }

    /// The head at the first lookup; without one (nothing to look up, or the model moved), the head now.
    func changeFeedHead() throws(CartographError) -> Int64 {
        if let head { return head }
        let now = try store.readOnWriter(ifModelIs: nil) { (reader) throws(CartographError) in try Self.head(reader) }
        return now ?? 0
    }

    /// `body` on the writer under the write lock, if the writer's model is still `model`; the first
    /// lookup also reads the feed's head.
    private func lookUp<T>(_ body: (ObjectReader) throws(CartographError) -> T) throws(CartographError) -> T? {
        try store.readOnWriter(ifModelIs: model) { (reader) throws(CartographError) -> T in
            let found = try body(reader)
            if head == nil { head = try Self.head(reader) }
            return found
        }
    }

    private static func head(_ reader: ObjectReader) throws(CartographError) -> Int64 {
        do { return try ChangeFeed.head(reader.connection) } catch { throw CartographError.store(error, "Cannot read the change feed") }
    }
}

extension ModelStore {
    /// The read-ahead lookup for a payload read with `model`. It takes the write lock only when it looks
    /// something up; a migration committed since `model` was published makes it find nothing.
    func readAheadLookup(for model: Model) -> ReadAheadLookup { ReadAheadLookup(store: self, model: model) }

    /// Runs `body` in a read transaction on the writer connection, under the write lock. Nil when the
    /// writer's model is not `model` (a migration committed since the payload's model was published);
    /// with no `model`, whatever the writer's is.
    fileprivate func readOnWriter<T>(ifModelIs model: Model?, _ body: (ObjectReader) throws(CartographError) -> T) throws(CartographError) -> T? {
        let writer = self.writer
        return try writeLock.withLock { () throws(CartographError) -> T? in
            guard let current = writer.model, model == nil || current.version == model?.version else { return nil }
            let connection = writer.connection
            do { try connection.control("BEGIN") } catch { throw CartographError.store(error, "Cannot start a read") }
            defer { try? connection.control("COMMIT") }
            return try body(ObjectReader(connection: connection, layout: writer.layout(for: current)))
        }
    }
}
