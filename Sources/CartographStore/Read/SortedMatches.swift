// Choosing a page when no index delivers its order: SQLite reads every match and keeps the best ones in
// a small sorted b-tree, comparing each match with the worst it keeps (docs/storage.md, "Reading a page").
// Ordered by the sort keys alone, that comparison is of one column fewer than with `_id` as the last
// key: the list of 50 over 100k articles without an index took 3.8 ms in SQLite instead of 4.6 ms
// (Python's sqlite3, same file, five interleaved rounds of 40). Rows whose sort keys are equal then come
// back in no particular order, so `_id` orders them here; only a run of equal keys that crosses the end
// of what the page needs sends the page to the query that orders by `_id` too.
import CartographCore

/// The `_id` and sort values of the first matches of a page, in the page's order.
typealias SortedMatch = (id: Int64, sortValues: [SQLiteValue])

enum SortedMatches {
    /// Whether a sort key of `type` can leave its ties to `resolvingTies`: its values are numbers or
    /// nil, which SQLite orders without a collation, so equal values are equal stored values.
    static func tiesCanBeOrderedHere(_ type: AttributeType?) -> Bool {
        switch type {
        case .integer16?, .integer32?, .integer64?, .double?, .float?, .boolean?, .date?: true
        case .decimal?, .string?, .binary?, .uuid?, .uri?, .transformable?, nil: false
        }
    }

    /// The first `needed` of `rows` in the page's order, from `rows` as SQLite sorted them by their sort
    /// keys only (at most `needed + 1` of them, read with `LIMIT needed + 1`): each run of equal keys
    /// ordered by `_id` (descending when `idDescending`). Nil when the run at the end of what is needed
    /// goes on past it (which of its rows come first depends on rows not read), or when two neighbours'
    /// keys cannot be compared here (values of two storage classes, as integer 5 and real 5.0 are equal
    /// to SQLite).
    static func resolvingTies(_ rows: [SortedMatch], needed: Int, idDescending: Bool) -> [SortedMatch]? {
        if rows.count > needed {
            guard let equal = sameKeys(rows[needed - 1].sortValues, rows[needed].sortValues), !equal else { return nil }
        }
        var page = Array(rows.prefix(needed))
        var runStart = 0
        for index in page.indices.dropFirst() {
            guard let equal = sameKeys(page[index - 1].sortValues, page[index].sortValues) else { return nil }
            if equal { continue }
            sortByID(&page[runStart..<index], descending: idDescending)
            runStart = index
        }
        sortByID(&page[runStart...], descending: idDescending)
        return page
    }

    private static func sortByID(_ run: inout ArraySlice<SortedMatch>, descending: Bool) {
        guard run.count > 1 else { return }
        run.sort { descending ? $0.id > $1.id : $0.id < $1.id }
    }

    /// Whether two rows' sort values are equal as SQLite orders them; nil when that cannot be told
    /// from the values alone.
    private static func sameKeys(_ a: [SQLiteValue], _ b: [SQLiteValue]) -> Bool? {
        var equal = true
        for (x, y) in zip(a, b) {
            switch (x, y) {
            case (.null, .null): continue
            case (.integer(let u), .integer(let v)): equal = equal && u == v
            case (.real(let u), .real(let v)): equal = equal && u == v
            case (.null, _), (_, .null): equal = false
            case (.integer, _), (.real, _), (.text, _), (.blob, _): return nil
            }
        }
        return equal
    }
}
