// What opening a store checks of an existing file before anything is written to it (R-S12,
// docs/errors.md#storage-faults). SQLite reports a damaged page only when it reads it, and a damaged
// page can read as an empty one: a store whose meta rows could no longer be found looked like a store
// without a model (404 "No model 'ledger' …"), and opening it created fresh tables inside the damaged
// file. So the file is read first — its schema, the first and the last entry of every table and index,
// and the rows a store cannot be without — and only a sound one is opened for writing. The rest of a
// file is read when a request needs it (a damaged page there answers `store-corrupt` then); the whole
// of it only by `cartograph check-store`.
import CartographCore

/// Why a store's file cannot be used as a store.
public enum StoreFileDamage: Error, Sendable, CustomStringConvertible {
    /// SQLite failed to read it.
    case unreadable(SQLiteError)
    /// It reads without an error, but does not hold what a store holds: the reason says what is missing.
    case inconsistent(String)

    public var description: String {
        switch self {
        case .unreadable(let error): error.message
        case .inconsistent(let reason): reason
        }
    }
}

enum StoreFileCheck {
    /// A table or an index the file's schema lists.
    struct Tree {
        let name: String
        /// The table an index belongs to, nil for a table.
        let indexedTable: String?
    }

    /// Throws when the file at `connection` is not a sound store; returns for a sound one and for a file
    /// no store was ever committed to (a new file).
    static func verify(_ connection: SQLiteConnection) throws(StoreFileDamage) {
        let problem: String?
        do { problem = try inconsistency(connection) } catch { throw .unreadable(error) }
        if let problem { throw .inconsistent(problem) }
    }

    /// Every table and index of the file, its schema read (SQLite fails here on a damaged first page).
    /// A virtual table (a search index, R-Q6) has no b-tree of its own (root page 0): its shadow tables are listed.
    static func trees(_ connection: SQLiteConnection) throws(SQLiteError) -> [Tree] {
        try connection.prepare("SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index') AND rootpage > 0 ORDER BY rootpage").rows()
            .map { row in
                let name = row[1].textValue ?? ""
                return Tree(name: name, indexedTable: row[0].textValue == "index" ? row[2].textValue ?? "" : nil)
            }
    }

    /// What makes the file not a store, or nil; SQLite's errors reading it are thrown.
    private static func inconsistency(_ connection: SQLiteConnection) throws(SQLiteError) -> String? {
        let trees = try trees(connection)
        guard !trees.isEmpty else {
            // A file no store was committed to has at most its first page; pages no table owns are damage.
            let pages = try connection.prepare("PRAGMA page_count").rows().first?.first?.integerValue ?? 0
            return pages > 1 ? "its schema lists no table, yet it holds \(pages) pages" : nil
        }
        try readEdges(of: trees, connection)
        return try missingBookkeeping(trees, connection)
    }

    /// What a store cannot be without and the file lacks, or nil: the table of its model, and the model
    /// itself once the file holds a model's tables.
    static func missingBookkeeping(_ trees: [Tree], _ connection: SQLiteConnection) throws(SQLiteError) -> String? {
        let tables = Set(trees.filter { $0.indexedTable == nil }.map(\.name))
        guard tables.contains(ModelStore.metaTable) else { return "it has no \(ModelStore.metaTable) table, where a store keeps its model" }
        // Looked up as the store looks it up (through the table's index), so what is found here is what opening finds.
        let hasModel = try !connection.prepare("SELECT 1 FROM \(quoted(ModelStore.metaTable)) WHERE key = 'model'").rows().isEmpty
        if !hasModel, let table = tables.filter(isObjectTable).min() {
            return "its model cannot be found, yet the table '\(table)' of its objects is there"
        }
        return nil
    }

    /// Whether `table` holds a model's objects or relationships rather than the store's own bookkeeping.
    static func isObjectTable(_ table: String) -> Bool { !table.hasPrefix("_cartograph_") && !table.hasPrefix("sqlite_") }

    /// Reads the first and the last entry of every table and index — each one's root page and the pages down its
    /// two edges — with SQLite's cell checks on: a page there overwritten with anything but a valid page fails.
    private static func readEdges(of trees: [Tree], _ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.execute("PRAGMA cell_size_check = ON")
        defer { try? connection.execute("PRAGMA cell_size_check = OFF") }
        let withoutRowID = Set(try connection.prepare("SELECT name FROM pragma_table_list WHERE schema = 'main' AND wr").rows()
            .compactMap { $0.first?.textValue })
        for tree in trees {
            // The b-tree's first key column (as SQL), nil for an index on an expression.
            let source: String, key: String?
            if let table = tree.indexedTable {
                source = "\(quoted(table)) INDEXED BY \(quoted(tree.name))"
                key = try connection.prepare("SELECT name FROM pragma_index_info(?) WHERE seqno = 0").rows([.text(tree.name)])
                    .first?.first?.textValue.map(quoted)
            } else if withoutRowID.contains(tree.name) {
                source = "\(quoted(tree.name)) NOT INDEXED"
                key = try connection.prepare("SELECT name FROM pragma_table_info(?) WHERE pk = 1").rows([.text(tree.name)])
                    .first?.first?.textValue.map(quoted)
            } else {
                source = "\(quoted(tree.name)) NOT INDEXED"
                key = "rowid"
            }
            // Scanning a b-tree in its key's order, both ways, starts at its two ends; without a key, at its first.
            for order in key.map({ ["ORDER BY \($0) ASC", "ORDER BY \($0) DESC"] }) ?? [""] {
                _ = try connection.prepare("SELECT 1 FROM \(source) \(order) LIMIT 1").rows()
            }
        }
    }
}
