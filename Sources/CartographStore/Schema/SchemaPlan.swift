// The DDL that takes a store from one model's layout to another's: used for a new store (from
// nothing) and for migrations (R-M6). Runs inside the migration's transaction, so an interrupted
// migration leaves the old schema, model and data intact.
import Foundation
import CartographCore

struct SchemaPlan {
    /// Entities whose objects must be deleted (with tombstones) before the DDL runs.
    var removedEntities: [String] = []
    /// Statements in order: drop obsolete indexes and storage, create tables, add columns.
    var statements: [String] = []
    /// Existing rows that get a newly added attribute's default (as lightweight migration does).
    var defaultFills: [(table: String, column: String, entities: [String], value: SQLiteValue)] = []
    /// Indexes to drop before anything else.
    var droppedIndexes: [String] = []
    /// Indexes the new layout wants (created if missing).
    var indexes: [(name: String, sql: String)] = []
    /// Search indexes (R-Q6) to drop, with their triggers, before anything else.
    var droppedSearchIndexes: [String] = []
    /// Search indexes to create once the tables have their new columns, each filled from the rows.
    var createdSearchIndexes: [SearchIndex] = []

    init(from old: StoreLayout?, to new: StoreLayout, existingIndexes: Set<String>, existingSearchIndexes: Set<String>) {
        let newEntities = Set(new.model.entities.map(\.name))
        removedEntities = old?.model.entities.map(\.name).filter { !newEntities.contains($0) || old?.model.rootEntity(of: $0) != new.model.rootEntity(of: $0) } ?? []

        let oldTables = Dictionary(uniqueKeysWithValues: (old.map(Self.tables) ?? []).map { ($0.name, $0.columns) })
        let newTables = Self.tables(of: new)
        // Tables gone from the new layout.
        for name in oldTables.keys.sorted() where !newTables.contains(where: { $0.name == name }) {
            statements.append("DROP TABLE \(quoted(name))")
        }
        var redefined: [String: Set<String>] = [:]
        for table in newTables {
            guard let oldColumns = oldTables[table.name] else {
                let columns = table.columns.map { "\(quoted($0.name)) \($0.definition)" }.joined(separator: ", ")
                statements.append("CREATE TABLE \(quoted(table.name)) (\(columns))")
                continue
            }
            let oldByName = Dictionary(uniqueKeysWithValues: oldColumns.map { ($0.name, $0.definition) })
            let newByName = Dictionary(uniqueKeysWithValues: table.columns.map { ($0.name, $0.definition) })
            for column in oldColumns where newByName[column.name] != column.definition {
                statements.append("ALTER TABLE \(quoted(table.name)) DROP COLUMN \(quoted(column.name))")
                redefined[table.name, default: []].insert(column.name)
            }
            for column in table.columns where oldByName[column.name] != column.definition {
                statements.append("ALTER TABLE \(quoted(table.name)) ADD COLUMN \(quoted(column.name)) \(column.definition)")
                if let fill = Self.defaultFill(column: column.name, table: table.name, layout: new) { defaultFills.append(fill) }
            }
        }

        indexes = Self.indexes(of: new)
        let wanted = Set(indexes.map(\.name))
        // SQLite will not drop a column an index names: an index on a column that is dropped or redefined
        // goes first (and comes back after, when the new layout still wants it).
        droppedIndexes = existingIndexes.filter { name in
            guard wanted.contains(name) else { return true }
            guard let (table, columns) = Self.indexColumns(name), let changed = redefined[table] else { return false }
            return !changed.isDisjoint(with: columns)
        }.sorted()

        // A search index's triggers name its columns, so it goes too when one of them is dropped or
        // redefined (and comes back after, filled again from the rows).
        let wantedSearch = SearchIndex.indexes(of: new)
        droppedSearchIndexes = existingSearchIndexes.filter { name in
            guard let index = SearchIndex.parse(name), wantedSearch.contains(index) else { return true }
            return !(redefined[index.table] ?? []).isDisjoint(with: index.columns)
        }.sorted()
        createdSearchIndexes = wantedSearch.filter { !existingSearchIndexes.contains($0.name) || droppedSearchIndexes.contains($0.name) }
    }

    /// A table's name and its columns (name, declaration).
    struct Table {
        let name: String
        let columns: [(name: String, definition: String)]
    }

    static func tables(of layout: StoreLayout) -> [Table] {
        let roots = layout.model.entities.filter { $0.parent == nil }.map(\.name)
        var tables = roots.map { root in
            Table(name: root, columns: [
                (StoreLayout.idColumn, "INTEGER PRIMARY KEY AUTOINCREMENT"),
                (StoreLayout.entityColumn, "TEXT NOT NULL"),
                (StoreLayout.stubColumn, "INTEGER NOT NULL DEFAULT 0"),
            ] + layout.attributeColumns(ofTable: root).map { ($0.column, ValueStorage.columnType($0.attribute.type)) }
              + layout.foreignKeyColumns(ofTable: root).map { ($0, "INTEGER") })
        }
        for join in layout.joinTables() {
            tables.append(Table(name: join.name, columns: [
                (StoreLayout.joinSource, "INTEGER NOT NULL"),
                (StoreLayout.joinDestination, "INTEGER NOT NULL"),
                (StoreLayout.joinPosition, "INTEGER NOT NULL DEFAULT 0"),
            ]))
        }
        return tables
    }

    /// The store's indexes that `indexes(of:)` names (SQLite's own and the feed's are left alone).
    static func existingIndexes(_ connection: SQLiteConnection) throws(SQLiteError) -> Set<String> {
        Set(try connection.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'ix:%'").compactMap { $0.first?.textValue })
    }

    /// Brings a store's indexes to what its committed model's layout wants, in one transaction: a store
    /// written by an earlier layout gains the indexes added since (the scan projection) when it is opened.
    static func reconcileIndexes(of layout: StoreLayout, _ connection: SQLiteConnection) throws {
        let existing = try existingIndexes(connection)
        let wanted = indexes(of: layout)
        let obsolete = existing.subtracting(wanted.map(\.name)).sorted()
        let missing = wanted.filter { !existing.contains($0.name) }
        guard !obsolete.isEmpty || !missing.isEmpty else { return }
        _ = try connection.transaction { () throws(SQLiteError) in
            for name in obsolete { try connection.execute("DROP INDEX IF EXISTS \(quoted(name))") }
            for index in missing { try connection.execute(index.sql) }
        }
    }

    /// How the names of `table`'s scan projection begin: it is the only index led by `_id` (attribute names
    /// cannot start with `_`), so a query plan that names it reads back as a scan of the projection.
    static func scanProjectionNamePrefix(ofTable table: String) -> String { "ix:\(table):\(StoreLayout.idColumn)," }

    /// The table and columns of an index named by `indexes(of:)` (`ix:<table>:<column>,-<column>`).
    static func indexColumns(_ name: String) -> (table: String, columns: Set<String>)? {
        let parts = name.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "ix" else { return nil }
        return (String(parts[1]), Set(parts[2].split(separator: ",").map { String($0.hasPrefix("-") ? $0.dropFirst() : $0) }))
    }

    /// A table's scan projection (docs/storage.md, "Scans"): `_id`, `_entity` where the table holds
    /// several entities, and every column of a fixed, small width — numbers, dates, booleans, to-one
    /// foreign keys — as one covering index. A filter and a sort on those columns read it instead of
    /// the rows, so a list without a declared index scans a few bytes per object rather than its titles
    /// and bodies. Nil when the table has no text or binary column to leave out (the index would be the
    /// table again) or nothing to keep.
    static func scanProjection(ofTable root: String, layout: StoreLayout) -> [String]? {
        let attributes = layout.attributeColumns(ofTable: root)
        let narrow = attributes.filter { ["INTEGER", "REAL"].contains(ValueStorage.columnType($0.attribute.type)) }.map(\.column)
            + layout.foreignKeyColumns(ofTable: root)
        guard !narrow.isEmpty, narrow.count < attributes.count + layout.foreignKeyColumns(ofTable: root).count else { return nil }
        let entityColumn = layout.model.entityAndSubentities(of: root).count > 1 ? [StoreLayout.entityColumn] : []
        return [StoreLayout.idColumn] + entityColumn + narrow
    }

    /// Indexes: the entity column of a table shared by several entities (a table holding one entity is
    /// never filtered by it), identification attributes, foreign keys, join-table sides, the scan
    /// projection, and what the model declares (R-M7: indexed attributes, fetch indexes). An index is
    /// named by its table and columns, so a changed declaration is a new index and the old one is dropped.
    static func indexes(of layout: StoreLayout) -> [(name: String, sql: String)] {
        var result: [(name: String, sql: String)] = []
        func add(_ table: String, _ columns: [(name: String, descending: Bool)]) {
            // `-` marks a descending column: names hold no spaces, so a query plan's `USING INDEX <name>` reads back.
            let terms = columns.map { $0.descending ? "-\($0.name)" : $0.name }
            let name = "ix:\(table):\(terms.joined(separator: ","))"
            guard !result.contains(where: { $0.name == name }) else { return }
            let list = columns.map { quoted($0.name) + ($0.descending ? " DESC" : "") }.joined(separator: ", ")
            result.append((name, "CREATE INDEX IF NOT EXISTS \(quoted(name)) ON \(quoted(table)) (\(list))"))
        }
        func add(_ table: String, _ columns: [String]) { add(table, columns.map { ($0, false) }) }
        for root in layout.model.entities.filter({ $0.parent == nil }).map(\.name) {
            let entities = layout.model.entityAndSubentities(of: root)
            if entities.count > 1 { add(root, [StoreLayout.entityColumn]) }
            for entity in entities {
                let columns = layout.model.identificationAttributes(of: entity).compactMap { layout.column(ofAttribute: $0, entity: entity) }
                if !columns.isEmpty { add(root, columns) }
            }
            for column in layout.foreignKeyColumns(ofTable: root) { add(root, [column]) }
            if let projection = scanProjection(ofTable: root, layout: layout) { add(root, projection) }
            for name in entities {
                guard let entity = layout.model.entity(named: name) else { continue }
                for attribute in entity.attributes where attribute.indexed {
                    if let column = layout.column(ofAttribute: attribute.name, entity: name) { add(root, [column]) }
                }
                for fetchIndex in entity.fetchIndexes {
                    let columns = fetchIndex.elements.compactMap { element in
                        layout.column(ofAttribute: element.attribute, entity: name).map { (name: $0, descending: element.descending) }
                    }
                    if columns.count == fetchIndex.elements.count { add(root, columns) }
                }
            }
        }
        for join in layout.joinTables() {
            add(join.name, [StoreLayout.joinSource, StoreLayout.joinPosition])
            add(join.name, [StoreLayout.joinDestination])
        }
        return result
    }

    private static func defaultFill(column: String, table: String, layout: StoreLayout)
        -> (table: String, column: String, entities: [String], value: SQLiteValue)? {
        guard let owner = layout.attributeColumns(ofTable: table).first(where: { $0.column == column }),
              let json = owner.attribute.defaultValue, !json.isNull,
              let value = try? AttributeValue.coerce(json, to: owner.attribute.type) else { return nil }
        return (table, column, layout.model.entityAndSubentities(of: owner.entity), ValueStorage.sqlite(value))
    }
}
