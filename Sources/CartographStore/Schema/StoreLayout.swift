// How a model's objects are laid out in SQLite (issue 4's schema design):
// - one table per inheritance hierarchy, named after its root entity, with `_id` (from the store's
//   `next_id` counter, so ids are never reused), `_entity` (the concrete entity) and `_stub`; querying
//   an entity is one indexed `_entity IN (…)` filter (R-M3); docs/storage.md;
// - one column per attribute, named after the attribute when its root declares it and
//   `Entity.attribute` when a sub-entity does (names are validated, so these never collide);
// - a to-one relationship is an INTEGER column holding the destination's `_id`;
// - a to-many relationship whose inverse is an unordered-compatible to-one reads that column;
//   every other to-many (many-to-many, no inverse, ordered) has a join table with a position.
// Names derive from the model alone, so the same model always yields the same layout.
import Foundation
import CartographCore
import CartographPredicate

/// Where one relationship's destinations are stored.
enum RelationshipStorage: Hashable {
    /// A column of the source's table (to-one).
    case foreignKey(table: String, column: String)
    /// The inverse to-one's column in the destination's table.
    case inverseForeignKey(table: String, column: String)
    /// A join table; `reversed` for the inverse side of a many-to-many owned by the other side.
    case joinTable(name: String, reversed: Bool)
}

/// The SQL layout of one model. A class so that lookups made for every object (columns, relationship
/// storage, row readers) are computed once per layout; a layout is used by one thread at a time, inside
/// one read or write.
final class StoreLayout {
    static let idColumn = "_id", entityColumn = "_entity", stubColumn = "_stub"
    static let joinSource = "source", joinDestination = "destination", joinPosition = "position"

    let model: Model
    /// An entity's property, as a cache key (no string built per lookup).
    private struct PropertyKey: Hashable {
        let entity: String, property: String
    }
    private var columns: [PropertyKey: String?] = [:]
    private var storages: [PropertyKey: RelationshipStorage?] = [:]
    private var properties: [String: (attributes: [Attribute], relationships: [Relationship])] = [:]
    /// The entity `properties(of:)` was last asked for, and its answer: a page asks once per object, mostly
    /// for one entity (comparing the name is cheaper than hashing it).
    private var lastProperties: (entity: String, properties: (attributes: [Attribute], relationships: [Relationship]))?
    /// A row reader's table and the attributes it reads (nil: all).
    private struct RowReaderKey: Hashable {
        let table: String, attributes: Set<String>?
    }
    private var rowReaders: [RowReaderKey: RowReader] = [:]
    private var rowsOfTables: [String: TableRows] = [:]
    private var identification: [String: [String]] = [:]
    private var keyLookups: [String: (sql: String, filter: [SQLiteValue])] = [:]
    private var keyReaders: [String: RowReader] = [:]
    private struct LookupKey: Hashable {
        let entity: String, attributes: [String], reading: [String]?, count: Int, positional: Bool
    }
    /// Keyed by what varies per request (lookup sizes, predicate shapes): bounded, see `BoundedMemo`.
    private var lookups = BoundedMemo<LookupKey, String>()
    private var indexOrderedPages = BoundedMemo<String, Bool>()
    private var destinationQueries: [RelationshipStorage: IDListQuery] = [:]
    private var joinRowDeletions: [String: IDListQuery] = [:]
    private var tables: [String: String] = [:]
    private var inserts: [String: InsertPlan] = [:]
    private var kinds: [String: Set<String>] = [:]

    init(model: Model) { self.model = model }

    /// True when a relationship and its inverse read and write the same column or join table.
    func sharesStorageWithInverse(_ relationship: Relationship, of entity: String) -> Bool {
        guard let inverse = relationship.inverse else { return false }
        let inverseStorage = storage(of: inverse, entity: relationship.destination)
        switch storage(of: relationship.name, entity: entity) {
        case .foreignKey(let table, let column)?: return inverseStorage == .inverseForeignKey(table: table, column: column)
        case .inverseForeignKey(let table, let column)?: return inverseStorage == .foreignKey(table: table, column: column)
        case .joinTable(let name, _)?:
            // A many-to-many and its inverse share the table whatever side reads it reversed (its own
            // inverse too, as a self-referencing `friends` is).
            guard case .joinTable(name, _)? = inverseStorage else { return false }
            return true
        case nil: return false
        }
    }

    /// True when writing a relationship's own storage is the whole write: it has no inverse, or the
    /// inverse reads the same storage.
    func isOnlyStorage(_ relationship: Relationship, of entity: String) -> Bool {
        relationship.inverse == nil || sharesStorageWithInverse(relationship, of: entity)
    }

    /// Whether `entity` is `ancestor` or one of its sub-entities.
    func isKind(_ entity: String, of ancestor: String) -> Bool {
        if let cached = kinds[ancestor] { return cached.contains(entity) }
        let family = Set(model.entityAndSubentities(of: ancestor))
        kinds[ancestor] = family
        return family.contains(entity)
    }

    /// One INSERT per concrete entity naming every attribute column: an object's missing attributes
    /// bind NULL, so every insert of the entity reuses one prepared statement (no SQL built per object).
    struct InsertPlan {
        let sql: String
        /// Attribute names in the statement's order, after `_id`, `_entity` and `_stub`.
        let attributes: [String]
        /// Then the to-one relationships whose foreign-key column is their only storage (the inverse,
        /// if any, reads the same column), so the insert can write them with the row.
        let toOne: [String]
    }

    func insertPlan(for entity: String) -> InsertPlan {
        if let cached = inserts[entity] { return cached }
        let attributes = model.allAttributes(of: entity).map(\.name)
        var toOne: [(name: String, column: String)] = []
        for relationship in model.allRelationships(of: entity) where !relationship.toMany && isOnlyStorage(relationship, of: entity) {
            if case .foreignKey(_, let column)? = storage(of: relationship.name, entity: entity) { toOne.append((relationship.name, column)) }
        }
        let columns = [Self.idColumn, Self.entityColumn, Self.stubColumn] + attributes.compactMap { column(ofAttribute: $0, entity: entity) }
            + toOne.map(\.column)
        let plan = InsertPlan(
            sql: "INSERT INTO \(quoted(table(of: entity))) (\(columns.map(quoted).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))",
            attributes: attributes, toOne: toOne.map(\.name))
        inserts[entity] = plan
        return plan
    }

    /// The table of `entity`'s hierarchy.
    func table(of entity: String) -> String {
        if let cached = tables[entity] { return cached }
        let table = model.rootEntity(of: entity)
        tables[entity] = table
        return table
    }

    /// The column of `attribute` (declared on `entity` or an ancestor).
    func column(ofAttribute attribute: String, entity: String) -> String? {
        let key = PropertyKey(entity: entity, property: attribute)
        if let cached = columns[key] { return cached }
        let declaring = model.lineage(of: entity).first { $0.attributes.contains { $0.name == attribute } }
        let column = declaring.map { columnName(property: attribute, declaredBy: $0) }
        columns[key] = column
        return column
    }

    /// The reader of a hierarchy's rows: every column, or only `attributes` (with `_id`, `_entity`, `_stub`).
    func rowReader(for table: String, attributes: Set<String>? = nil) -> RowReader {
        let key = RowReaderKey(table: table, attributes: attributes)
        if let cached = rowReaders[key] { return cached }
        let reader = RowReader(layout: self, table: table, attributes: attributes)
        rowReaders[key] = reader
        return reader
    }

    /// A hierarchy's rows as a renderer reads them.
    func tableRows(for table: String) -> TableRows {
        if let cached = rowsOfTables[table] { return cached }
        let rows = TableRows(layout: self, table: table)
        rowsOfTables[table] = rows
        return rows
    }

    /// True when `entity` and its sub-entities are every entity of its table: no `_entity` filter needed.
    func coversTable(_ entity: String) -> Bool {
        model.entityAndSubentities(of: entity).count == model.entityAndSubentities(of: table(of: entity)).count
    }

    /// The `_entity` restriction for `entity` (nil when it covers its table). The unary `+` keeps SQLite
    /// from choosing the `_entity` index over a more selective one (identity, foreign key).
    func entityFilter(_ entity: String, alias: String? = nil) -> (sql: String, bindings: [SQLiteValue])? {
        guard !coversTable(entity) else { return nil }
        let entities = model.entityAndSubentities(of: entity)
        let column = (alias.map { "\($0)." } ?? "") + StoreLayout.entityColumn
        return ("+\(column) IN (\(Array(repeating: "?", count: entities.count).joined(separator: ", ")))", entities.map { .text($0) })
    }

    /// Every attribute and relationship of `entity`, inherited ones included, once per entity.
    func properties(of entity: String) -> (attributes: [Attribute], relationships: [Relationship]) {
        if let lastProperties, lastProperties.entity == entity { return lastProperties.properties }
        let found = properties[entity] ?? (model.allAttributes(of: entity), model.allRelationships(of: entity))
        properties[entity] = found
        lastProperties = (entity, found)
        return found
    }

    /// The SQL of an identity lookup without a predicate (`ObjectReader.findAll`, or `findFirst` when
    /// `positional`), built once per shape (lookup sizes vary up to 900 identities).
    func lookupSQL(entity: String, attributes: [String], reading: [String]?, count: Int, positional: Bool = false,
                   _ build: () -> String) -> String {
        lookups.value(for: LookupKey(entity: entity, attributes: attributes, reading: reading, count: count, positional: positional), build)
    }

    /// Whether the page query `pageSQL` reads in an index's order (`StoreReader.readsInIndexOrder`),
    /// decided once per query text (a page's text varies with its predicate's shape and sort).
    func readsInIndexOrder(pageSQL: String, _ decide: () throws(SQLiteError) -> Bool) throws(SQLiteError) -> Bool {
        try indexOrderedPages.value(for: pageSQL, decide)
    }

    /// `SELECT <the table rows' columns> FROM <table> WHERE [<entity filter> AND] <identity> = ? … ORDER BY _id
    /// LIMIT 1`: an object by its key (`_id` for an entity without identification attributes), the oldest
    /// when several match; bound with `filter`, then the key's values.
    func keyLookup(entity: String) -> (sql: String, filter: [SQLiteValue]) {
        if let cached = keyLookups[entity] { return cached }
        let columns = identificationAttributes(of: entity).isEmpty
            ? [StoreLayout.idColumn] : identificationAttributes(of: entity).compactMap { column(ofAttribute: $0, entity: entity) }
        let filter = entityFilter(entity)
        let conditions = (filter.map { [$0.sql] } ?? []) + columns.map { "\(quoted($0)) = ?" }
        let sql = "SELECT \(tableRows(for: table(of: entity)).selectList) FROM \(quoted(table(of: entity))) WHERE "
            + conditions.joined(separator: " AND ") + " ORDER BY \(StoreLayout.idColumn) LIMIT 1"
        keyLookups[entity] = (sql, filter?.bindings ?? [])
        return (sql, filter?.bindings ?? [])
    }

    /// The query of a to-many relationship's destinations for a list of objects: rows of (object `_id`,
    /// destination `_id`), each object's destinations in relationship order. Nil for a to-one.
    func destinationsQuery(of storage: RelationshipStorage) -> IDListQuery? {
        if let cached = destinationQueries[storage] { return cached }
        let query: IDListQuery
        switch storage {
        case .foreignKey:
            return nil
        case .inverseForeignKey(let table, let column):
            query = IDListQuery(head: "SELECT \(quoted(column)), _id FROM \(quoted(table)) WHERE \(quoted(column)) IN ", tail: " ORDER BY _id")
        case .joinTable(let name, let reversed):
            query = reversed
                ? IDListQuery(head: "SELECT destination, source FROM \(quoted(name)) WHERE destination IN ", tail: " ORDER BY source")
                : IDListQuery(head: "SELECT source, destination FROM \(quoted(name)) WHERE source IN ", tail: " ORDER BY position, rowid")
        }
        destinationQueries[storage] = query
        return query
    }

    /// `DELETE FROM <join table> WHERE source = ? AND +destination IN (…)`: some of one source's rows,
    /// bound with the source, then the destinations. The `+` keeps SQLite on the source's index: with one
    /// destination both columns are equalities, and without statistics it took the destination's index,
    /// reading every source of that destination (a tag's ~1,250 articles) to delete one row.
    func joinRowDeletion(table: String) -> IDListQuery {
        if let cached = joinRowDeletions[table] { return cached }
        let query = IDListQuery(head: "DELETE FROM \(quoted(table)) WHERE source = ? AND +destination IN ")
        joinRowDeletions[table] = query
        return query
    }

    /// The reader of a hierarchy's identification attributes: what an object's key is made of.
    func keyReader(for table: String) -> RowReader {
        if let cached = keyReaders[table] { return cached }
        let identification = Set(model.entityAndSubentities(of: table).flatMap { identificationAttributes(of: $0) })
        let reader = rowReader(for: table, attributes: identification)
        keyReaders[table] = reader
        return reader
    }

    /// The attributes whose writes a transaction records for R-P7's re-check (`IdentityWriteLog`), by
    /// root entity: the identification attributes of every entity of its hierarchy.
    private(set) lazy var trackedIdentities: [String: Set<String>] = {
        var tracked: [String: Set<String>] = [:]
        for entity in model.entities {
            tracked[model.rootEntity(of: entity.name), default: []].formUnion(identificationAttributes(of: entity.name))
        }
        return tracked
    }()
    private var identityTrackings: [String: (root: String, attributes: [String])] = [:]

    /// The root of `entity`'s hierarchy and the tracked attributes (`trackedIdentities`) an object of
    /// `entity` has, whose values its insertion records, and its updates when they change them.
    func identityTracking(of entity: String) -> (root: String, attributes: [String]) {
        if let cached = identityTrackings[entity] { return cached }
        let root = model.rootEntity(of: entity)
        let own = Set(model.allAttributes(of: entity).map(\.name))
        let tracking = (root, (trackedIdentities[root] ?? []).filter(own.contains).sorted())
        identityTrackings[entity] = tracking
        return tracking
    }

    /// `model.identificationAttributes(of:)`, once per entity.
    func identificationAttributes(of entity: String) -> [String] {
        if let cached = identification[entity] { return cached }
        let names = model.identificationAttributes(of: entity)
        identification[entity] = names
        return names
    }

    private func columnName(property: String, declaredBy entity: Entity) -> String {
        entity.parent == nil ? property : "\(entity.name).\(property)"
    }

    /// Every (column, attribute) pair stored in a hierarchy's table, across all its entities.
    func attributeColumns(ofTable root: String) -> [(column: String, attribute: Attribute, entity: String)] {
        model.entityAndSubentities(of: root).flatMap { name -> [(column: String, attribute: Attribute, entity: String)] in
            guard let entity = model.entity(named: name) else { return [] }
            return entity.attributes.map { (columnName(property: $0.name, declaredBy: entity), $0, name) }
        }
    }

    /// Every to-one foreign-key column of a hierarchy's table.
    func foreignKeyColumns(ofTable root: String) -> [String] {
        model.entityAndSubentities(of: root).flatMap { name -> [String] in
            guard let entity = model.entity(named: name) else { return [] }
            return entity.relationships.filter { !$0.toMany }.map { columnName(property: $0.name, declaredBy: entity) }
        }
    }

    /// Join tables: (name, owning entity, relationship), one per stored many-relationship.
    func joinTables() -> [(name: String, entity: String, relationship: String)] {
        model.entities.flatMap { entity in
            entity.relationships.compactMap { relationship -> (name: String, entity: String, relationship: String)? in
                guard case .joinTable(let name, false)? = storage(of: relationship.name, entity: entity.name) else { return nil }
                return (name, entity.name, relationship.name)
            }
        }
    }

    /// How `relationship` of `entity` (declared on it or an ancestor) is stored.
    func storage(of relationship: String, entity: String) -> RelationshipStorage? {
        let key = PropertyKey(entity: entity, property: relationship)
        if let cached = storages[key] { return cached }
        let storage = computeStorage(of: relationship, entity: entity)
        storages[key] = storage
        return storage
    }

    private func computeStorage(of relationship: String, entity: String) -> RelationshipStorage? {
        guard let declaring = model.lineage(of: entity).first(where: { $0.relationships.contains { $0.name == relationship } }),
              let declared = declaring.relationships.first(where: { $0.name == relationship }) else { return nil }
        if !declared.toMany {
            return .foreignKey(table: table(of: declaring.name), column: columnName(property: relationship, declaredBy: declaring))
        }
        let inverse = declared.inverse.flatMap { model.relationship($0, of: declared.destination) }
        if let inverse, let inverseName = declared.inverse, !inverse.toMany, !declared.ordered,
           let inverseDeclaring = model.lineage(of: declared.destination).first(where: { $0.relationships.contains { $0.name == inverseName } }) {
            return .inverseForeignKey(table: table(of: declared.destination),
                                      column: columnName(property: inverseName, declaredBy: inverseDeclaring))
        }
        // A many-to-many is stored once, by the side whose "Entity.relationship" sorts first.
        if let inverse, inverse.toMany, let inverseName = declared.inverse {
            let mine = "\(declaring.name).\(relationship)"
            let inverseDeclaring = model.lineage(of: declared.destination).first { $0.relationships.contains { $0.name == inverseName } }?.name
                ?? declared.destination
            let theirs = "\(inverseDeclaring).\(inverseName)"
            if theirs < mine { return .joinTable(name: "\(theirs)", reversed: true) }
        }
        return .joinTable(name: mine(declaring.name, relationship), reversed: false)
    }

    private func mine(_ entity: String, _ relationship: String) -> String { "\(entity).\(relationship)" }

    /// True when `relationship` of `entity` is read from the other side's storage (the inverse of a
    /// stored to-one, or the non-owning side of a many-to-many). The change feed leaves such
    /// relationships out: a follower derives them from the owning side (R-D4).
    func isDerived(_ relationship: String, entity: String) -> Bool {
        switch storage(of: relationship, entity: entity) {
        case .inverseForeignKey?, .joinTable(_, true)?: true
        case .foreignKey?, .joinTable(_, false)?, nil: false
        }
    }
}

/// SQL identifier quoting: double quotes, embedded quotes doubled. Identifiers come only from the
/// validated model, and are quoted anyway.
func quoted(_ identifier: String) -> String {
    // Model names cannot contain quotes, so the common case skips Foundation's search entirely.
    guard identifier.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + identifier + "\"" }
    return "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

extension StoreLayout: PredicateSQLSchema {
    func table(forEntity entity: String) -> PredicateSQLTable? {
        guard model.entity(named: entity) != nil else { return nil }
        // No entity column when the entity's objects are the whole table: the compiled SQL then has no
        // `_entity` filter for SQLite to prefer over a selective index.
        return PredicateSQLTable(name: table(of: entity), idColumn: Self.idColumn,
                                 entityColumn: coversTable(entity) ? nil : Self.entityColumn,
                                 entityNames: model.entityAndSubentities(of: entity))
    }

    func column(forAttribute attribute: String, ofEntity entity: String) -> String? {
        column(ofAttribute: attribute, entity: entity)
    }

    func storage(forRelationship relationship: String, ofEntity entity: String) -> PredicateSQLRelationship? {
        switch storage(of: relationship, entity: entity) {
        case .foreignKey(_, let column): .foreignKey(column: column)
        case .inverseForeignKey(_, let column): .destinationForeignKey(column: column)
        case .joinTable(let name, let reversed):
            reversed ? .joinTable(name: name, sourceColumn: Self.joinDestination, destinationColumn: Self.joinSource)
                : .joinTable(name: name, sourceColumn: Self.joinSource, destinationColumn: Self.joinDestination)
        case nil: nil
        }
    }
}

/// Values made once per key, for keys that vary with requests: at most `limit` are kept, and past it
/// the memo starts over rather than grow with every shape a client sends.
struct BoundedMemo<Key: Hashable, Value> {
    private let limit = 256
    private var values: [Key: Value] = [:]

    mutating func value<Failure: Error>(for key: Key, _ make: () throws(Failure) -> Value) throws(Failure) -> Value {
        if let value = values[key] { return value }
        let value = try make()
        if values.count >= limit { values.removeAll(keepingCapacity: true) }
        values[key] = value
        return value
    }
}
