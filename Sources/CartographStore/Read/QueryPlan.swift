// `explain=true` on a query (R-Q5, docs/predicates.md "Indexes and query plans"): how SQLite runs the
// page's query, from `EXPLAIN QUERY PLAN`, in words a user can act on — the index used, or a full scan
// and a sort of every match, and which declaration would serve the order.
import CartographPredicate
import Foundation

/// How SQLite runs one query.
public struct QueryPlan: Sendable, Equatable {
    /// SQLite's plan steps, in order (`SCAN`, `SEARCH … USING INDEX …`, `USE TEMP B-TREE FOR ORDER BY`).
    public let steps: [String]
    /// The store's indexes the plan uses, by their store names (`ix:<table>:<columns>`).
    public let indexes: [String]
    /// The entity's table is read row by row, every row (no index narrows or orders the read).
    public let fullScan: Bool
    /// Every match is sorted before the page is taken: no index delivers the order.
    public let sortsEveryMatch: Bool
    /// One sentence: what the plan does, and what to declare when it is slow.
    public let summary: String

    init(explaining sql: String, bindings: [SQLiteValue], connection: SQLiteConnection, entity: String, table: String,
         alias: String, orderBy: [String], counts: SQLCountForms = [], everyMatchCounts: SQLCountForms = []) throws(SQLiteError) {
        let statement = try connection.prepare("EXPLAIN QUERY PLAN " + sql)
        try statement.bind(bindings)
        var steps: [String] = []
        // Columns: id, parent, notused, detail. The entity table's alias reads as the table.
        let bareAlias = alias.trimmingCharacters(in: ["\""])
        while try statement.step() {
            guard let detail = statement.column(3).textValue else { continue }
            steps.append(detail.split(separator: " ", omittingEmptySubsequences: false)
                .map { $0 == bareAlias ? table : String($0) }.joined(separator: " "))
        }
        self.steps = steps
        // Index names hold no spaces (`SchemaPlan.indexes`): the name is the word after `INDEX`.
        func index(of step: String) -> String? {
            let words = step.split(separator: " ")
            guard let position = words.firstIndex(of: "INDEX"), position + 1 < words.count else { return nil }
            return String(words[position + 1])
        }
        // A search index's step (`SCAN search VIRTUAL TABLE INDEX 0:M3`) names FTS5's plan, not an index.
        indexes = steps.filter { !$0.contains(" VIRTUAL TABLE ") }.compactMap(index(of:))
        let tableSteps = steps.filter { $0.hasPrefix("SCAN \(table)") || $0.hasPrefix("SEARCH \(table)") }
        // Reading the whole scan projection (`SchemaPlan.scanProjection`) is still a full scan: narrower than
        // the rows, but every object's entry.
        let projection = SchemaPlan.scanProjectionNamePrefix(ofTable: table)
        let readsProjection = tableSteps.contains { $0.hasPrefix("SCAN \(table) USING COVERING INDEX \(projection)") }
        fullScan = readsProjection || tableSteps.contains { $0 == "SCAN \(table)" }
        sortsEveryMatch = steps.contains { $0.contains("TEMP B-TREE FOR ORDER BY") || $0.contains("TEMP B-TREE FOR RIGHT PART OF ORDER BY") }
        var words: [String] = []
        if steps.contains(where: { $0.contains(" VIRTUAL TABLE ") }) {
            words.append("finds the search's matches in the full-text index")
        }
        if readsProjection {
            words.append("reads every \(entity) row's numbers, dates and keys from the table's scan projection (a full scan that leaves text out)")
        } else if fullScan {
            words.append("reads every \(entity) row (full scan)")
        } else if let step = tableSteps.first, step.hasPrefix("SEARCH \(table) USING INTEGER PRIMARY KEY") {
            words.append("finds \(entity) rows by _id from the matches of a relationship condition (ANY, NONE), found once from its destinations' side")
        } else if let step = tableSteps.first, let index = index(of: step) {
            words.append(step.hasPrefix("SCAN") ? "reads \(entity) in the order of index \(index)" : "finds \(entity) rows through index \(index)")
        }
        // ANY/NONE/ALL compiled as EXISTS, or a semi-join that only filters: how the relationship is read.
        // The compiler says how it counted (`@count`): the plan's steps look alike for ANY and @count, and
        // the total and facets, which read every match, may count otherwise than the page (`everyMatch`).
        if steps.contains(where: { $0.hasPrefix("CORRELATED SCALAR SUBQUERY") }) {
            words.append(counts.contains(.perRow) ? "counts related objects (@count) with a subquery for every row it reads"
                                                  : "runs a relationship condition's subquery for every row it reads")
        } else if steps.contains(where: { $0.hasPrefix("LIST SUBQUERY") }), fullScan {
            words.append("tests each row against a relationship condition's matches, found once")
        }
        if everyMatchCounts.contains(.grouped) {
            words.append("counts related objects (@count) for the total and facets once per object that has any, grouped from the relationship's index")
        }
        if sortsEveryMatch {
            words.append("sorts every match before taking the page")
        } else if !orderBy.isEmpty {
            words.append("takes the page in index order without sorting")
        }
        var summary = words.joined(separator: ", then ")
        // A search's rank is computed per match: no index can serve it.
        if let first = orderBy.first, first != SearchMatch.rankKey, sortsEveryMatch || fullScan {
            summary += "; declaring \"indexed\": true on \(entity).\(first) (or a fetch index starting with it) lets SQLite read in order and stop after the page"
        }
        self.summary = summary.isEmpty ? "runs without reading \(entity) rows" : summary + "."
    }
}
