// Full-text indexes (R-Q6, docs/storage.md "Search"): one FTS5 table per hierarchy table with
// searchable attributes, over those columns, with the table as its external content (`content=`,
// keyed by `_id`): the index holds the words, not a second copy of the text, and `snippet()` reads the
// text from the row. Triggers on the table keep it in the same transaction as every write (inserts,
// updates, deletes of any kind: a payload's, a delete rule's cascade, a bulk delete, a migration's).
import CartographCore

struct SearchIndex: Equatable {
    /// The hierarchy's table.
    let table: String
    /// Its searchable columns, in the table's order.
    let columns: [String]

    /// `fts:<table>:<columns>`: named by what it covers, so a changed column list is a new index (and
    /// the old one is dropped), as `SchemaPlan.indexes` names indexes.
    var name: String { "\(Self.namePrefix)\(table):\(columns.joined(separator: ","))" }

    static let namePrefix = "fts:"

    /// The search index of each table with searchable attributes.
    static func indexes(of layout: StoreLayout) -> [SearchIndex] {
        layout.model.entities.filter { $0.parent == nil }.compactMap { root in
            let columns = layout.attributeColumns(ofTable: root.name).filter(\.attribute.searchable).map(\.column)
            return columns.isEmpty ? nil : SearchIndex(table: root.name, columns: columns)
        }
    }

    /// The index that serves `search` on `entity`: its table's, nil when no attribute of the table is searchable.
    static func index(of entity: String, layout: StoreLayout) -> SearchIndex? {
        let table = layout.table(of: entity)
        return indexes(of: layout).first { $0.table == table }
    }

    /// The store's search indexes by name (their FTS5 shadow tables, `<name>_data` and the others, are not listed).
    static func existing(_ connection: SQLiteConnection) throws(SQLiteError) -> Set<String> {
        Set(try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'fts:%' AND sql LIKE 'CREATE VIRTUAL TABLE%'")
            .compactMap { $0.first?.textValue })
    }

    /// The table and columns an existing index's name says it covers.
    static func parse(_ name: String) -> SearchIndex? {
        let parts = name.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, "\(parts[0]):" == namePrefix else { return nil }
        return SearchIndex(table: String(parts[1]), columns: parts[2].split(separator: ",").map(String.init))
    }

    private static let triggerKinds = ["insert", "delete", "update"]

    /// Drops the index and its triggers (which live on the table, so dropping the FTS5 table leaves them).
    static func dropStatements(name: String) -> [String] {
        triggerKinds.map { "DROP TRIGGER IF EXISTS \(quoted("\(name):\($0)"))" } + ["DROP TABLE IF EXISTS \(quoted(name))"]
    }

    /// Creates the index and its triggers, and indexes the rows the table already holds.
    var createStatements: [String] {
        let fts = quoted(name), table = quoted(self.table)
        let list = columns.map(quoted).joined(separator: ", ")
        func values(_ row: String) -> String { ([row + "." + StoreLayout.idColumn] + columns.map { row + "." + quoted($0) }).joined(separator: ", ") }
        let insert = "INSERT INTO \(fts) (rowid, \(list)) VALUES (\(values("new")));"
        // An external-content index forgets a row by being told the values it indexed.
        let delete = "INSERT INTO \(fts) (\(fts), rowid, \(list)) VALUES ('delete', \(values("old")));"
        return [
            // unicode61 folds case and, with remove_diacritics 2, accents: "Café" is found by "cafe".
            "CREATE VIRTUAL TABLE \(fts) USING fts5(\(list), content=\(table), content_rowid=\(StoreLayout.idColumn), "
                + "tokenize='unicode61 remove_diacritics 2')",
            "CREATE TRIGGER \(quoted("\(name):insert")) AFTER INSERT ON \(table) BEGIN \(insert) END",
            "CREATE TRIGGER \(quoted("\(name):delete")) AFTER DELETE ON \(table) BEGIN \(delete) END",
            "CREATE TRIGGER \(quoted("\(name):update")) AFTER UPDATE OF \(list) ON \(table) BEGIN \(delete) \(insert) END",
            "INSERT INTO \(fts) (\(fts)) VALUES ('rebuild')",
        ]
    }
}
