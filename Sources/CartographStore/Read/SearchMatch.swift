// What `search=` adds to a page's query (R-Q6): the entity's table joined to its search index by
// `_id`, the index's MATCH (the search bound as a parameter), its rank (FTS5's bm25, lower is better)
// as a sort key, and each page object's highlighted excerpt when `fields` asks for `_snippet`.
import CartographCore
import CartographPredicate

struct SearchMatch {
    let index: SearchIndex
    let query: SearchQuery

    /// The `orderBy` key of the rank, and the default order of a search: best match first, `_id` breaking ties.
    static let rankKey = "_rank"
    /// The `fields` name of the excerpt.
    static let snippetField = "_snippet"
    /// How a snippet marks the words that matched, and what stands for the text it leaves out.
    static let highlight = (open: "<mark>", close: "</mark>", ellipsis: "…")
    /// Words in a snippet (FTS5 takes at most 64).
    static let snippetWords = 24

    private static let alias = "\"search\""
    /// The rank's SQL, a sort key like a column.
    static let rankColumn = "\(alias).rank"

    /// The search `text` over `entity`'s searchable attributes; a 400 when it is malformed (at its
    /// offset) or when no attribute of the entity's table is searchable (naming those that could be).
    init(_ text: String, entity: String, layout: StoreLayout) throws(CartographError) {
        guard let index = SearchIndex.index(of: entity, layout: layout) else {
            let candidates = layout.model.entityAndSubentities(of: entity).flatMap { layout.model.allAttributes(of: $0) }
                .filter { $0.type == .string }.map(\.name)
            let advice = candidates.isEmpty
                ? "it has no string attribute to make searchable"
                : "declare \"searchable\": true on one in the model and PUT it again "
                    + NameSuggestion.list(Array(Set(candidates)), kind: "its string attributes")
            throw CartographError(.badRequest, "'\(entity)' has no searchable attribute, so search cannot apply: \(advice).",
                                  errors: [.init(pointer: "/search", message: "no searchable attribute")])
        }
        do { query = try SearchQuery(parsing: text) } catch {
            throw CartographError(.badRequest, "Invalid search: \(error.message) (at offset \(error.offset)).",
                                  errors: [.init(pointer: "/search", message: error.message, offset: error.offset)], offset: error.offset,
                                  underlying: error)
                .quotingRequestValues()
        }
        self.index = index
    }

    /// The index as a table of a FROM clause; its rowid is the object's `_id` (`rowidColumn`).
    var table: String { "\(quoted(index.name)) AS \(Self.alias)" }
    static let rowidColumn = "\(alias).rowid"

    /// The MATCH condition, the search bound as parameter `?parameter`.
    func condition(parameter: Int) -> String { "\(Self.alias).\(quoted(index.name)) MATCH ?\(parameter)" }

    var binding: SQLiteValue { .text(query.fts5) }

    /// `compiled` narrowed to the search's matches: its table joined to the index, the MATCH added to its
    /// condition, the search bound after its values. A page, its count and its facets (R-Q8) read this.
    func narrowing(_ compiled: SQLPredicate) -> SQLPredicate {
        SQLPredicate(fromClause: "\(compiled.fromClause) JOIN \(table) ON \(Self.rowidColumn) = \(compiled.alias).\(StoreLayout.idColumn)",
                     alias: compiled.alias, whereClause: "\(compiled.whereClause) AND \(condition(parameter: compiled.bindings.count + 1))",
                     bindings: compiled.bindings + [.text(query.fts5)], counts: compiled.counts)
    }

    /// The excerpt of each of `ids` around what the search matched, its matches between `<mark>` and
    /// `</mark>` (from the column that matched best), by `_id`.
    func snippets(of ids: [Int64], connection: SQLiteConnection) throws(SQLiteError) -> [Int64: String] {
        guard !ids.isEmpty else { return [:] }
        let fts = quoted(index.name)
        let marks = (0..<ids.count).map { "?\($0 + 5)" }.joined(separator: ", ")
        let sql = "SELECT rowid, snippet(\(fts), -1, ?1, ?2, ?3, \(Self.snippetWords)) FROM \(fts) WHERE \(fts) MATCH ?4 AND rowid IN (\(marks))"
        let bindings: [SQLiteValue] = [.text(Self.highlight.open), .text(Self.highlight.close), .text(Self.highlight.ellipsis), binding]
            + ids.map { .integer($0) }
        var result: [Int64: String] = [:]
        for row in try connection.rows(sql, bindings) {
            if let id = row[0].integerValue { result[id] = row[1].textValue ?? "" }
        }
        return result
    }
}
