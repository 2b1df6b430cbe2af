// `cartograph check-store` (R-S12, docs/operations.md): what an operator runs on a store that answered
// `store-corrupt`, to learn what in it is damaged before restoring it. SQLite's integrity check stops at
// the first page it cannot read, with a message that names a page; this reads every table and index of
// the file on its own, so that each damaged one is named with what it holds for the store.
import CartographCore

/// What checking one store file found.
public struct StoreCheckReport: Sendable, Equatable {
    /// Each damaged part of the store, as an operator reads it: "table 'Entry' (the model's objects and
    /// relationships): database disk image is malformed".
    public var damaged: [String] = []
    /// What SQLite's integrity check found, in its words (at most 100).
    public var findings: [String] = []

    public var isSound: Bool { damaged.isEmpty && findings.isEmpty }
}

public enum StoreCheck {
    /// Checks the store file at `path`, opened read-only (safe while the server runs): its schema, its
    /// bookkeeping, every table and index read whole, and SQLite's integrity check.
    public static func check(path: String) -> StoreCheckReport {
        var report = StoreCheckReport()
        let connection: SQLiteConnection, trees: [StoreFileCheck.Tree]
        do {
            connection = try SQLiteConnection(path: path, readOnly: true)
            trees = try StoreFileCheck.trees(connection)
        } catch {
            report.damaged.append("its schema (the file's first page), so nothing in it can be found: \(error.message)")
            return report
        }
        do {
            if let missing = try StoreFileCheck.missingBookkeeping(trees, connection) { report.damaged.append("the store's bookkeeping: \(missing)") }
        } catch {
            report.damaged.append("the store's bookkeeping (\(ModelStore.metaTable)): \(error.message)")
        }
        for tree in trees {
            do { try readWhole(tree, connection) } catch { report.damaged.append("\(describe(tree)): \(error.message)") }
        }
        report.findings = integrityFindings(connection)
        return report
    }

    /// Steps through every entry of `tree` with all its columns (overflow pages included): a table's rows,
    /// an index's entries read from the index alone.
    private static func readWhole(_ tree: StoreFileCheck.Tree, _ connection: SQLiteConnection) throws(SQLiteError) {
        guard let table = tree.indexedTable else {
            return try connection.prepare("SELECT * FROM \(quoted(tree.name)) NOT INDEXED").run()
        }
        let columns = try connection.prepare("SELECT name FROM pragma_index_info(?) ORDER BY seqno").rows([.text(tree.name)])
            .compactMap { $0.first?.textValue.map(quoted) }
        // Only the indexed columns: the index covers them, so its cells are read and no table row is.
        let selected = columns.isEmpty ? "1" : columns.joined(separator: ", ")
        try connection.prepare("SELECT \(selected) FROM \(quoted(table)) INDEXED BY \(quoted(tree.name))").run()
    }

    /// What a table or index holds for the store.
    static func describe(_ tree: StoreFileCheck.Tree) -> String {
        if let table = tree.indexedTable { return "index '\(tree.name)' of table '\(table)' (built from the table; REINDEX rebuilds it)" }
        let holds: String
        switch tree.name {
        case ModelStore.metaTable: holds = "the model, its version and the change feed's epoch"
        case ModelStore.mappingsTable: holds = "the mappings"
        case ModelStore.idempotencyTable: holds = "the answers kept for retried payloads (idempotency keys)"
        case ChangeFeed.table, ChangeFeed.legacyTable: holds = "the change feed"
        case StoreTransaction.pendingTable, StoreTransaction.pendingTargetsTable: holds = "the foreign keys waiting for their objects"
        case SnapshotSessionTables.sessions, SnapshotSessionTables.mentions: holds = "the snapshot sessions"
        case "sqlite_sequence": holds = "the counters of object ids"
        case let name where StoreFileCheck.isObjectTable(name): holds = "the model's objects and relationships"
        default: holds = "SQLite's own records"
        }
        return "table '\(tree.name)' (\(holds))"
    }

    /// SQLite's `PRAGMA integrity_check(100)`, each problem it reported before it finished or stopped,
    /// and why it stopped; empty when it found the file sound.
    private static func integrityFindings(_ connection: SQLiteConnection) -> [String] {
        var findings: [String] = []
        do {
            let statement = try connection.prepare("PRAGMA integrity_check(100)")
            while try statement.step() {
                // The first problem comes after a line naming the database ("*** in database main ***").
                let lines = statement.column(0).textValue?.split(separator: "\n").map(String.init) ?? []
                findings += lines.filter { $0 != "ok" && !$0.hasPrefix("*** in database") }
            }
        } catch {
            findings.append("the integrity check stopped: \(error.message)")
        }
        return findings
    }
}
