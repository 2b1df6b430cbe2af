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
    /// lock for both): the write re-checks every object changed after it. Nil until a lookup found the
    /// writer at `model`.
    private(set) var snapshotHead: Int64?

    init(store: ModelStore, model: Model) {
        self.store = store
        self.model = model
    }

    /// After a migration committed mid-read this finds nothing: harmless, as the write transaction then
    /// maps the payload again from the start under the new model (`ingest`).
    func firstObjects(entity: String, attributes: [String], identities: [[AttributeValue]],
                      predicate: CheckedPredicate?, reading: [String]) throws(CartographError) -> FirstObjects {
        try store.readOnWriter(ifModelIs: model) { (reader) throws(CartographError) -> FirstObjects in
            let found = try reader.findFirst(entity: entity, attributes: attributes, identities: identities, predicate: predicate, reading: reading)
            if snapshotHead == nil {
                do { snapshotHead = try ChangeFeed.head(reader.connection) } catch { throw CartographError.store(error, "Cannot read the change feed") }
            }
            return found
        } ?? FirstObjects(count: identities.count, width: reading.count)
    }
}

extension ModelStore {
    /// The read-ahead lookup for a payload read with `model`. It takes the write lock only when it looks
    /// something up; a migration committed since `model` was published makes it find nothing.
    func readAheadLookup(for model: Model) -> ReadAheadLookup { ReadAheadLookup(store: self, model: model) }

    /// Runs `body` in a read transaction on the writer connection, under the write lock. Nil when the
    /// writer's model is not `model` (a migration committed since the payload's model was published).
    fileprivate func readOnWriter<T>(ifModelIs model: Model, _ body: (ObjectReader) throws(CartographError) -> T) throws(CartographError) -> T? {
        let writer = self.writer
        return try writeLock.withLock { () throws(CartographError) -> T? in
            guard let current = writer.model, current.version == model.version else { return nil }
            let connection = writer.connection
            do { try connection.control("BEGIN") } catch { throw CartographError.store(error, "Cannot start a read") }
            defer { try? connection.control("COMMIT") }
            return try body(ObjectReader(connection: connection, layout: writer.layout(for: current)))
        }
    }
}
