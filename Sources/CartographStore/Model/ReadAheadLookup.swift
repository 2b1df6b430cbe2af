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

struct ReadAheadLookup: MappingLookup {
    let store: ModelStore
    /// The model the payload is read with.
    let model: Model
    /// The change feed's head when the lookup was made, read with the check that the writer's model is
    /// `model` (one turn of the lock): the objects are looked up later, which is only more careful (the
    /// write re-checks every object changed after this head).
    let head: Int64

    /// Objects found by identity. After a migration committed mid-read this finds none: harmless, as the
    /// write transaction then maps the payload again from the start under the new model (`ingest`).
    func existingObjects(entity: String, attributes: [String], identities: [[AttributeValue]],
                         predicate: CheckedPredicate?, reading: [String]?) throws(CartographError) -> [[AttributeValue]: [ExistingObject]] {
        try store.readOnWriter(ifModelIs: model) { (reader) throws(CartographError) in
            try reader.findAll(entity: entity, attributes: attributes, identities: identities, predicate: predicate, reading: reading)
        } ?? [:]
    }

    /// As `existingObjects`, by position (R-P7's read-ahead of the top-level representations).
    func firstObjects(entity: String, attributes: [String], identities: [[AttributeValue]],
                      predicate: CheckedPredicate?, reading: [String]) throws(CartographError) -> [ExistingObject?] {
        try store.readOnWriter(ifModelIs: model) { (reader) throws(CartographError) in
            try reader.findFirst(entity: entity, attributes: attributes, identities: identities, predicate: predicate, reading: reading)
        } ?? Array(repeating: nil, count: identities.count)
    }

    func changeFeedHead() -> Int64 { head }
}

extension ModelStore {
    /// The read-ahead lookup for a payload read with `model`; nil when the writer has moved to a later
    /// model since `model` was published (a migration committed: the payload is read without a read-ahead).
    func readAheadLookup(for model: Model) throws(CartographError) -> ReadAheadLookup? {
        let head = try readOnWriter(ifModelIs: model) { (reader) throws(CartographError) -> Int64 in
            do { return try ChangeFeed.head(reader.connection) } catch { throw CartographError.store(error, "Cannot read the change feed") }
        }
        return head.map { ReadAheadLookup(store: self, model: model, head: $0) }
    }

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
