// Aggregates (R-Q9, issue 33): the objects a predicate selects, grouped by attributes and key paths
// through to-one relationships, with count, sum, avg, min and max over them — one GROUP BY that SQLite
// plans, so a declared index on the grouped or filtered attribute serves it.
public import CartographCore
public import CartographPredicate

/// One aggregate of a group: `count` (of objects, or of the non-nil values of a key path) or a function of a key path.
public struct Aggregate: Sendable {
    public enum Function: String, Sendable, CaseIterable {
        case count, sum, avg, min, max
    }

    /// Its name in each group of the answer.
    public let name: String
    public let function: Function
    /// An attribute or a key path through to-one relationships; nil only for `count` of objects.
    public let keyPath: String?

    public init(name: String, function: Function, keyPath: String?) {
        self.name = name
        self.function = function
        self.keyPath = keyPath
    }
}

/// A grouped read of one entity's objects (its sub-entities included).
public struct AggregateQuery: Sendable {
    public var entity: String
    public var predicate: String?
    public var arguments: [String: JSONValue] = [:]
    /// A full-text search (R-Q6) narrowing the matches of `predicate`, as a list's `search` does.
    public var search: String?
    /// Key paths whose values make a group; none: one group of every match.
    public var groupBy: [String] = []
    public var aggregates: [Aggregate] = []
    /// Group-by key paths or aggregate names; by default the groups' values ascending.
    public var orderBy: [(name: String, descending: Bool)] = []
    public var limit = 100

    public init(entity: String) { self.entity = entity }
}

/// The groups of an aggregate query, each an object of its group-by values and aggregates, in order.
public struct AggregateResult: Sendable {
    public let groups: [JSONValue]
    /// Whether more groups follow the `limit` answered.
    public let more: Bool
}

extension StoreReader {
    public static let maximumAggregateGroups = 1000

    /// Runs `query`: a 400 names what is wrong with it, at its member's pointer.
    public func aggregate(_ query: AggregateQuery) throws(CartographError) -> AggregateResult {
        guard model.entity(named: query.entity) != nil else { throw model.unknownEntity(query.entity) }
        guard (1...Self.maximumAggregateGroups).contains(query.limit) else {
            throw CartographError(.badRequest, "limit must be between 1 and \(Self.maximumAggregateGroups).",
                                  errors: [.init(pointer: "/limit", message: "out of range")])
        }
        guard !query.groupBy.isEmpty || !query.aggregates.isEmpty else {
            throw CartographError(.badRequest, "An aggregate query needs groupBy, aggregates or both.",
                                  errors: [.init(pointer: "/aggregates", message: "nothing to compute")])
        }
        var names = Set<String>()
        for (index, name) in (query.groupBy + query.aggregates.map(\.name)).enumerated() where !names.insert(name).inserted {
            throw CartographError(.badRequest, "'\(name)' is named twice: each group-by key path and aggregate name appears once in a group.",
                                  errors: [.init(pointer: index < query.groupBy.count ? "/groupBy" : "/aggregates/\(name)", message: "named twice")])
        }
        let filtered = try compiledWhere(query.predicate, arguments: query.arguments, entity: query.entity)
        // A search narrows the groups to its matches, as it narrows a list's page, count and facets.
        let compiled = try query.search.map { (text) throws(CartographError) in try SearchMatch(text, entity: query.entity, layout: layout).narrowing(filtered) }
            ?? filtered
        let alias = compiled.alias
        // Selected in order: the group-by values, then the aggregates; each read back by its type.
        var columns: [(sql: String, render: (SQLiteValue) -> JSONValue)] = []
        for keyPath in query.groupBy {
            let (sql, type) = try toOneValue(keyPath, entity: query.entity, alias: alias, parameter: "groupBy")
            // `+`: grouped through a temporary B-tree over a scan, not by walking an index of the value (see `facetGroups`).
            columns.append(("+" + sql, { ValueStorage.attributeValue($0, type: type)?.jsonValue ?? .null }))
        }
        for aggregate in query.aggregates {
            columns.append(try aggregateColumn(aggregate, entity: query.entity, alias: alias))
        }
        var order: [String] = []
        for key in query.orderBy {
            guard let position = query.groupBy.firstIndex(of: key.name).map({ $0 + 1 })
                    ?? query.aggregates.firstIndex(where: { $0.name == key.name }).map({ query.groupBy.count + $0 + 1 }) else {
                throw CartographError(.badRequest, "orderBy names '\(key.name)', which is neither a groupBy key path nor an aggregate"
                    + NameSuggestion.hint(for: key.name, among: query.groupBy + query.aggregates.map(\.name), kind: "those") + ".",
                                      errors: [.init(pointer: "/orderBy", message: "unknown name '\(key.name)'")])
            }
            order.append("\(position) \(key.descending ? "DESC" : "ASC")")
        }
        order += query.groupBy.indices.map { "\($0 + 1) ASC" }
        let groupClause = query.groupBy.isEmpty ? "" : " GROUP BY " + query.groupBy.indices.map { String($0 + 1) }.joined(separator: ", ")
        let sql = "SELECT \(columns.map(\.sql).joined(separator: ", ")) FROM \(compiled.fromClause) WHERE \(compiled.whereClause)\(groupClause)"
            + (order.isEmpty ? "" : " ORDER BY " + order.joined(separator: ", ")) + " LIMIT \(query.limit + 1)"
        let rows = try sqlite { () throws(SQLiteError) in try reader.connection.rows(sql, compiled.bindings.map(SQLiteValue.init)) }
        let memberNames = query.groupBy + query.aggregates.map(\.name)
        let groups = rows.prefix(query.limit).map { row in
            JSONValue.object(JSONObject(zip(memberNames, zip(row, columns)).map { name, pair in (name, pair.1.render(pair.0)) }))
        }
        return AggregateResult(groups: groups, more: rows.count > query.limit)
    }

    /// The SQL of one aggregate and how its value reads back: sums and averages of numbers, extremes of
    /// anything ordered; decimals through the aggregate the predicates' @sum uses, exactly.
    private func aggregateColumn(_ aggregate: Aggregate, entity: String, alias: String) throws(CartographError)
        -> (sql: String, render: (SQLiteValue) -> JSONValue) {
        func integer(_ value: SQLiteValue) -> JSONValue { value.integerValue.map { .number(JSONNumber($0)) } ?? .null }
        func real(_ value: SQLiteValue) -> JSONValue { value.realValue.flatMap(JSONNumber.init).map(JSONValue.number) ?? .null }
        let pointer = "/aggregates/\(aggregate.name)"
        guard let keyPath = aggregate.keyPath else {
            guard aggregate.function == .count else {
                throw CartographError(.badRequest, "'\(aggregate.function.rawValue)' needs a key path: write \"\(aggregate.function.rawValue):<attribute>\".",
                                      errors: [.init(pointer: pointer, message: "no key path")])
            }
            return ("count(*)", integer)
        }
        let (value, type) = try toOneValue(keyPath, entity: entity, alias: alias, parameter: "aggregates")
        func refuse(_ why: String) -> CartographError {
            CartographError(.badRequest, "Cannot compute \(aggregate.function.rawValue) of '\(keyPath)': \(why).",
                            errors: [.init(pointer: pointer, message: why)])
        }
        let numeric: Bool = switch type {
        case .integer16, .integer32, .integer64, .decimal, .double, .float: true
        case .string, .boolean, .date, .binary, .transformable, .uuid, .uri: false
        }
        switch aggregate.function {
        case .count:
            return ("count(\(value))", integer)
        case .sum, .avg:
            guard numeric else { throw refuse("\(type) values are not added up") }
            if type == .decimal {
                let function = aggregate.function == .sum ? DecimalAggregation.Function.sum : .avg
                let call = "\(PredicateSQLFunctions.decimalAggregate)(\(function.rawValue), \(value))"
                return (aggregate.function == .sum ? "COALESCE(\(call), '0')" : call, { ValueStorage.attributeValue($0, type: .decimal)?.jsonValue ?? .null })
            }
            if aggregate.function == .sum, type != .double, type != .float { return ("COALESCE(sum(\(value)), 0)", integer) }
            return (aggregate.function == .sum ? "COALESCE(total(\(value)), 0.0)" : "avg(\(value))", real)
        case .min, .max:
            guard type != .binary, type != .transformable else { throw refuse("\(type) values have no order") }
            if type == .decimal {
                let function = aggregate.function == .min ? DecimalAggregation.Function.min : .max
                return ("\(PredicateSQLFunctions.decimalAggregate)(\(function.rawValue), \(value))",
                        { ValueStorage.attributeValue($0, type: type)?.jsonValue ?? .null })
            }
            return ("\(aggregate.function.rawValue)(\(value))", { ValueStorage.attributeValue($0, type: type)?.jsonValue ?? .null })
        }
    }
}
