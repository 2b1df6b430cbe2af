// The SQLite functions compiled predicates call, by name, and the pure-Swift bodies the store
// registers for them (`SQLiteConnection+Predicates.swift`). The evaluator runs the same code.
public import Foundation
import CartographCore

/// Names and bodies of the SQL functions that compiled predicates use.
public enum PredicateSQLFunctions {
    /// `cartograph_fold(text, options)` -> text: `[c]`/`[d]` folding (`StringFolding.fold`).
    public static let fold = "cartograph_fold"
    /// `cartograph_string_match(operator, options, subject, pattern)` -> 1, 0, or NULL when either
    /// string is NULL: CONTAINS, BEGINSWITH, ENDSWITH, LIKE, MATCHES (`StringPattern`).
    public static let stringMatch = "cartograph_string_match"
    /// `cartograph_compare(a, b)` -> -1, 0, 1, or NULL when either is NULL: numbers by value;
    /// TEXT is read as a decimal (`NumericValue.compare`).
    public static let compare = "cartograph_compare"
    /// `cartograph_decimal_aggregate(function, value)` -> decimal TEXT, or NULL over no rows:
    /// @sum/@avg/@min/@max over decimal TEXT (`DecimalAggregation`, function numbered as its cases).
    public static let decimalAggregate = "cartograph_decimal_aggregate"

    /// The body of `cartograph_fold`.
    public static func fold(_ text: String, options: Int) -> String {
        StringFolding.fold(text, ComparisonOptions(rawValue: options))
    }

    /// The pattern `cartograph_string_match` tests with; nil for an unknown operator or an invalid
    /// regular expression (the function then answers 0, as the evaluator does).
    public static func stringPattern(operator code: Int, options: Int, pattern: String) -> StringPattern? {
        guard let stringOperator = StringOperator(rawValue: code) else { return nil }
        return try? StringPattern(stringOperator, options: ComparisonOptions(rawValue: options), pattern: pattern)
    }

    /// A decimal stored as TEXT; nil when the text is not a number.
    public static func decimal(fromText text: String) -> Decimal? {
        NumberText(text)?.decimalValue
    }
}
