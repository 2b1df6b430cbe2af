// Compiles a checked predicate to a parameterized SQL condition (R-Q2). Every value is a numbered
// parameter; every identifier comes from the schema and is quoted; aliases are generated. NOT is
// compiled as `(p) IS NOT 1` and every other node is true exactly when it yields 1, so SQL's NULLs
// never leak into Foundation's two-valued logic.
public import CartographCore

/// A value bound to a parameter of a compiled predicate.
public enum SQLBinding: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A predicate compiled for one entity's table.
public struct SQLPredicate: Sendable, Equatable {
    /// `"Table" AS "t0"`, for the query's FROM clause.
    public let fromClause: String
    /// The quoted alias of the queried table (`"t0"`), for ORDER BY and select lists.
    public let alias: String
    /// The condition, entity restriction included, for the query's WHERE clause.
    public let whereClause: String
    /// The values of parameters `?first`…: `bindings[i]` is parameter `first + i`.
    public let bindings: [SQLBinding]
    /// How the condition counts to-many relationships (`@count`), for `explain` (R-Q5).
    public let counts: SQLCountForms

    /// A compiled predicate as a caller narrows it further (a search's join and MATCH, R-Q6).
    public init(fromClause: String, alias: String, whereClause: String, bindings: [SQLBinding], counts: SQLCountForms) {
        self.fromClause = fromClause
        self.alias = alias
        self.whereClause = whereClause
        self.bindings = bindings
        self.counts = counts
    }
}

/// The forms a compiled predicate's `@count` comparisons took (issue 33).
public struct SQLCountForms: OptionSet, Sendable, Equatable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Counted once for every object that has destinations, grouped from the relationship's index:
    /// `x IN (SELECT source … GROUP BY source HAVING …)`.
    public static let grouped = SQLCountForms(rawValue: 1)
    /// Counted by a subquery for every row read: `(SELECT COUNT(*) … WHERE source = row) > n`.
    public static let perRow = SQLCountForms(rawValue: 2)
}

extension CheckedPredicate {
    /// Compiles the predicate against the store's `schema`.
    ///
    /// Parameters are numbered from `firstParameter` (`?1`, `?2`, …), so a query may place its own
    /// parameters before or after the condition. `everyMatch` says the query reads every match (a
    /// count, facets, aggregates): then a `@count` comparison is grouped once (`groupedCount`) rather
    /// than counted per row, which only pays when no row can be skipped.
    ///
    /// - Throws: a `.semantic` `PredicateError` when the schema lacks a table, column or
    ///   relationship the model has, or names an identifier SQLite cannot hold.
    public func sql(schema: any PredicateSQLSchema, firstParameter: Int = 1, everyMatch: Bool = false) throws(PredicateError) -> SQLPredicate {
        var compiler = SQLCompiler(schema: schema, firstParameter: firstParameter, groupsCounts: everyMatch)
        let table = try compiler.table(entityName)
        let alias = compiler.newAlias()
        compiler.rootAlias = alias
        compiler.rootEntity = entityName
        var condition = try compiler.predicate(root)
        if let entityColumn = table.entityColumn {
            let names = table.entityNames.map { compiler.bind(.text($0)) }.joined(separator: ", ")
            condition = "\(alias).\(try quote(entityColumn)) IN (\(names)) AND (\(condition))"
        }
        guard compiler.bindings.count <= Self.maximumBoundValues else { throw Self.tooManyValues(compiler.bindings.count) }
        return SQLPredicate(fromClause: "\(try quote(table.name)) AS \(alias)", alias: alias,
                            whereClause: condition, bindings: compiler.bindings, counts: compiler.counts)
    }
}

/// Quotes an identifier for SQLite: double quotes, embedded quotes doubled.
func quote(_ identifier: String) throws(PredicateError) -> String {
    // On the bytes: the generic `replacing` and a scan of unicode scalars were 1.3% of a list's CPU.
    let utf8 = identifier.utf8
    guard !utf8.isEmpty, !utf8.contains(0) else {
        throw PredicateError(kind: .semantic, offset: 0, message: "the store schema names an invalid SQL identifier")
    }
    guard utf8.contains(UInt8(ascii: "\"")) else { return "\"" + identifier + "\"" }
    return "\"" + identifier.replacing("\"", with: "\"\"") + "\""
}

private struct SQLCompiler {
    let schema: any PredicateSQLSchema
    let firstParameter: Int
    /// Whether `@count` comparisons may be grouped (`everyMatch`).
    let groupsCounts: Bool
    var bindings: [SQLBinding] = []
    var aliasCount = 0
    var rootAlias = ""
    var rootEntity = ""
    /// The alias and entity of the current element inside ANY/ALL/NONE.
    var element: (alias: String, entity: String)?
    /// How many times the root's alias was read: a quantified condition that reads none is not
    /// correlated with the root's row (see `semiJoin`).
    var rootReads = 0
    /// Inside an AND beside a test of the root's own row (see `testsOwnRow`), which SQLite tries first.
    var ownRowTestedFirst = false
    /// How `@count` comparisons were compiled.
    var counts: SQLCountForms = []
    /// What `.count` compiles to while a comparison is compiled as a grouped count's HAVING.
    var countInGroup: String?

    init(schema: any PredicateSQLSchema, firstParameter: Int, groupsCounts: Bool) {
        self.schema = schema
        self.firstParameter = firstParameter
        self.groupsCounts = groupsCounts
    }

    mutating func newAlias() -> String {
        defer { aliasCount += 1 }
        return "\"t\(aliasCount)\""
    }

    /// Adds a parameter and returns its numbered placeholder (`?3`), which may appear more than once.
    mutating func bind(_ binding: SQLBinding) -> String {
        bindings.append(binding)
        return "?\(firstParameter + bindings.count - 1)"
    }

    // MARK: Schema look-ups

    func missing(_ what: String) -> PredicateError {
        PredicateError(kind: .semantic, offset: 0, message: "the store has no \(what)")
    }

    func table(_ entity: String) throws(PredicateError) -> PredicateSQLTable {
        guard let table = schema.table(forEntity: entity) else { throw missing("table for the entity '\(entity)'") }
        return table
    }

    func column(_ attribute: String, of entity: String) throws(PredicateError) -> String {
        guard let column = schema.column(forAttribute: attribute, ofEntity: entity) else {
            throw missing("column for the attribute '\(entity).\(attribute)'")
        }
        return try quote(column)
    }

    func storage(_ step: RelationshipStep) throws(PredicateError) -> PredicateSQLRelationship {
        guard let storage = schema.storage(forRelationship: step.name, ofEntity: step.sourceEntity) else {
            throw missing("storage for the relationship '\(step.sourceEntity).\(step.name)'")
        }
        return storage
    }

    /// The tables and join conditions that reach the destinations of `steps` from `alias`.
    mutating func chain(from alias: String, entity: String, _ steps: [RelationshipStep]) throws(PredicateError)
        -> (tables: [String], conditions: [String], last: String, lastEntity: String)
    {
        var tables: [String] = []
        var conditions: [String] = []
        var current = alias
        var currentEntity = entity
        for step in steps {
            let source = try table(currentEntity)
            let destination = try table(step.destinationEntity)
            let next = newAlias()
            switch try storage(step) {
            case .foreignKey(let column):
                tables.append("\(try quote(destination.name)) AS \(next)")
                conditions.append("\(next).\(try quote(destination.idColumn)) = \(current).\(try quote(column))")
            case .destinationForeignKey(let column):
                tables.append("\(try quote(destination.name)) AS \(next)")
                conditions.append("\(next).\(try quote(column)) = \(current).\(try quote(source.idColumn))")
            case .joinTable(let name, let sourceColumn, let destinationColumn):
                let link = newAlias()
                tables.append("\(try quote(name)) AS \(link)")
                tables.append("\(try quote(destination.name)) AS \(next)")
                conditions.append("\(link).\(try quote(sourceColumn)) = \(current).\(try quote(source.idColumn))")
                conditions.append("\(next).\(try quote(destination.idColumn)) = \(link).\(try quote(destinationColumn))")
            }
            current = next
            currentEntity = step.destinationEntity
        }
        return (tables, conditions, current, currentEntity)
    }

    /// `(SELECT value FROM … WHERE …)`, a scalar subquery over a chain (NULL when it finds no row).
    func subquery(_ value: String, _ chain: (tables: [String], conditions: [String], last: String, lastEntity: String)) -> String {
        "(SELECT \(value) FROM \(chain.tables.joined(separator: ", ")) WHERE \(chain.conditions.joined(separator: " AND ")))"
    }

    // MARK: Predicates

    /// `parts` joined by `separator` (AND or OR, both associative) as a balanced tree of parentheses:
    /// SQLite parses a flat chain of n terms into a tree n deep and refuses one deeper than 1,000.
    static func balanced(_ parts: ArraySlice<String>, separator: String) -> String {
        guard parts.count > 16 else { return parts.joined(separator: separator) }
        let middle = parts.startIndex + parts.count / 2
        return "(\(balanced(parts[..<middle], separator: separator)))\(separator)(\(balanced(parts[middle...], separator: separator)))"
    }

    mutating func predicate(_ node: CheckedNode) throws(PredicateError) -> String {
        switch node {
        case .constant(let value):
            return value ? "1" : "0"
        case .not(let inner):
            return "(\(try predicate(inner))) IS NOT 1"
        case .and(let operands), .or(let operands):
            let isAnd = if case .and = node { true } else { false }
            guard !operands.isEmpty else { return isAnd ? "1" : "0" }
            let saved = ownRowTestedFirst
            defer { ownRowTestedFirst = saved }
            if isAnd, operands.contains(where: Self.testsOwnRow) { ownRowTestedFirst = true }
            var parts: [String] = []
            for operand in operands { parts.append("(\(try predicate(operand)))") }
            return Self.balanced(parts[...], separator: isAnd ? " AND " : " OR ")
        case .compare(let comparison):
            if groupsCounts, !ownRowTestedFirst, let grouped = try groupedCount(comparison) { return grouped }
            return try compare(comparison)
        case .quantified(let quantifier, let steps, let inner):
            if quantifier != .all, Self.isSelective(inner), let membership = try semiJoin(quantifier, steps, inner) { return membership }
            rootReads += 1
            let reached = try chain(from: rootAlias, entity: rootEntity, steps)
            let saved = element
            element = (reached.last, reached.lastEntity)
            defer { element = saved }
            let condition = try predicate(inner)
            let from = "FROM \(reached.tables.joined(separator: ", ")) WHERE \(reached.conditions.joined(separator: " AND "))"
            switch quantifier {
            case .any: return "EXISTS (SELECT 1 \(from) AND (\(condition)))"
            case .all: return "NOT EXISTS (SELECT 1 \(from) AND ((\(condition)) IS NOT 1))"
            case .none: return "NOT EXISTS (SELECT 1 \(from) AND (\(condition)))"
            }
        }
    }

    /// ANY or NONE as a semi-join (issue 33): the root's rows whose key is among the sources of the
    /// destinations the condition matches, found once from the destination side (`x IN (SELECT …)`,
    /// which SQLite evaluates once and may read the root's rows by), instead of a subquery run for
    /// every row read (`EXISTS`). Nil when the condition reads the root's row (a correlated condition):
    /// then the caller compiles `EXISTS`, and the values bound here are dropped.
    /// NONE is `(x IN …) IS NOT 1`: a root with no destination, or a NULL foreign key, holds no match.
    mutating func semiJoin(_ quantifier: Quantifier, _ steps: [RelationshipStep], _ inner: CheckedNode) throws(PredicateError) -> String? {
        guard let first = steps.first else { return nil }
        let boundBefore = bindings.count, rootReadsBefore = rootReads
        let root = try table(rootEntity)
        let destination = try table(first.destinationEntity)
        let next = newAlias()
        var tables = ["\(try quote(destination.name)) AS \(next)"]
        var conditions: [String] = []
        let outer: String, selected: String
        switch try storage(first) {
        case .foreignKey(let column):
            outer = "\(rootAlias).\(try quote(column))"
            selected = "\(next).\(try quote(destination.idColumn))"
        case .destinationForeignKey(let column):
            outer = "\(rootAlias).\(try quote(root.idColumn))"
            selected = "\(next).\(try quote(column))"
        case .joinTable(let name, let sourceColumn, let destinationColumn):
            let link = newAlias()
            tables.insert("\(try quote(name)) AS \(link)", at: 0)
            conditions.append("\(next).\(try quote(destination.idColumn)) = \(link).\(try quote(destinationColumn))")
            outer = "\(rootAlias).\(try quote(root.idColumn))"
            selected = "\(link).\(try quote(sourceColumn))"
        }
        let reached = try chain(from: next, entity: first.destinationEntity, Array(steps.dropFirst()))
        tables += reached.tables
        conditions += reached.conditions
        let saved = element
        element = (reached.last, reached.lastEntity)
        defer { element = saved }
        let condition = try predicate(inner)
        guard rootReads == rootReadsBefore else {
            bindings.removeSubrange(boundBefore...)
            return nil
        }
        conditions.append("(\(condition))")
        let membership = "\(outer) IN (SELECT \(selected) FROM \(tables.joined(separator: ", ")) WHERE \(conditions.joined(separator: " AND ")))"
        return quantifier == .any ? membership : "(\(membership)) IS NOT 1"
    }

    /// Whether a quantified condition is likely to hold for few destinations, so that finding its
    /// sources once beats testing every row: it tests an attribute of the element for equality with a
    /// constant, or membership in constants (alone, or as one operand of an AND).
    static func isSelective(_ node: CheckedNode) -> Bool {
        switch node {
        case .compare(let comparison):
            guard case .attribute(.element, _) = comparison.lhs else { return false }
            switch comparison.test {
            case .order(let op, let rhs): return op == .equalTo && rhs.isConstant && !rhs.isNilConstant
            case .oneOf(let values): return !values.contains { $0 == nil }
            case .between, .string: return false
            }
        case .and(let operands): return operands.contains(where: isSelective)
        case .constant, .not, .or, .quantified: return false
        }
    }

    /// A `@count` compared with integer constants as a grouped semi-join (issue 33): the sources that
    /// have destinations, counted once from the relationship's index (the join table's source column, or
    /// the destinations' foreign key), instead of a count subquery for every row read. A comparison false
    /// at zero is `x IN (SELECT source … GROUP BY source HAVING comparison)`; one true at zero (`== 0`,
    /// `< 3`, `!= 5`) must keep the objects without destinations, so it is `(x IN (… HAVING (comparison)
    /// IS NOT 1)) IS NOT 1`, the sources whose count fails it left out. Nil for any other comparison.
    /// Measured on 100k issues (docs/storage.md "Decisions measured"): counting every match of
    /// `labels.@count > 3`, ~100 ms against ~190 ms; but a page that stops after 50 matches counts for
    /// ~120 rows, ~4 ms, where grouping takes ~65 ms, and a test of the row's own columns, tried first,
    /// leaves few rows to count: so only queries that read every match group (`groupsCounts`), and not
    /// beside such a test (`ownRowTestedFirst`).
    mutating func groupedCount(_ comparison: ScalarComparison) throws(PredicateError) -> String? {
        guard let (steps, holdsAtZero) = Self.countTest(comparison), let last = steps.last else { return nil }
        let destination = try table(last.destinationEntity)
        let source: String, from: String, conditions: String
        switch try storage(last) {
        case .joinTable(let name, let sourceColumn, let destinationColumn):
            // The destination's row is joined, as the subquery per row joins it, so the two count alike.
            let link = newAlias(), reached = newAlias()
            source = "\(link).\(try quote(sourceColumn))"
            from = "\(try quote(name)) AS \(link), \(try quote(destination.name)) AS \(reached)"
            conditions = " WHERE \(reached).\(try quote(destination.idColumn)) = \(link).\(try quote(destinationColumn))"
        case .destinationForeignKey(let column):
            let reached = newAlias()
            source = "\(reached).\(try quote(column))"
            from = "\(try quote(destination.name)) AS \(reached)"
            conditions = " WHERE \(source) IS NOT NULL"
        case .foreignKey:
            return nil
        }
        // The object whose destinations are counted: the root, or what its to-one steps reach (NULL, so
        // never a member, when they reach nothing: a count of zero).
        let outer = steps.count == 1
            ? "\(start(.root).alias).\(try quote(try table(rootEntity).idColumn))"
            : try rowValue(.relatedObject(.root, Array(steps.dropLast())))
        countInGroup = "COUNT(*)"
        defer { countInGroup = nil }
        let having = try compare(comparison)
        counts.insert(.grouped)
        let members = "\(outer) IN (SELECT \(source) FROM \(from)\(conditions) GROUP BY \(source) HAVING "
        return holdsAtZero ? "(\(members)(\(having)) IS NOT 1)) IS NOT 1" : "\(members)\(having))"
    }

    /// The steps of a comparison of one `@count` with integer constants only, and whether it holds
    /// for a count of zero; nil for any other comparison.
    static func countTest(_ comparison: ScalarComparison) -> (steps: [RelationshipStep], holdsAtZero: Bool)? {
        func integer(_ operand: Operand) -> Int64? { if case .constant(.integer(let value)?) = operand { value } else { nil } }
        if case .order(let op, .count(let steps)) = comparison.test, let value = integer(comparison.lhs) { return (steps, op.holds(value, 0)) }
        guard case .count(let steps) = comparison.lhs else { return nil }
        switch comparison.test {
        case .order(let op, let rhs):
            return integer(rhs).map { (steps, op.holds(0, $0)) }
        case .between(let lower, let upper):
            guard let low = integer(lower), let high = integer(upper) else { return nil }
            return (steps, low <= 0 && 0 <= high)
        case .oneOf(let values):
            return (steps, values.contains { $0 == .integer(0) })
        case .string:
            return nil
        }
    }

    /// Whether a node tests only the root's own columns against constants (`state == 'open'`,
    /// `id == 5`): beside it in an AND, SQLite tries it first, so a `@count` is counted for the rows it
    /// lets through only, which beats grouping every source when it is selective or indexed.
    static func testsOwnRow(_ node: CheckedNode) -> Bool {
        func ownOrConstant(_ operand: Operand) -> Bool {
            switch operand {
            case .constant: true
            case .attribute(.root, let reference): reference.steps.isEmpty
            case .attribute(.element, _), .relatedObject, .evaluatedObject, .count, .collectionFunction: false
            }
        }
        switch node {
        case .compare(let comparison):
            guard case .attribute(.root, let reference) = comparison.lhs, reference.steps.isEmpty else { return false }
            return switch comparison.test {
            case .order(_, let rhs): ownOrConstant(rhs)
            case .between(let lower, let upper): ownOrConstant(lower) && ownOrConstant(upper)
            case .oneOf: true
            case .string(_, let pattern, _): ownOrConstant(pattern)
            }
        case .and(let operands): return operands.contains(where: testsOwnRow)
        case .not(let inner): return testsOwnRow(inner)
        case .constant, .or, .quantified: return false
        }
    }

    mutating func compare(_ comparison: ScalarComparison) throws(PredicateError) -> String {
        let options = comparison.options
        switch comparison.test {
        case .string(let stringOperator, let pattern, _):
            let subject = try operand(comparison.lhs, folding: [])
            let patternSQL = try operand(pattern, folding: [])
            return "\(PredicateSQLFunctions.stringMatch)(\(stringOperator.rawValue), \(options.rawValue), \(subject), \(patternSQL))"
        case .order(let op, let rhs):
            if comparison.lhs.isNilConstant || rhs.isNilConstant {
                // `x == nil`, `x != nil`; ordering against nil is never true. Only the non-nil side is
                // compiled: a bound nil that the SQL never uses would be a parameter out of range.
                let bothNil = comparison.lhs.isNilConstant && rhs.isNilConstant
                guard !bothNil else { return op == .equalTo ? "1" : "0" }
                let other = try operand(comparison.lhs.isNilConstant ? rhs : comparison.lhs, folding: options)
                switch op {
                case .equalTo: return "\(other) IS NULL"
                case .notEqualTo: return "\(other) IS NOT NULL"
                default: return "0"
                }
            }
            let left = try operand(comparison.lhs, folding: options)
            let right = try operand(rhs, folding: options)
            let hasConstant = comparison.lhs.isConstant || rhs.isConstant
            if case .numeric(involvesDecimal: true) = comparison.domain {
                let order = "\(PredicateSQLFunctions.compare)(\(left), \(right))"
                let equal = hasConstant ? "\(order) = 0" : "(\(order) = 0 OR (\(left) IS NULL AND \(right) IS NULL))"
                switch op {
                case .equalTo: return equal
                case .notEqualTo: return "(\(equal)) IS NOT 1"
                default: return "\(order) \(op.rawValue) 0"
                }
            }
            switch op {
            case .equalTo: return hasConstant ? "\(left) = \(right)" : "\(left) IS \(right)"
            case .notEqualTo: return "\(left) IS NOT \(right)"
            default: return "\(left) \(op.rawValue) \(right)"
            }
        case .between(let lower, let upper):
            let value = try operand(comparison.lhs, folding: options)
            let low = try operand(lower, folding: options)
            let high = try operand(upper, folding: options)
            if case .numeric(involvesDecimal: true) = comparison.domain {
                let function = PredicateSQLFunctions.compare
                return "(\(function)(\(value), \(low)) >= 0 AND \(function)(\(value), \(high)) <= 0)"
            }
            return "(\(value) BETWEEN \(low) AND \(high))"
        case .oneOf(let values):
            let value = try operand(comparison.lhs, folding: options)
            var alternatives: [String] = []
            let members = values.compactMap { $0 }
            if case .numeric(involvesDecimal: true) = comparison.domain {
                for member in members { alternatives.append("\(PredicateSQLFunctions.compare)(\(value), \(bind(binding(member)))) = 0") }
            } else if !members.isEmpty {
                alternatives.append("\(value) IN (\(members.map { bind(binding($0)) }.joined(separator: ", ")))")
            }
            if members.count < values.count { alternatives.append("\(value) IS NULL") }
            return alternatives.isEmpty ? "0" : "(\(alternatives.joined(separator: " OR ")))"
        }
    }

    // MARK: Operands

    /// The operand as an SQL expression; values read from rows are folded for `[c]`/`[d]`
    /// (constants were folded by the checker).
    mutating func operand(_ operand: Operand, folding options: ComparisonOptions) throws(PredicateError) -> String {
        if case .constant(let value) = operand { return bind(value.map(binding) ?? .null) }
        let expression = try rowValue(operand)
        return options.isEmpty ? expression : "\(PredicateSQLFunctions.fold)(\(expression), \(options.rawValue))"
    }

    mutating func start(_ scope: Scope) -> (alias: String, entity: String) {
        if scope == .element, let element { return element }
        rootReads += 1
        return (rootAlias, rootEntity)
    }

    mutating func rowValue(_ operand: Operand) throws(PredicateError) -> String {
        switch operand {
        case .constant(let value):
            return bind(value.map(binding) ?? .null)
        case .attribute(let scope, let reference):
            let (alias, entity) = start(scope)
            return try attribute(reference, from: alias, entity: entity)
        case .relatedObject(let scope, let steps):
            let (alias, entity) = start(scope)
            if steps.count == 1, case .foreignKey(let column) = try storage(steps[0]) {
                return "\(alias).\(try quote(column))"
            }
            let reached = try chain(from: alias, entity: entity, steps)
            return subquery("\(reached.last).\(try quote(try table(reached.lastEntity).idColumn))", reached)
        case .evaluatedObject:
            return "1"
        case .count(let steps):
            if let countInGroup { return countInGroup }
            rootReads += 1
            counts.insert(.perRow)
            return subquery("COUNT(*)", try chain(from: rootAlias, entity: rootEntity, steps))
        case .collectionFunction(let function, let collection, let reference, let resultType):
            rootReads += 1
            let reached = try chain(from: rootAlias, entity: rootEntity, collection)
            let value = try attribute(reference, from: reached.last, entity: reached.lastEntity)
            let aggregate: String
            if resultType == .decimal {
                // The aggregate answers NULL for no rows; a sum of nothing is 0, as in memory.
                let call = "\(PredicateSQLFunctions.decimalAggregate)(\(function.decimalFunction.rawValue), \(value))"
                aggregate = function == .sum ? "COALESCE(\(call), '0')" : call
            } else {
                aggregate = switch function {
                case .sum: "COALESCE(SUM(\(value)), 0)"
                case .avg: "AVG(\(value))"
                case .min: "MIN(\(value))"
                case .max: "MAX(\(value))"
                }
            }
            return subquery(aggregate, reached)
        }
    }

    mutating func attribute(_ reference: AttributeReference, from alias: String, entity: String) throws(PredicateError) -> String {
        guard !reference.steps.isEmpty else { return "\(alias).\(try column(reference.name, of: reference.entity))" }
        let reached = try chain(from: alias, entity: entity, reference.steps)
        return subquery("\(reached.last).\(try column(reference.name, of: reference.entity))", reached)
    }

    /// The stored form of a value (see `PredicateSQLSchema`).
    func binding(_ value: AttributeValue) -> SQLBinding { value.storedForm }
}

extension AttributeValue {
    /// How the store keeps this value, and how compiled predicates bind it (see `PredicateSQLSchema`):
    /// the one definition of the storage convention that the store and the compiler share.
    public var storedForm: SQLBinding {
        switch self {
        case .integer(let integer): .integer(integer)
        case .decimal(let decimal): .text(decimal.canonicalText)
        case .double(let double): .real(double)
        case .string(let text), .uuid(let text), .uri(let text): .text(text)
        case .boolean(let flag): .integer(flag ? 1 : 0)
        case .date(let milliseconds): .integer(milliseconds)
        case .binary(let bytes): .blob(bytes)
        case .json(let json): .text(json.jsonText)
        }
    }
}

extension ComparisonOperator {
    /// Whether `lhs op rhs` holds for two integers (the order operators; false for the others, which
    /// never reach an order test).
    func holds(_ lhs: Int64, _ rhs: Int64) -> Bool {
        switch self {
        case .equalTo: lhs == rhs
        case .notEqualTo: lhs != rhs
        case .lessThan: lhs < rhs
        case .lessThanOrEqualTo: lhs <= rhs
        case .greaterThan: lhs > rhs
        case .greaterThanOrEqualTo: lhs >= rhs
        case .between, .in, .contains, .beginsWith, .endsWith, .like, .matches: false
        }
    }
}
