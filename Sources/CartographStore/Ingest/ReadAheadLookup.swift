// R-P7's read-ahead lookup (docs/mapping.md, "Re-loads"): a payload's identities and modification values
// looked up before its write transaction, on the writer connection when no write holds it, on a pooled
// reader's otherwise; then the identification of its objects in the same way (`MappingRun.identifyAhead`).
//
// Why the writer's connection first: SQLite drops a connection's whole page cache when it begins a read
// after another connection committed, so a reader re-reads every index and table page of each payload's
// lookup from the OS (one pread each, ~7% of a re-load's CPU), while the writer's cache survives its own
// commits. Why not wait for it: with two payloads posted at once, the other one's write holds the lock
// for tens of milliseconds, and a lookup waiting behind it left a core idle (b's first load: 19 ms of
// waiting per payload against a 0.4 ms lookup, the lock free a quarter of the time). Either snapshot
// serves: the write re-checks every object changed after the feed head read with it.
import CartographCore
import CartographPredicate
import CartographMapping

final class ReadAheadLookup: SnapshotLookup {
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
        try store.readAhead(ifModelIs: model) { (reader) throws(CartographError) -> FirstObjects in
            let found = try reader.findFirst(entity: entity, attributes: attributes, identities: identities, predicate: predicate, reading: reading)
            if snapshotHead == nil {
                do { snapshotHead = try ChangeFeed.head(reader.connection) } catch { throw CartographError.store(error, "Cannot read the change feed") }
            }
            return found
        } ?? FirstObjects(count: identities.count, width: reading.count)
    }

    func existingObjectsAhead(entity: String, attributes: [String], identities: [[AttributeValue]], predicate: CheckedPredicate?)
        throws(CartographError) -> (found: [[AttributeValue]: [ExistingObject]], head: Int64)? {
        try store.readAhead(ifModelIs: model) { (reader) throws(CartographError) -> (found: [[AttributeValue]: [ExistingObject]], head: Int64) in
            let found = try reader.findAll(entity: entity, attributes: attributes, identities: identities, predicate: predicate)
            do { return (found, try ChangeFeed.head(reader.connection)) } catch { throw CartographError.store(error, "Cannot read the change feed") }
        }
    }
}

extension ModelStore {
    /// The read-ahead lookup for a payload read with `model`. It takes the write lock only when it looks
    /// something up; a migration committed since `model` was published makes it find nothing.
    func readAheadLookup(for model: Model) -> ReadAheadLookup { ReadAheadLookup(store: self, model: model) }

    /// Runs `body` in a read transaction on the writer connection if no write holds it, on a pooled
    /// reader's otherwise. Nil when the snapshot's model is not `model` (a migration committed since the
    /// payload's model was published).
    fileprivate func readAhead<T>(ifModelIs model: Model, _ body: (ObjectReader) throws(CartographError) -> T) throws(CartographError) -> T? {
        let writer = self.writer
        // Outer optional: whether the lock was free; inner: whether the model was still `model`.
        let onWriter = try writeLock.withLockIfAvailable { () throws(CartographError) -> T? in
            guard let current = writer.model, current.version == model.version else { return nil }
            let connection = writer.connection
            do { try connection.control("BEGIN") } catch { throw CartographError.store(error, "Cannot start a read") }
            defer { try? connection.control("COMMIT") }
            return try body(ObjectReader(connection: connection, layout: writer.layout(for: current)))
        }
        if let onWriter { return onWriter }
        return try read { (reader) throws(CartographError) -> T? in
            reader.model.version == model.version ? try body(reader.reader) : nil
        }
    }
}

