// The syntax tree of the NSPredicate format language (R-Q1), as the parser produces it and the
// formatter prints it. Nothing here knows a model; `PredicateChecker` gives it meaning.

/// A predicate as written: comparisons combined with AND, OR and NOT.
public indirect enum Predicate: Sendable, Equatable {
    /// `TRUEPREDICATE` / `FALSEPREDICATE`.
    case constant(Bool)
    /// `NOT p`, `!p`.
    case not(Predicate)
    /// `a AND b AND c`: one node per chain, so long chains do not make deep trees.
    case and([Predicate])
    /// `a OR b OR c`.
    case or([Predicate])
    /// `[ANY|ALL|NONE] lhs op[options] rhs`.
    case comparison(Comparison)
}

/// One comparison, e.g. `ANY tags.name BEGINSWITH[cd] "sw"`.
public struct Comparison: Sendable, Equatable {
    /// ANY/SOME, ALL or NONE before the left expression; nil for a direct comparison.
    public var quantifier: Quantifier?
    public var lhs: Expression
    public var comparisonOperator: ComparisonOperator
    public var options: ComparisonOptions
    public var rhs: Expression

    public init(quantifier: Quantifier? = nil, _ lhs: Expression, _ comparisonOperator: ComparisonOperator,
                options: ComparisonOptions = [], _ rhs: Expression) {
        self.quantifier = quantifier
        self.lhs = lhs
        self.comparisonOperator = comparisonOperator
        self.options = options
        self.rhs = rhs
    }
}

/// The aggregate modifier of a comparison over a to-many key path.
public enum Quantifier: String, Sendable, Equatable, CaseIterable {
    /// `ANY` (also written `SOME`): at least one element matches.
    case any = "ANY"
    /// `ALL`: every element matches (true for an empty collection).
    case all = "ALL"
    /// `NONE`: no element matches.
    case none = "NONE"
}

/// The operator of a comparison.
public enum ComparisonOperator: String, Sendable, Equatable, CaseIterable {
    case equalTo = "=="
    case notEqualTo = "!="
    case lessThan = "<"
    case lessThanOrEqualTo = "<="
    case greaterThan = ">"
    case greaterThanOrEqualTo = ">="
    case between = "BETWEEN"
    case `in` = "IN"
    case contains = "CONTAINS"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case like = "LIKE"
    case matches = "MATCHES"

    /// The operator with its operands swapped (`5 < age` is `age > 5`); nil when it has no mirror.
    var mirrored: ComparisonOperator? {
        switch self {
        case .equalTo, .notEqualTo: self
        case .lessThan: .greaterThan
        case .lessThanOrEqualTo: .greaterThanOrEqualTo
        case .greaterThan: .lessThan
        case .greaterThanOrEqualTo: .lessThanOrEqualTo
        default: nil
        }
    }
}

/// The `[c]`, `[d]` and `[cd]` modifiers.
public struct ComparisonOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `[c]`: case folding.
    public static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`: diacritic folding.
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
}

/// Where a node was written: a 0-based offset in Characters of the predicate string.
///
/// Positions are metadata, not meaning: two trees that differ only in where their parts were
/// written are equal, which is what a format -> parse round trip needs.
public struct SourceOffset: Sendable, Equatable, CustomStringConvertible {
    public var value: Int
    public init(_ value: Int) { self.value = value }
    public static func == (lhs: SourceOffset, rhs: SourceOffset) -> Bool { true }
    public var description: String { String(value) }
}

/// An operand of a comparison.
public struct Expression: Sendable, Equatable {
    public var kind: Kind
    /// Where the expression starts in the predicate string.
    public var offset: SourceOffset

    public init(_ kind: Kind, offset: Int = 0) {
        self.kind = kind
        self.offset = SourceOffset(offset)
    }

    /// The kinds of operand.
    public indirect enum Kind: Sendable, Equatable {
        /// `publisher.name`, `tags.@count`, `tags.@sum.weight`; `SELF.name` is `name`.
        case keyPath([String])
        /// `SELF`: the evaluated object.
        case evaluatedObject
        case literal(Literal)
        /// `$name`, bound from the query's `arguments`.
        case variable(String)
        /// `{a, b, c}`.
        case aggregate([Expression])
        /// `CAST(value, "NSDate")`.
        case cast(Expression, String)
    }
}

/// A literal value as written.
public enum Literal: Sendable, Equatable {
    /// `nil` / `NULL`.
    case null
    /// `YES`/`TRUE`/`NO`/`FALSE`.
    case boolean(Bool)
    /// A number in decimal notation (`-12`, `1.50`, `6.02e23`); hexadecimal, octal and binary
    /// integers are converted to decimal when parsed.
    case number(String)
    case string(String)
}

/// The collection operators a key path may contain.
public enum CollectionOperator: String, Sendable, CaseIterable {
    case count = "@count"
    case sum = "@sum"
    case avg = "@avg"
    case min = "@min"
    case max = "@max"
}
