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

    init(from old: StoreLayout?, to new: StoreLayout, existingIndexes: Set<String>) {
        let newEntities = Set(new.model.entities.map(\.name))
        removedEntities = old?.model.entities.map(\.name).filter { !newEntities.contains($0) || old?.model.rootEntity(of: $0) != new.model.rootEntity(of: $0) } ?? []

        indexes = Self.indexes(of: new)
        let wanted = Set(indexes.map(\.name))
        droppedIndexes = existingIndexes.subtracting(wanted).sorted()

        let oldTables = Dictionary(uniqueKeysWithValues: (old.map(Self.tables) ?? []).map { ($0.name, $0.columns) })
        let newTables = Self.tables(of: new)
        // Tables gone from the new layout.
        for name in oldTables.keys.sorted() where !newTables.contains(where: { $0.name == name }) {
            statements.append("DROP TABLE \(quoted(name))")
        }
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
            }
            for column in table.columns where oldByName[column.name] != column.definition {
                statements.append("ALTER TABLE \(quoted(table.name)) ADD COLUMN \(quoted(column.name)) \(column.definition)")
                if let fill = Self.defaultFill(column: column.name, table: table.name, layout: new) { defaultFills.append(fill) }
            }
        }
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

    /// Indexes: the entity column of a table shared by several entities (a table holding one entity is
    /// never filtered by it), identification attributes, foreign keys, join-table sides, and what the
    /// model declares (R-M7: indexed attributes, fetch indexes). An index is named by its table and
    /// columns, so a changed declaration is a new index and the old one is dropped.
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
