// Queries over one read snapshot (R-Q1…R-Q4): filtered, ordered pages with a keyset cursor,
// counts, includes, lookup by key, objects in either shape, and the change feed (R-D4).
import Foundation
public import CartographCore
import CartographMapping
public import CartographPredicate

/// How objects are rendered (R-Q4).
public enum ObjectShape: String, Sendable, CaseIterable {
    /// Attributes by name, to-one as the destination's key, to-many as an array of keys, `_entity`, `_id`:
    /// as the read's `ObjectRenderer` writes them.
    case model
    /// Exported through the model's annotations, as Groot serializes objects back to JSON.
    case json
}

/// A query for one entity's objects (its sub-entities included, R-M3).
public struct ObjectQuery: Sendable {
    public var entity: String
    /// The `where` predicate text, and `$variables` for it.
    public var predicate: String?
    public var arguments: [String: JSONValue]
    /// Attribute names; descending when `descending` is true.
    public var orderBy: [(attribute: String, descending: Bool)]
    public var limit: Int
    public var cursor: String?
    /// Relationship paths to embed (`["publisher"]`, `["characters", "publisher"]`); `shape=model` only.
    public var include: [[String]]
    public var count: Bool
    /// How the objects are rendered (R-Q4).
    public var shape: ObjectShape
    /// Add how SQLite runs the query (R-Q5).
    public var explain: Bool
    /// The attributes and relationships to render (`shape=model`); nil renders all (R-Q4).
    public var fields: [String]?
    /// With `shape=json`: the registered mapping whose inverse writes the objects; nil writes them as
    /// the model's annotations say (R-Q4).
    public var mapping: String?
    /// Full-text search over the entity's searchable attributes (R-Q6); then the default order is the
    /// rank (`_rank`), and `fields` may name `_snippet`.
    public var search: String?

    /// The `orderBy` key of a search's rank, and the `fields` name of its excerpt (R-Q6).
    public static let rankKey = SearchMatch.rankKey
    public static let snippetField = SearchMatch.snippetField
    /// Key paths whose commonest values are counted over the whole filtered set (R-Q8), and how many
    /// values each lists.
    public var facets: [String] = []
    public var facetLimit = 10

    public init(entity: String, predicate: String? = nil, arguments: [String: JSONValue] = [:],
                orderBy: [(attribute: String, descending: Bool)] = [], limit: Int = 50, cursor: String? = nil,
                include: [[String]] = [], count: Bool = false, shape: ObjectShape = .model, explain: Bool = false,
                fields: [String]? = nil, mapping: String? = nil, search: String? = nil) {
        self.entity = entity
        self.predicate = predicate
        self.arguments = arguments
        self.orderBy = orderBy
        self.limit = limit
        self.cursor = cursor
        self.include = include
        self.count = count
        self.shape = shape
        self.explain = explain
        self.fields = fields
        self.mapping = mapping
        self.search = search
    }
}

/// One page of objects.
public struct ObjectPage: Sendable {
    /// The objects as the page's `ObjectRenderer` wrote them (`shape=model`), or as exported (`shape=json`).
    public let items: [RenderedJSON]
    public let next: String?
    public let total: Int?
    /// How SQLite ran the page's query, when `explain` asked (R-Q5).
    public let plan: QueryPlan?
    /// Rows of the entity's table the page's query read one by one without an index (SQLite's count of
    /// full-scan steps): the server logs a query shape that keeps doing this (the index advisor).
    public let fullScanRows: Int
    /// What the `where` predicate probably does not mean (a LIKE pattern with SQL's wildcards), at its offset.
    public let warnings: [CartographError.Detail]
    /// The facets asked for, in the order asked (R-Q8).
    public let facets: [Facet]
    /// With `fields` naming `_snippet` on a search: each item's excerpt, in the items' order (R-Q6).
    public let snippets: [String]?
}

/// Read access to one snapshot of a store. Not Sendable: valid only inside `ModelStore.read`.
public struct StoreReader {
    let reader: ObjectReader
    public var model: Model { reader.model }
    var layout: StoreLayout { reader.layout }

    func sqlite<T>(_ body: () throws(SQLiteError) -> T) throws(CartographError) -> T {
        do { return try body() } catch { throw CartographError.store(error, "Store read failed") }
    }

    /// Checks `query` against the model and runs it; `renderer` writes the objects of `shape=model`.
    public func page<Renderer: ObjectRenderer>(_ query: ObjectQuery, renderer: Renderer) throws(CartographError) -> ObjectPage {
        guard model.entity(named: query.entity) != nil else {
            throw model.unknownEntity(query.entity)
        }
        guard (1...1000).contains(query.limit) else {
            throw CartographError(.badRequest, "limit must be between 1 and 1000.", errors: [.init(pointer: "/limit", message: "out of range")])
        }
        try Self.check(include: query.include, shape: query.shape)
        try validate(include: query.include, entity: query.entity)
        let search = try query.search.map { (text) throws(CartographError) in try SearchMatch(text, entity: query.entity, layout: layout) }
        let wantsSnippets = query.fields?.contains(SearchMatch.snippetField) ?? false
        if wantsSnippets, search == nil {
            throw CartographError(.badRequest, "fields names _snippet, the excerpt of a search's match: add search=<terms>, or leave _snippet out.",
                                  errors: [.init(pointer: "/fields", message: "_snippet needs search")])
        }
        let fields = try validate(fields: query.fields?.filter { $0 != SearchMatch.snippetField }, entity: query.entity, shape: query.shape)
        let rendering = try rendering(of: query.entity, shape: query.shape, mapping: query.mapping)
        let checked = try Self.check(query.predicate ?? "TRUEPREDICATE", entity: query.entity, model: model, arguments: query.arguments,
                                     pointer: "/where")
        let compiled = try compile(checked, everyMatch: false)
        // The count and the facets read every match, where a `@count` is cheaper grouped once than
        // counted per row; the page may stop early, where it is not (`SQLCompiler.groupedCount`).
        let everyMatch = query.count || !query.facets.isEmpty ? try compile(checked, everyMatch: true) : compiled
        let alias = compiled.alias
        // A search is ordered by its rank unless told otherwise, `_id` breaking ties as for any order.
        let orderBy = query.orderBy.isEmpty && search != nil ? [(attribute: SearchMatch.rankKey, descending: false)] : query.orderBy
        var keys: [(column: String, type: AttributeType?, descending: Bool)] = []
        for order in orderBy {
            guard order.attribute == SearchMatch.rankKey else {
                let (expression, type) = try sortKey(order.attribute, entity: query.entity, alias: alias)
                keys.append((expression, type, order.descending))
                continue
            }
            guard search != nil else {
                throw CartographError(.badRequest, "orderBy _rank orders a search's matches by relevance: add search=<terms>, or order by an attribute.",
                                      errors: [.init(pointer: "/orderBy", message: "_rank needs search")])
            }
            keys.append((SearchMatch.rankColumn, .double, order.descending))
        }
        let fingerprint = orderBy.map { ($0.descending ? "-" : "") + $0.attribute }.joined(separator: ",")
        // The rows the query reads: the entity's table, joined to its search index when searching. A search
        // without `where`, ordered by its rank alone, of an entity with its table to itself reads the index
        // alone: the table's rows are then read for the page only, not once per match (docs/storage.md "Search").
        let searchAlone = query.predicate == nil && layout.coversTable(query.entity) && !keys.isEmpty
            && keys.allSatisfy { $0.column == SearchMatch.rankColumn }
        let from: String, idColumn: String
        var conditions: [String], bindings: [SQLiteValue]
        if let search, searchAlone {
            from = search.table
            idColumn = SearchMatch.rowidColumn
            conditions = [search.condition(parameter: 1)]
            bindings = [search.binding]
        } else {
            let selected = search.map { $0.narrowing(compiled) } ?? compiled
            from = selected.fromClause
            idColumn = "\(alias)._id"
            conditions = [selected.whereClause]
            bindings = selected.bindings.map(SQLiteValue.init)
        }
        // What the count reads: the search index alone, or the predicate compiled for every match.
        let counted = search.map { $0.narrowing(everyMatch) } ?? everyMatch
        let matching = searchAlone ? (clause: conditions.joined(separator: " AND "), bindings: bindings)
            : (clause: counted.whereClause, bindings: counted.bindings.map(SQLiteValue.init))
        if let cursor = query.cursor {
            let after = try KeysetCursor.decode(cursor, fingerprint: fingerprint, keyCount: keys.count)
            let (sql, values) = KeysetCursor.condition(keys: keys, idColumn: idColumn, idDescending: keys.last?.descending ?? false,
                                                       after: after, firstParameter: bindings.count + 1)
            conditions.append(sql)
            bindings += values
        }
        // `_id` breaks ties in the last key's direction, so an index on that key (whose entries end in
        // the rowid) can deliver the order without sorting every match.
        let idDescending = keys.last?.descending ?? false
        let orderClause = (keys.map { "\($0.column)\(collation($0.type)) \($0.descending ? "DESC" : "ASC")" }
            + ["\(idColumn) \(idDescending ? "DESC" : "ASC")"]).joined(separator: ", ")
        // The page is chosen first, by `_id` and the sort keys only, so SQLite can answer from a covering
        // index (a declared one, or the table's scan projection: docs/storage.md) without reading titles
        // and bodies; then only the page's rows are read whole. When an index delivers the order, SQLite
        // reads the page's rows in that order anyway and stops after the page: then one statement selects
        // the rendered columns too, and each row is read once (`pageRows`).
        let table = layout.table(of: query.entity)
        let sortColumns = keys.map { ", " + $0.column }.joined()
        let fromWhereOrder = " FROM \(from) WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(orderClause) LIMIT \(query.limit + 1)"
        let sql = "SELECT \(idColumn)" + sortColumns + fromWhereOrder
        let plan = query.explain ? try sqlite { () throws(SQLiteError) in
            try QueryPlan(explaining: sql, bindings: bindings, connection: reader.connection, entity: query.entity,
                          table: table, alias: alias, orderBy: orderBy.map(\.attribute), counts: compiled.counts,
                          everyMatchCounts: everyMatch.counts)
        } : nil
        var fullScanRows = 0
        let found: PageItems
        let rows = layout.tableRows(for: table)
        let rowsSQL = "SELECT \(rows.selectList(alias: alias))" + sortColumns + fromWhereOrder
        if case .model = rendering, query.include.isEmpty, !searchAlone,
           try sqlite({ () throws(SQLiteError) in try readsInIndexOrder(sql, rowsSQL: rowsSQL, bindings: bindings, table: table, alias: alias) }) {
            found = try sqlite { () throws(SQLiteError) in
                try pageRows(rowsSQL, bindings: bindings, rows: rows, renderer: renderer, sortKeyCount: keys.count, limit: query.limit,
                             fields: fields, fullScanRows: &fullScanRows)
            }
        } else {
            func matches(_ sql: String) throws(SQLiteError) -> [SortedMatch] {
                let statement = try reader.connection.cached(sql)
                try statement.bind(bindings)
                defer { try? statement.bind([]) }
                _ = statement.takeFullScanSteps()
                var result: [SortedMatch] = []
                while try statement.step() {
                    guard let id = statement.column(0).integerValue else { continue }
                    result.append((id, (0..<keys.count).map { statement.column(Int32(1 + $0)) }))
                }
                fullScanRows += statement.takeFullScanSteps()
                return result
            }
            // Sorted by the keys alone when `_id` can order their ties here (`SortedMatches`).
            let keysOnlySQL = !keys.isEmpty && keys.allSatisfy({ SortedMatches.tiesCanBeOrderedHere($0.type) })
                ? "SELECT \(idColumn)" + sortColumns + " FROM \(from) WHERE \(conditions.joined(separator: " AND "))"
                    + " ORDER BY \(keys.map { "\($0.column) \($0.descending ? "DESC" : "ASC")" }.joined(separator: ", ")) LIMIT \(query.limit + 2)"
                : nil
            let chosen = try sqlite { () throws(SQLiteError) -> [SortedMatch] in
                if let keysOnlySQL,
                   let resolved = SortedMatches.resolvingTies(try matches(keysOnlySQL), needed: query.limit + 1, idDescending: idDescending) {
                    return resolved
                }
                return try matches(sql)
            }
            let pageIDs = chosen.prefix(query.limit).map(\.id)
            found = PageItems(items: try objects(pageIDs, table: table, rendering: rendering, include: query.include, fields: fields,
                                                 renderer: renderer),
                              ids: pageIDs, last: chosen.prefix(query.limit).last, more: chosen.count > query.limit)
        }
        var next: String?
        if found.more, let last = found.last {
            next = KeysetCursor.encode(values: last.sortValues, id: last.id, fingerprint: fingerprint)
        }
        var total: Int?
        if query.count {
            let countSQL = "SELECT count(*) FROM \(from) WHERE \(matching.clause)"
            total = Int(try sqlite { () throws(SQLiteError) in
                try reader.connection.rows(countSQL, matching.bindings).first?.first?.integerValue ?? 0
            })
        }
        let facets = try query.facets.isEmpty ? []
            : self.facets(query.facets, limit: query.facetLimit, entity: query.entity, compiled: counted)
        var snippets: [String]?
        if wantsSnippets, let search {
            let byID = try sqlite { () throws(SQLiteError) in try search.snippets(of: found.ids, connection: reader.connection) }
            snippets = found.ids.map { byID[$0] ?? "" }
        }
        let warnings = checked.source.warnings.map { CartographError.Detail(pointer: "/where", message: $0.message, offset: $0.offset) }
        return ObjectPage(items: found.items, next: next, total: total, plan: plan, fullScanRows: fullScanRows, warnings: warnings,
                          facets: facets, snippets: snippets)
    }

    /// Whether the page query `sql` (ids and sort keys) reads its matches in an index's order, neither
    /// scanning the table nor sorting every match, and `rowsSQL` (the same query selecting the rendered
    /// columns) goes through the same indexes: then `rowsSQL` reads the page's rows once, where `sql`
    /// and a read by `_id` would read them twice. Asked of SQLite's plans once per query text (the layout
    /// keeps the answer; a plan does not depend on the values bound).
    private func readsInIndexOrder(_ sql: String, rowsSQL: String, bindings: [SQLiteValue], table: String,
                                   alias: String) throws(SQLiteError) -> Bool {
        try layout.readsInIndexOrder(pageSQL: sql) { () throws(SQLiteError) -> Bool in
            func plan(_ sql: String) throws(SQLiteError) -> QueryPlan {
                try QueryPlan(explaining: sql, bindings: bindings, connection: reader.connection, entity: table, table: table, alias: alias,
                              orderBy: [])
            }
            let ids = try plan(sql)
            guard !ids.fullScan, !ids.sortsEveryMatch, !ids.indexes.isEmpty else { return false }
            let rows = try plan(rowsSQL)
            return !rows.fullScan && !rows.sortsEveryMatch && rows.indexes == ids.indexes
        }
    }

    /// A page's objects as rendered, and what its cursor needs.
    private struct PageItems {
        let items: [RenderedJSON]
        /// The `_id`s of `items`, in their order.
        let ids: [Int64]
        /// The `_id` and sort values of the page's last object.
        let last: (id: Int64, sortValues: [SQLiteValue])?
        /// Whether an object follows the page.
        let more: Bool
    }

    /// The page `rowsSQL` selects (`readsInIndexOrder`): the rendered columns, then the sort keys; its
    /// first `limit` rows rendered.
    private func pageRows<Renderer: ObjectRenderer>(_ rowsSQL: String, bindings: [SQLiteValue], rows: TableRows, renderer: Renderer,
                                                    sortKeyCount: Int, limit: Int, fields: Set<String>?,
                                                    fullScanRows: inout Int) throws(SQLiteError) -> PageItems {
        let prepared = rows.prepared(by: renderer)
        let statement = try reader.connection.cached(rowsSQL)
        try statement.bind(bindings)
        defer { try? statement.bind([]) }
        _ = statement.takeFullScanSteps()
        var heads: [ObjectReader.RenderedHead] = []
        heads.reserveCapacity(limit)
        var last: (id: Int64, sortValues: [SQLiteValue])?
        var more = false
        while try statement.step() {
            // The row after the page only says that there is more.
            guard heads.count < limit else {
                more = true
                break
            }
            heads.append(rows.head(of: statement, renderer: renderer, table: prepared, fields: fields))
            if heads.count == limit {
                let first = rows.columnCount
                last = (statement.columnInteger(0), (0..<sortKeyCount).map { statement.column(first + Int32($0)) })
            }
        }
        fullScanRows = statement.takeFullScanSteps()
        let ids = heads.map(\.object.id)
        return PageItems(items: try reader.closing(&heads, fields: fields, renderer: renderer), ids: ids, last: last, more: more)
    }

    /// Each step of a sort key path nests a subquery: a bound well inside SQLite's expression depth (1,000).
    static let maximumSortKeyPathSteps = 32

    /// The SQL value an `orderBy` key sorts by: an attribute's column, or for a key path through to-one
    /// relationships (`publisher.name`, as NSSortDescriptor takes) a scalar subquery per step, NULL when a
    /// destination is missing, so such objects sort as nil does (R-Q3).
    private func sortKey(_ keyPath: String, entity: String, alias: String) throws(CartographError) -> (sql: String, type: AttributeType) {
        let (sql, type) = try toOneValue(keyPath, entity: entity, alias: alias, parameter: "orderBy")
        guard type != .binary, type != .transformable else {
            throw CartographError(.badRequest, "Cannot order by '\(keyPath)': \(type) values have no order.")
        }
        return (sql, type)
    }

    /// The SQL value of an attribute, or of a key path through to-one relationships, for each object of
    /// `entity` read through `alias` (see `sortKey`); `parameter` names the request's parameter in errors.
    func toOneValue(_ keyPath: String, entity: String, alias: String, parameter: String) throws(CartographError) -> (sql: String, type: AttributeType) {
        func unknown(_ message: String) -> CartographError {
            CartographError(.badRequest, "Unknown \(parameter) key '\(keyPath)' for entity '\(entity)': \(message).",
                            errors: [.init(pointer: "/\(parameter)", message: message)])
        }
        let names = keyPath.split(separator: ".").map(String.init)
        guard names.count <= Self.maximumSortKeyPathSteps + 1 else {
            throw unknown("a key path crosses at most \(Self.maximumSortKeyPathSteps) relationships")
        }
        var current = entity
        // The `_id` of the object reached so far; the root's own columns are read through its alias.
        var currentID: String? = nil
        var depth = 0
        func column(_ name: String, in entity: String) -> String {
            guard let id = currentID else { return "\(alias).\(quoted(name))" }
            depth += 1
            let step = quoted("k\(depth)")
            return "(SELECT \(step).\(quoted(name)) FROM \(quoted(layout.table(of: entity))) AS \(step) WHERE \(step)._id = \(id))"
        }
        for name in names.dropLast() {
            guard let relationship = model.relationship(name, of: current) else {
                throw unknown("'\(current)' has no relationship '\(name)'"
                    + NameSuggestion.hint(for: name, among: model.allRelationships(of: current).map(\.name), kind: "its relationships"))
            }
            guard !relationship.toMany else { throw unknown("'\(name)' is a to-many relationship; this key path goes through to-one relationships") }
            switch layout.storage(of: name, entity: current) {
            case .foreignKey(_, let fk)?:
                currentID = column(fk, in: current)
            case .inverseForeignKey(let table, let fk)?:
                depth += 1
                let step = quoted("k\(depth)")
                currentID = "(SELECT \(step)._id FROM \(quoted(table)) AS \(step) WHERE \(step).\(quoted(fk)) = \(currentID ?? "\(alias)._id") ORDER BY \(step)._id LIMIT 1)"
            case .joinTable?, nil:
                throw unknown("'\(name)' is not stored as a to-one")
            }
            current = relationship.destination
        }
        let last = names.last ?? keyPath
        guard let attribute = model.attribute(last, of: current), let attributeColumn = layout.column(ofAttribute: last, entity: current) else {
            let hint = NameSuggestion.hint(for: last, among: model.allAttributes(of: current).map(\.name), kind: "its attributes")
            throw unknown((names.count == 1 ? "unknown attribute '\(last)'" : "'\(current)' has no attribute '\(last)'") + hint)
        }
        return (column(attributeColumn, in: current), attribute.type)
    }

    private func collation(_ type: AttributeType?) -> String { type == .decimal ? " COLLATE \(SQLiteConnection.decimalCollation)" : "" }

    /// `include` embeds into `shape=model` only: with `shape=json` related objects already nest as the
    /// annotations say, so asking for both is a 400 rather than an include silently ignored.
    private static func check(include: [[String]], shape: ObjectShape) throws(CartographError) {
        guard shape == .json, !include.isEmpty else { return }
        throw CartographError(.badRequest, "include does not apply to shape=json: related objects are nested as the model's JSONKeyPath "
            + "annotations say. Leave include out, or use shape=model.", errors: [.init(pointer: "/include", message: "not allowed with shape=json")])
    }

    /// `fields` as a set, after checking each names an attribute or relationship of `entity` or one of
    /// its sub-entities (a list may hold them); with `shape=json` the annotations decide what is written.
    private func validate(fields: [String]?, entity: String, shape: ObjectShape) throws(CartographError) -> Set<String>? {
        guard let fields else { return nil }
        guard shape == .model else {
            throw CartographError(.badRequest, "fields applies to shape=model: with shape=json the model's JSONKeyPath annotations decide what "
                + "is written. Leave fields out, or use shape=model.", errors: [.init(pointer: "/fields", message: "not allowed with shape=json")])
        }
        let known = Set(model.entityAndSubentities(of: entity).flatMap { name in
            layout.properties(of: name).attributes.map(\.name) + layout.properties(of: name).relationships.map(\.name)
        })
        let unknown = fields.filter { !known.contains($0) }
        guard unknown.isEmpty else {
            let hints = unknown.map { "'\($0)'" + (NameSuggestion.closest(to: $0, among: Array(known)).map { " (did you mean '\($0)'?)" } ?? "") }
            throw CartographError(.badRequest, "Unknown fields for '\(entity)': \(hints.joined(separator: ", "))"
                                  + " " + NameSuggestion.list(Array(known), kind: "its attributes and relationships") + ".",
                                  errors: unknown.map { .init(pointer: "/fields", message: "unknown attribute or relationship '\($0)'") })
        }
        return Set(fields)
    }

    private func validate(include: [[String]], entity: String) throws(CartographError) {
        for path in include {
            var current = entity
            for name in path {
                guard let relationship = model.relationship(name, of: current) else {
                    throw CartographError(.badRequest, "Unknown include '\(path.joined(separator: "."))': '\(current)' has no relationship '\(name)'.",
                                          errors: [.init(pointer: "/include", message: "unknown relationship '\(name)'")])
                }
                current = relationship.destination
            }
        }
    }

    /// Parses and checks a predicate; errors become 400s carrying the offset and `pointer`.
    /// A checked `where` compiled for this store's tables (a 400 at `/where` when it cannot be).
    /// `everyMatch`: the query reads every match (see `CheckedPredicate.sql`).
    func compile(_ checked: CheckedPredicate, everyMatch: Bool) throws(CartographError) -> SQLPredicate {
        do { return try checked.sql(schema: layout, everyMatch: everyMatch) } catch {
            throw CartographError(.badRequest, "The predicate cannot be compiled: \(error.message)",
                                  errors: [.init(pointer: "/where", message: error.message, offset: error.offset)], offset: error.offset,
                                  underlying: error)
                .quotingRequestValues()
        }
    }

    /// `predicate` (every object when nil) checked against `entity` and compiled for a query that reads
    /// every match (an aggregate's).
    func compiledWhere(_ predicate: String?, arguments: [String: JSONValue], entity: String) throws(CartographError) -> SQLPredicate {
        try compile(try Self.check(predicate ?? "TRUEPREDICATE", entity: entity, model: model, arguments: arguments, pointer: "/where"),
                    everyMatch: true)
    }

    public static func check(_ format: String, entity: String, model: Model, arguments: [String: JSONValue] = [:],
                             pointer: String) throws(CartographError) -> CheckedPredicate {
        do {
            return try CheckedPredicate(format: format, entity: entity, model: model, variables: arguments)
        } catch {
            throw CartographError(.badRequest, "Invalid predicate: \(error.message) (at offset \(error.offset)).",
                                  errors: [.init(pointer: pointer, message: error.message, offset: error.offset)], offset: error.offset,
                                  underlying: error)
                .quotingRequestValues()
        }
    }

    /// The objects `ids` of `table` as `rendering` writes them, in `ids` order (`renderer` for `shape=model`).
    private func objects<Renderer: ObjectRenderer>(_ ids: [Int64], table: String, rendering: Rendering, include: [[String]],
                                                   fields: Set<String>?, renderer: Renderer) throws(CartographError) -> [RenderedJSON] {
        switch rendering {
        case .model where include.isEmpty:
            return try sqlite { () throws(SQLiteError) in try reader.rendered(ids: ids, table: table, fields: fields, renderer: renderer) }
        case .model:
            let objects = try sqlite { () throws(SQLiteError) in try reader.objects(ids: ids, table: table) }
            let found = ids.compactMap { objects[$0] }
            // One key cache for the page: destinations shared by its objects (an author, a tag) are read once.
            var keys: [Int64: JSONValue] = [:]
            let prefetched = try sqlite { () throws(SQLiteError) in try reader.prefetch(for: found, fields: fields, keys: &keys) }
            return try found.enumerated().map { (position, object) throws(CartographError) in
                renderer.render(try sqlite { () throws(SQLiteError) in
                    try reader.values(of: object, include: include, fields: fields, known: prefetched.of(objectAt: position), keys: &keys)
                })
            }
        case .json(let export):
            let objects = try sqlite { () throws(SQLiteError) in try reader.objects(ids: ids, table: table) }
            return try exported(ids.compactMap { objects[$0] }, with: export).map(RenderedJSON.init)
        }
    }

    /// The object of `entity` whose key is `key` — the raw `{key}` path segment (docs/api.md#object-keys): the
    /// identity value, or for compound identities the values joined by ',' each percent-encoded — as `renderer`
    /// writes it (`shape=model`). Several matches (possible through identificationPredicate) resolve to the oldest.
    public func object<Renderer: ObjectRenderer>(entity: String, key rawKey: String, include: [[String]] = [], shape: ObjectShape = .model,
                                                 fields: [String]? = nil, mapping: String? = nil,
                                                 renderer: Renderer) throws(CartographError) -> RenderedJSON? {
        try Self.check(include: include, shape: shape)
        guard model.entity(named: entity) != nil else {
            throw model.unknownEntity(entity)
        }
        try validate(include: include, entity: entity)
        let fields = try validate(fields: fields, entity: entity, shape: shape)
        let rendering = try rendering(of: entity, shape: shape, mapping: mapping)
        if case .model = rendering, include.isEmpty {
            return try reader.rendered(entity: entity, rawKey: rawKey, fields: fields, renderer: renderer)
        }
        guard let object = try reader.object(entity: entity, rawKey: rawKey) else { return nil }
        return try objects([object.id], table: layout.table(of: object.entity), rendering: rendering, include: include, fields: fields,
                           renderer: renderer).first
    }

    /// How objects of one entity are rendered (R-Q4).
    private enum Rendering {
        case model
        case json(JSONExport)
    }

    /// How `shape=json` writes objects of one entity.
    private enum JSONExport {
        case annotations(AnnotationExporter)
        /// Through a registered mapping's inverse.
        case mapping(MappingExporter, EntityMapping)
    }

    /// How objects of `entity` are rendered, checked before anything is read. For `shape=json` without `mapping`, an entity that no annotation describes is a 400 (its objects
    /// would export as `{}`); with it, the mapping must exist (404) and map `entity` or an ancestor (400).
    private func rendering(of entity: String, shape: ObjectShape, mapping name: String?) throws(CartographError) -> Rendering {
        switch shape {
        case .model:
            guard name == nil else {
                throw CartographError(.badRequest, "mapping applies to shape=json: it names the mapping whose inverse writes the objects. "
                    + "Add shape=json, or leave mapping out.", errors: [.init(pointer: "/mapping", message: "needs shape=json")])
            }
            return .model
        case .json:
            guard let name else {
                let exporter = try AnnotationExporter(model: model)
                guard exporter.describes(entity) else {
                    throw CartographError(.badRequest, "shape=json writes objects as the model's JSONKeyPath annotations say, and no attribute or "
                        + "relationship of '\(entity)' or its sub-entities has one, so every object would be {}. Give mapping=<name> to export "
                        + "through a registered mapping's inverse, or annotate the model (or set its option mapUnannotatedByName).",
                        errors: [.init(pointer: "/shape", message: "no annotation describes '\(entity)'")])
                }
                return .json(.annotations(exporter))
            }
            guard let document = try mappings(named: name).first?.document else {
                throw try unknownMapping(name)
            }
            let (mapping, named) = try EntityMapping.parse(document, model: model, name: name) { [self] other in
                try? mappings(named: other).first?.document
            }
            guard model.lineage(of: entity).contains(where: { $0.name == mapping.entity }) else {
                throw CartographError(.badRequest, "Mapping '\(name)' maps '\(mapping.entity)', so it cannot export '\(entity)' objects: "
                    + "name a mapping of '\(entity)' or of an entity it inherits from.",
                    errors: [.init(pointer: "/mapping", message: "maps '\(mapping.entity)', not '\(entity)'")])
            }
            return .json(.mapping(try MappingExporter(model: model, namedMappings: named), mapping))
        }
    }

    /// Objects in `shape=json` (R-Q4), related objects read from this snapshot.
    private func exported(_ objects: [ExistingObject], with export: JSONExport) throws(CartographError) -> [JSONValue] {
        let graph = StoreExportGraph(reader: reader)
        let kept = objects.map(graph.keep)
        switch export {
        case .annotations(let exporter): return try exporter.export(kept, from: graph)
        case .mapping(let exporter, let mapping): return try exporter.export(kept, through: mapping, from: graph)
        }
    }

    /// Change-feed entries after `since`, in order (R-D4): see `ChangeFeed`.
    public func changes(since: Int64, limit: Int) throws(CartographError) -> ChangeFeedPage {
        try ChangeFeed.page(reader, since: since, limit: limit)
    }
}

