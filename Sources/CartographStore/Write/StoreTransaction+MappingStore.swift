// The store transaction as the mapping engine's store.
public import CartographCore
public import CartographMapping
public import CartographPredicate

extension StoreTransaction: MappingStore {
    public func existingObjects(entity: String, attributes: [String], identities: [[AttributeValue]],
                                predicate: CheckedPredicate?, reading: [String]?) throws(CartographError) -> [[AttributeValue]: [ExistingObject]] {
        try findAll(entity: entity, attributes: attributes, identities: identities, predicate: predicate, reading: reading)
    }

    public func firstObjects(entity: String, attributes: [String], identities: [[AttributeValue]],
                             predicate: CheckedPredicate?, reading: [String]) throws(CartographError) -> FirstObjects {
        try reader.findFirst(entity: entity, attributes: attributes, identities: identities, predicate: predicate, reading: reading)
    }

    /// Lookups inside the transaction see its own state: nothing to re-check.
    public var snapshotHead: Int64? { nil }

    public func changeFeedHead() throws(CartographError) -> Int64 {
        do { return try ChangeFeed.head(connection) } catch { throw CartographError.store(error, "Cannot read the change feed") }
    }

    public func changedObjects(among ids: [Int64], since seq: Int64, head: Int64) throws(CartographError) -> Set<Int64> {
        do { return try ChangeFeed.changed(among: ids, since: seq, head: head, connection) } catch {
            throw CartographError.store(error, "Cannot read the change feed")
        }
    }

    public func identitiesWritten(since seq: Int64, head: Int64) -> WrittenIdentities? {
        identityLog?.written(since: seq, head: head, modelVersion: model.version, tracked: layout.trackedIdentities)
    }

    public func insertObject(entity: String, values: [String: AttributeValue], stub: Bool, toOne: [String: Int64]) throws(CartographError) -> Int64 {
        try insert(entity: entity, values: values, stub: stub, toOne: toOne)
    }

    public func updateObject(id: Int64, entity: String, values: [String: AttributeValue?], clearStub: Bool,
                             stored: ExistingObject?) throws(CartographError) -> Bool {
        try update(id: id, entity: entity, values: values, clearStub: clearStub, stored: stored)
    }

    public func destinationIDs(of id: Int64, entity: String, relationship: String) throws(CartographError) -> [Int64] {
        try destinations(of: id, entity: entity, relationship: relationship)
    }

    @discardableResult
    public func setDestinations(of id: Int64, entity: String, relationship: String, from current: [Int64], to destinations: [Int64]) throws(CartographError) -> Bool {
        try setRelationship(id: id, entity: entity, relationship: relationship, to: destinations, current: current)
    }

    public func isReferenced(_ id: Int64, through relationship: String, of entity: String) throws(CartographError) -> Bool {
        let sql: String
        switch layout.storage(of: relationship, entity: entity) {
        case .foreignKey(let table, let column)?:
            sql = "SELECT 1 FROM \(quoted(table)) WHERE \(quoted(column)) = ? LIMIT 1"
        case .inverseForeignKey(let table, let column)?:
            sql = "SELECT 1 FROM \(quoted(table)) WHERE _id = ? AND \(quoted(column)) IS NOT NULL"
        case .joinTable(let name, let reversed)?:
            // A reversed table is owned by the other side: this relationship's destinations are its sources.
            sql = "SELECT 1 FROM \(quoted(name)) WHERE \(reversed ? StoreLayout.joinSource : StoreLayout.joinDestination) = ? LIMIT 1"
        case nil:
            return false
        }
        do { return try !connection.rows(sql, [.integer(id)]).isEmpty } catch {
            throw CartographError.store(error, "Store read failed")
        }
    }

    public func deleteObject(id: Int64, entity: String) throws(CartographError) -> Int {
        try delete(id: id, entity: entity)
    }

    public func key(ofObject id: Int64, entity: String) throws(CartographError) -> JSONValue? {
        try object(id: id, entity: entity).map(reader.key(of:))
    }
}
