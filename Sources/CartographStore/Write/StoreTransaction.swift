// The write side of a store, used inside one `ModelStore.write` transaction: insert, update, set
// relationships (keeping inverses consistent), delete with delete rules (R-D2), and the set of
// touched objects from which the change feed is written at commit (R-D3, R-D4).
import Foundation
public import CartographCore
public import CartographPredicate
public import CartographMapping

/// One write transaction. Not Sendable: it lives inside the store's writer lock.
public final class StoreTransaction {
    let connection: SQLiteConnection
    let layout: StoreLayout
    /// The time of day the write began, read once from the store's clock: its tombstones, its snapshot
    /// session's use and its Idempotency-Key are stamped with it.
    let startedAt: Date
    var nextID: Int64
    /// Objects changed in this transaction, in first-touch order, with their entity.
    private(set) var touched = TouchedObjects()
    /// The objects of `touched` that existed before the transaction.
    private var touchedIDs: Set<Int64> = []
    /// Deleted objects with the key they had (for tombstones).
    private(set) var deleted: [(id: Int64, entity: String, key: JSONValue)] = []
    /// The first id this transaction assigns: objects from it on were inserted here, so deleting
    /// one leaves no tombstone (no reader ever saw it).
    let firstNewID: Int64
    private(set) var deletedIDs: Set<Int64> = []
    /// Objects inserted here whose relationship storage, on either side, something wrote since. The
    /// others inserted here are bare: every relationship of theirs is empty but the to-ones their row was
    /// inserted with, so reading one needs no query (most of a payload's new objects are asked for their
    /// old destinations right after they are inserted).
    private var writtenSinceInsert: IDBitSet
    /// The to-one destinations bare objects' rows were inserted with, for those that have any; past
    /// `maxKeptObjects` such objects, a new one counts as written (read with a query).
    private var insertedToOnes: [Int64: [String: Int64]] = [:]
    /// Forward join-table destinations written here, in order, by object and relationship: writing one
    /// replaces all of its rows, so the list is exact until a write from the other side (which drops
    /// it). Relationship reads use it instead of a query. Kept for `maxKeptObjects` objects only: a huge
    /// payload must not hold every list twice.
    private(set) var writtenJoinDestinations: [Int64: [String: [Int64]]] = [:]
    /// (16,384 lists are a few MiB; a payload of 200,000 objects must not hold tens of MiB here.)
    static let maxKeptObjects = 16_384
    /// Late-binding targets by id (R-C5), loaded on first use.
    var pendingTargetCache: [PendingConnection.Target: Int64]?
    /// The digests of the identification values written here (`WrittenIdentities`), which the store's
    /// `IdentityWriteLog` keeps once committed; nil once there are more than it keeps of one commit (a
    /// large payload must not hold them: 200,000 tiny objects' took 0.7x their body).
    private(set) var identityDigests: [Int]? = []
    /// The change feed's head before this transaction's entries (set by `ChangeFeed.record`).
    var feedHeadBefore: Int64?

    /// Where the store keeps what its commits wrote to identification attributes (nil: nowhere).
    let identityLog: IdentityWriteLog?

    init(connection: SQLiteConnection, layout: StoreLayout, startedAt: Date, nextID: Int64, identityLog: IdentityWriteLog? = nil) {
        self.identityLog = identityLog
        self.connection = connection
        self.layout = layout
        self.startedAt = startedAt
        self.nextID = nextID
        self.firstNewID = nextID
        self.writtenSinceInsert = IDBitSet(base: nextID)
    }

    public var model: Model { layout.model }
    var reader: ObjectReader { ObjectReader(connection: connection, layout: layout) }

    /// Records that object `id` changed. An object inserted here was recorded by `insert` (its first
    /// touch), so only objects that existed before the transaction need the set.
    func touch(_ id: Int64, _ entity: String) {
        guard id < firstNewID else { return }
        if touchedIDs.insert(id).inserted { record(id, entity) }
    }

    /// A write that touches this many objects has its page cache cut to `ModelStore.largeWriteCacheKiB`
    /// from then on: its dirty pages spill to the write-ahead log (still uncommitted, so R-P11 holds)
    /// instead of filling 32 MiB, so a payload's memory stays bounded whatever its size (issue 14:
    /// a 200,000-object payload's peak fell from 8.9x to 7.7x its body at 4 MiB, and to 5.7x at 2 MiB).
    static let largeWriteObjects = 10_000

    private func record(_ id: Int64, _ entity: String) {
        touched.append(id, entity)
        if touched.count == Self.largeWriteObjects { try? connection.execute("PRAGMA cache_size = \(ModelStore.largeWriteCacheKiB)") }
    }

    private func recordIdentity(_ digest: Int) {
        guard identityDigests != nil else { return }
        if identityDigests?.count == IdentityWriteLog.maximumDigests { return identityDigests = nil }
        identityDigests?.append(digest)
    }

    private func sqlite<T>(_ body: () throws(SQLiteError) -> T) throws(CartographError) -> T {
        do { return try body() } catch { throw CartographError.store(error, "Store write failed") }
    }

    // MARK: Objects

    /// Inserts a new object of the concrete `entity` and returns its `_id`.
    /// `toOne` sets to-one relationships (name -> destination `_id`) with the row where their
    /// foreign key is their only storage, and through `setRelationship` otherwise.
    public func insert(entity: String, values: [String: AttributeValue], stub: Bool = false,
                       toOne: [String: Int64] = [:]) throws(CartographError) -> Int64 {
        guard let declared = model.entity(named: entity) else { throw CartographError(.unprocessable, "Unknown entity '\(entity)'.") }
        guard !declared.abstract else { throw CartographError(.unprocessable, "Entity '\(entity)' is abstract and cannot have objects.") }
        let plan = layout.insertPlan(for: entity)
        var bound: [SQLiteValue] = [.integer(nextID), .text(entity), .integer(stub ? 1 : 0)]
        bound.reserveCapacity(3 + plan.attributes.count)
        var used = 0
        for name in plan.attributes {
            let value = values[name]
            if value != nil { used += 1 }
            bound.append(ValueStorage.sqlite(value))
        }
        if used != values.count, let unknown = values.keys.first(where: { !plan.attributes.contains($0) }) {
            throw CartographError(.unprocessable, "Entity '\(entity)' has no attribute '\(unknown)'.")
        }
        for name in plan.toOne { bound.append(toOne[name].map { .integer($0) } ?? .null) }
        let id = nextID
        nextID += 1
        try sqlite { () throws(SQLiteError) in try connection.run(plan.sql, bound) }
        record(id, entity)
        let tracking = layout.identityTracking(of: entity)
        for name in tracking.attributes {
            recordIdentity(WrittenIdentities.digest(root: tracking.root, attribute: name, value: values[name]))
        }
        guard !toOne.isEmpty else { return id }
        let written = toOne.filter { plan.toOne.contains($0.key) }
        relationshipsWritten(of: toOne.values)
        if !written.isEmpty {
            if insertedToOnes.count < Self.maxKeptObjects { insertedToOnes[id] = written } else { writtenSinceInsert.insert(id) }
        }
        for (name, destination) in toOne where !plan.toOne.contains(name) {
            try setRelationship(id: id, entity: entity, relationship: name, to: [destination], current: [])
        }
        return id
    }

    /// Sets attribute values (nil clears) of an existing object; writes and touches only what
    /// changed (R-P4), compared with `stored` when the caller read the object whole in this transaction
    /// (and wrote nothing to it since), with the row read here otherwise. Returns whether anything changed.
    @discardableResult
    public func update(id: Int64, entity: String, values: [String: AttributeValue?], clearStub: Bool = false,
                       stored: ExistingObject? = nil) throws(CartographError) -> Bool {
        var current = stored
        if current == nil { current = try sqlite { () throws(SQLiteError) in try reader.object(id: id, entity: entity) } }
        guard let current else {
            throw CartographError(.notFound, "No \(entity) object with _id \(id).")
        }
        var assignments: [String] = []
        var bound: [SQLiteValue] = []
        let tracking = layout.identityTracking(of: current.entity)
        for (name, value) in values.sorted(by: { $0.key < $1.key }) where current.values[name] != value {
            guard let column = layout.column(ofAttribute: name, entity: current.entity) else {
                throw CartographError(.unprocessable, "Entity '\(current.entity)' has no attribute '\(name)'.")
            }
            assignments.append("\(quoted(column)) = ?")
            bound.append(ValueStorage.sqlite(value))
            if tracking.attributes.contains(name) { recordIdentity(WrittenIdentities.digest(root: tracking.root, attribute: name, value: value)) }
        }
        if clearStub, current.isStub { assignments.append("\(quoted(StoreLayout.stubColumn)) = 0") }
        guard !assignments.isEmpty else { return false }
        let sql = "UPDATE \(quoted(layout.table(of: entity))) SET \(assignments.joined(separator: ", ")) WHERE _id = ?"
        try sqlite { () throws(SQLiteError) in try connection.run(sql, bound + [.integer(id)]) }
        touch(id, current.entity)
        return true
    }

    /// The object `id` of `entity` (or a sub-entity).
    public func object(id: Int64, entity: String) throws(CartographError) -> ExistingObject? {
        try sqlite { () throws(SQLiteError) in try reader.object(id: id, entity: entity) }
    }

    /// Batched lookup by attribute values, oldest first: see `ObjectReader.findAll`.
    public func findAll(entity: String, attributes: [String], identities: [[AttributeValue]], predicate: CheckedPredicate? = nil,
                        reading: [String]? = nil) throws(CartographError) -> [[AttributeValue]: [ExistingObject]] {
        try reader.findAll(entity: entity, attributes: attributes, identities: identities, predicate: predicate, reading: reading)
    }

    /// The object whose key (the raw `{key}` path segment) is `key`.
    public func object(entity: String, key: String) throws(CartographError) -> ExistingObject? {
        guard model.entity(named: entity) != nil else {
            throw model.unknownEntity(entity)
        }
        return try reader.object(entity: entity, rawKey: key)
    }

    // MARK: Relationships

    /// The destinations of a relationship, in order.
    public func destinations(of id: Int64, entity: String, relationship: String) throws(CartographError) -> [Int64] {
        if id >= firstNewID, id < nextID, !writtenSinceInsert.contains(id) { return insertedToOnes[id]?[relationship].map { [$0] } ?? [] }
        if let written = writtenJoinDestinations[id]?[relationship] { return written }
        return try sqlite { () throws(SQLiteError) in try reader.destinationIDs(of: id, entity: entity, relationship: relationship) }
    }

    /// Makes `relationship` of object `id` exactly `destinations` (to-one: at most one), keeping the
    /// inverse side consistent and touching every object whose relationships changed. `current`,
    /// when the caller has just read it, saves reading the old destinations again. Returns false when
    /// the relationship held `destinations` already (see `holds`) and nothing was written.
    @discardableResult
    public func setRelationship(id: Int64, entity: String, relationship name: String, to destinations: [Int64],
                                current: [Int64]? = nil) throws(CartographError) -> Bool {
        guard let relationship = model.relationship(name, of: entity) else {
            throw CartographError(.unprocessable, "Entity '\(entity)' has no relationship '\(name)'.")
        }
        let old: [Int64]
        if let current { old = current } else { old = try self.destinations(of: id, entity: entity, relationship: name) }
        var unique: [Int64] = []
        for destination in destinations where !unique.contains(destination) { unique.append(destination) }
        guard !holds(old, unique, relationship: relationship, of: entity) else { return false }
        guard relationship.toMany || unique.count <= 1 else {
            throw CartographError(.unprocessable, "Relationship '\(name)' of '\(entity)' is to-one.")
        }
        try writeStorage(id: id, entity: entity, relationship: relationship, old: old, new: unique)
        // The inverse's own storage, where it is not the same storage as this side's.
        guard let inverseName = relationship.inverse, let inverse = model.relationship(inverseName, of: relationship.destination),
              !layout.sharesStorageWithInverse(relationship, of: entity) else { return true }
        for removed in old where !unique.contains(removed) {
            let current = try self.destinations(of: removed, entity: relationship.destination, relationship: inverseName)
            try writeStorage(id: removed, entity: relationship.destination, relationship: inverse, old: current,
                             new: current.filter { $0 != id })
        }
        for added in unique where !old.contains(added) {
            let current = try self.destinations(of: added, entity: relationship.destination, relationship: inverseName)
            guard !current.contains(id) else { continue }
            if !inverse.toMany, let previous = current.first {
                // `added` leaves its previous owner: that owner's side loses it.
                try setRelationship(id: previous, entity: entity, relationship: name,
                                    to: try self.destinations(of: previous, entity: entity, relationship: name).filter { $0 != added })
            }
            try writeStorage(id: added, entity: relationship.destination, relationship: inverse, old: current,
                             new: inverse.toMany ? current + [id] : [id])
        }
        return true
    }

    /// Whether a relationship that holds `current` holds `unique` (no destination twice) already. An
    /// unordered to-many is a set, as in Core Data: the same destinations in another order are the same
    /// value (issue 29: RestKit's benchmark payload names a parent's children in another order than the
    /// store reads them, and counted 24 of 25 parents updated on every identical re-post). So is an
    /// ordered one on a side the store reads in `_id` order — the inverse of a foreign key, or the side of
    /// a many-to-many that does not own its join table — as that order is not kept.
    private func holds(_ current: [Int64], _ unique: [Int64], relationship: Relationship, of entity: String) -> Bool {
        if current == unique { return true }
        guard relationship.toMany, current.count == unique.count else { return false }
        if relationship.ordered, case .joinTable(_, false)? = layout.storage(of: relationship.name, entity: entity) { return false }
        return Set(current) == Set(unique)
    }

    /// Sets a to-one relationship of several objects to one destination. A foreign-key column that
    /// is the only storage of both sides is written with one statement per 500 objects; any other
    /// storage goes through `setRelationship` per object.
    func setToOne(_ ids: [Int64], entity: String, relationship name: String, to destination: Int64) throws(CartographError) {
        guard let relationship = model.relationship(name, of: entity), !relationship.toMany,
              case .foreignKey(let table, let column)? = layout.storage(of: name, entity: entity),
              layout.isOnlyStorage(relationship, of: entity) else {
            for id in ids { try setRelationship(id: id, entity: entity, relationship: name, to: [destination]) }
            return
        }
        try sqlite { () throws(SQLiteError) in
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = ids[start..<min(start + 500, ids.count)]
                try connection.run("UPDATE \(quoted(table)) SET \(quoted(column)) = ? WHERE \(quoted(column)) IS NOT ? AND _id IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ", ")))",
                                   [.integer(destination), .integer(destination)] + chunk.map { .integer($0) })
            }
        }
        for id in ids { touch(id, entity) }
        relationshipsWritten(of: ids + [destination])
    }

    /// Records that the relationship storage of `ids` has been written (see `writtenSinceInsert`).
    private func relationshipsWritten(of ids: some Sequence<Int64>) {
        for id in ids where id >= firstNewID {
            writtenSinceInsert.insert(id)
            if !insertedToOnes.isEmpty { insertedToOnes[id] = nil }
        }
    }

    /// Writes one side's storage from `old` to `new` destinations, touching the objects whose stored
    /// relationships change: the owner of a foreign-key column or of a join table's rows.
    private func writeStorage(id: Int64, entity: String, relationship: Relationship, old: [Int64], new: [Int64]) throws(CartographError) {
        let changed = Set(old).symmetricDifference(new)
        relationshipsWritten(of: [id] + old + new)
        switch layout.storage(of: relationship.name, entity: entity) {
        case .foreignKey?, .joinTable(_, false)?: touch(id, entity)
        case .inverseForeignKey?, .joinTable(_, true)?: for destination in changed { touch(destination, relationship.destination) }
        case nil: break
        }
        try sqlite { () throws(SQLiteError) in
            switch layout.storage(of: relationship.name, entity: entity) {
            case .foreignKey(let table, let column):
                try connection.run("UPDATE \(quoted(table)) SET \(quoted(column)) = ? WHERE _id = ?",
                                   [new.first.map { .integer($0) } ?? .null, .integer(id)])
            case .inverseForeignKey(let table, let column):
                for removed in old where !new.contains(removed) {
                    try connection.run("UPDATE \(quoted(table)) SET \(quoted(column)) = NULL WHERE _id = ? AND \(quoted(column)) = ?",
                                       [.integer(removed), .integer(id)])
                }
                for added in new where !old.contains(added) {
                    try connection.run("UPDATE \(quoted(table)) SET \(quoted(column)) = ? WHERE _id = ?", [.integer(id), .integer(added)])
                }
            case .joinTable(let name, false):
                if writtenJoinDestinations[id] != nil || writtenJoinDestinations.count < Self.maxKeptObjects {
                    writtenJoinDestinations[id, default: [:]][relationship.name] = new
                }
                try writeJoinRows(table: name, source: id, ordered: relationship.ordered, old: old, new: new)
            case .joinTable(let name, true):
                // Written from the side that does not own the order: only the sources that come or go
                // change. A source that stays keeps its row and its place in its own list; one that comes
                // gets `id` appended to its list (as Core Data appends to an ordered relationship when its
                // inverse is set). So no other source's list moves without being touched.
                let deletion = layout.joinRowDeletion(table: name)
                for source in old where !new.contains(source) {
                    // Through the source's index, as every join-row deletion: its list, not all of `id`'s sources.
                    try connection.run(deletion.sql(count: 1), [.integer(source), .integer(id)])
                    writtenJoinDestinations[source] = nil
                }
                for source in new where !old.contains(source) {
                    try connection.run("""
                        INSERT INTO \(quoted(name)) (source, destination, position)
                        SELECT ?1, ?2, coalesce(max(position) + 1, 0) FROM \(quoted(name)) WHERE source = ?1
                        """, [.integer(source), .integer(id)])
                    writtenJoinDestinations[source] = nil
                }
            case nil:
                break
            }
        }
    }

    /// Writes the join rows of `source` from `old` to `new` destinations as a difference (issue 29): only
    /// the rows of destinations that go are deleted and only those that come are inserted, so a re-load
    /// that changes one tag of five writes two rows, not ten, and the destination index, grouped by tag,
    /// is not dirtied all over. Rows that stay keep their position: an unordered relationship's new rows
    /// take their index in `new` (its order is the store's, docs/mapping.md); an ordered one's are placed
    /// in the gaps between the positions of the rows that stay, which must already be in `new`'s order,
    /// and the list is written again whole only when they are not or a gap is too narrow.
    private func writeJoinRows(table name: String, source id: Int64, ordered: Bool, old: [Int64], new: [Int64]) throws(SQLiteError) {
        let table = quoted(name)
        let staying = Set(old).intersection(new)
        var gone = old.filter { !staying.contains($0) }
        var rows: [(destination: Int64, position: Int64)]
        if ordered, !staying.isEmpty {
            var stored: [Int64: Int64] = [:]
            for row in try connection.rows("SELECT destination, position FROM \(table) WHERE source = ?", [.integer(id)]) {
                if let destination = row[0].integerValue, let position = row[1].integerValue { stored[destination] = position }
            }
            if let placed = Self.positions(of: new, keeping: stored, staying: staying) {
                rows = placed
            } else {
                (gone, rows) = (old, new.enumerated().map { ($0.element, Int64($0.offset)) })
            }
        } else {
            rows = new.enumerated().compactMap { staying.contains($0.element) ? nil : ($0.element, Int64($0.offset)) }
        }
        if !gone.isEmpty, gone.count == old.count {
            try connection.run("DELETE FROM \(table) WHERE source = ?", [.integer(id)])
        } else {
            let deletion = layout.joinRowDeletion(table: name)
            for start in stride(from: 0, to: gone.count, by: IDListQuery.maximumCount) {
                let chunk = gone[start..<min(start + IDListQuery.maximumCount, gone.count)]
                try connection.run(deletion.sql(count: chunk.count), [.integer(id)] + chunk.map { .integer($0) })
            }
        }
        // One statement per 300 rows rather than one per row (its text is cached per row count).
        for start in stride(from: 0, to: rows.count, by: 300) {
            let chunk = rows[start..<min(start + 300, rows.count)]
            try connection.run("INSERT INTO \(table) (source, destination, position) VALUES \(Array(repeating: "(?, ?, ?)", count: chunk.count).joined(separator: ", "))",
                               chunk.flatMap { [.integer(id), .integer($0.destination), .integer($0.position)] })
        }
    }

    /// Positions for the destinations of an ordered `list` that are not `staying`, between the `stored`
    /// positions of those that are, so that reading by position gives `list`: each run of new
    /// destinations takes the integers right after the stayer before it (or right before the first
    /// stayer). Nil when the stayers are out of `list`'s order or a run does not fit its gap.
    static func positions(of list: [Int64], keeping stored: [Int64: Int64], staying: Set<Int64>) -> [(destination: Int64, position: Int64)]? {
        var placed: [(destination: Int64, position: Int64)] = []
        var run: [Int64] = []
        var previous: Int64?
        func place(before next: Int64?) -> Bool {
            guard !run.isEmpty else { return true }
            let first: Int64
            switch (previous, next) {
            case (let low?, let high?): guard high - low > Int64(run.count) else { return false }; first = low + 1
            case (let low?, nil): first = low + 1
            case (nil, let high?): first = high - Int64(run.count)
            case (nil, nil): first = 0
            }
            for (offset, destination) in run.enumerated() { placed.append((destination, first + Int64(offset))) }
            run.removeAll(keepingCapacity: true)
            return true
        }
        for destination in list {
            guard staying.contains(destination) else { run.append(destination); continue }
            guard let position = stored[destination], previous.map({ $0 < position }) ?? true, place(before: position) else { return nil }
            previous = position
        }
        guard place(before: nil) else { return nil }
        return placed
    }

    // MARK: Deletion

    /// Deletes an object and applies delete rules transitively (R-D2): cascade deletes destinations,
    /// nullify clears the inverse, deny fails with 409 while destinations exist, noAction leaves them.
    /// Every deleted object gets a tombstone. Returns how many objects were deleted.
    @discardableResult
    public func delete(id: Int64, entity: String) throws(CartographError) -> Int {
        let before = deleted.count
        var pending: [(Int64, String)] = [(id, entity)]
        var planned: [(object: ExistingObject, key: JSONValue)] = []
        var plannedIDs: Set<Int64> = []
        // Plan first, so a deny anywhere refuses the whole deletion before anything changes.
        while let (nextID, nextEntity) = pending.popLast() {
            guard !plannedIDs.contains(nextID), !deletedIDs.contains(nextID),
                  let object = try self.object(id: nextID, entity: nextEntity) else { continue }
            plannedIDs.insert(nextID)
            planned.append((object, reader.key(of: object)))
            for relationship in layout.properties(of: object.entity).relationships {
                let destinations = try self.destinations(of: object.id, entity: object.entity, relationship: relationship.name)
                    .filter { !plannedIDs.contains($0) }
                switch relationship.deleteRule {
                case .deny where !destinations.isEmpty:
                    throw CartographError(.conflict, "Cannot delete \(object.entity) \(reader.key(of: object).jsonText): its relationship '\(relationship.name)' has the delete rule 'deny' and still has \(destinations.count) destination(s).").quotingRequestValues()
                case .cascade:
                    pending.append(contentsOf: destinations.map { ($0, relationship.destination) })
                case .deny, .nullify, .noAction:
                    break
                }
            }
        }
        for (object, key) in planned {
            for relationship in layout.properties(of: object.entity).relationships where relationship.deleteRule != .noAction {
                try setRelationship(id: object.id, entity: object.entity, relationship: relationship.name, to: [])
            }
            try clearDanglingReferences(to: object)
            try sqlite { () throws(SQLiteError) in
                try connection.run("DELETE FROM \(quoted(layout.table(of: object.entity))) WHERE _id = ?", [.integer(object.id)])
                try removePendingConnections(of: object.id)
            }
            deletedIDs.insert(object.id)
            deleted.append((object.id, object.entity, key))
        }
        return deleted.count - before
    }

    /// Relationships without an inverse that point at `object` (nothing else keeps them consistent).
    private func clearDanglingReferences(to object: ExistingObject) throws(CartographError) {
        let targets = Set(model.lineage(of: object.entity).map(\.name))
        for entity in model.entities {
            for relationship in entity.relationships where relationship.inverse == nil && targets.contains(relationship.destination) {
                switch layout.storage(of: relationship.name, entity: entity.name) {
                case .foreignKey(let table, let column):
                    let sources = try sqlite { () throws(SQLiteError) in
                        try connection.rows("SELECT _id, _entity FROM \(quoted(table)) WHERE \(quoted(column)) = ?", [.integer(object.id)])
                    }
                    for row in sources {
                        guard let id = row[0].integerValue else { continue }
                        relationshipsWritten(of: [id])
                        try sqlite { () throws(SQLiteError) in
                            try connection.run("UPDATE \(quoted(table)) SET \(quoted(column)) = NULL WHERE _id = ?", [.integer(id)])
                        }
                        touch(id, row[1].textValue ?? entity.name)
                    }
                case .joinTable(let name, let reversed):
                    let column = reversed ? "source" : "destination", other = reversed ? "destination" : "source"
                    let sources = try sqlite { () throws(SQLiteError) in
                        try connection.rows("SELECT \(other) FROM \(quoted(name)) WHERE \(column) = ?", [.integer(object.id)])
                    }
                    try sqlite { () throws(SQLiteError) in try connection.run("DELETE FROM \(quoted(name)) WHERE \(column) = ?", [.integer(object.id)]) }
                    for row in sources {
                        if let id = row[0].integerValue {
                            touch(id, entity.name)
                            relationshipsWritten(of: [id])
                            writtenJoinDestinations[id] = nil
                        }
                    }
                case .inverseForeignKey, nil:
                    break  // a relationship without an inverse stores itself: never the inverse's column
                }
            }
        }
    }

    /// Ids (with concrete entity) of the objects of the predicate's entity and its sub-entities matching
    /// it, oldest first; only among `ids` when given (chunked under SQLite's parameter limit).
    public func objects(matching predicate: CheckedPredicate, among ids: [Int64]? = nil) throws(CartographError) -> [(id: Int64, entity: String)] {
        let compiled: SQLPredicate
        do { compiled = try predicate.sql(schema: layout) } catch {
            throw CartographError(.badRequest, "The predicate cannot be compiled: \(error.message)", offset: error.offset, underlying: error)
                .quotingRequestValues()
        }
        let select = "SELECT \(compiled.alias)._id, \(compiled.alias)._entity FROM \(compiled.fromClause) WHERE \(compiled.whereClause)"
        let bindings = compiled.bindings.map(SQLiteValue.init)
        var chunks: [(sql: String, bindings: [SQLiteValue])] = []
        if let ids {
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = ids[start..<min(start + 500, ids.count)]
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                chunks.append(("\(select) AND \(compiled.alias)._id IN (\(marks)) ORDER BY \(compiled.alias)._id", bindings + chunk.map { .integer($0) }))
            }
        } else {
            chunks.append(("\(select) ORDER BY \(compiled.alias)._id", bindings))
        }
        var matches: [(id: Int64, entity: String)] = []
        for (sql, bindings) in chunks {
            try sqlite { () throws(SQLiteError) in
                for row in try connection.rows(sql, bindings) {
                    if let id = row[0].integerValue, let entity = row[1].textValue { matches.append((id, entity)) }
                }
            }
        }
        return ids == nil ? matches : matches.sorted { $0.id < $1.id }
    }
}

extension SQLiteValue {
    /// The SQLite value of a compiled predicate's binding.
    public init(_ binding: SQLBinding) {
        switch binding {
        case .null: self = .null
        case .integer(let v): self = .integer(v)
        case .real(let v): self = .real(v)
        case .text(let v): self = .text(v)
        case .blob(let v): self = .blob(v)
        }
    }
}
