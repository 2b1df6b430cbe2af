// How two attribute values compare: numbers by value across integer/decimal/double, strings by
// Unicode code point (SQLite's BINARY collation), false < true, instants in time order, bytes
// lexicographically. The SQL functions call the numeric part, so SQL and memory agree.
public import Foundation
import CartographCore

/// A number of any of the model's numeric representations.
public enum NumericValue: Sendable, Equatable {
    case integer(Int64)
    case double(Double)
    case decimal(Decimal)

    /// -1, 0 or 1 as `lhs` is less than, equal to or greater than `rhs`; nil when either is NaN.
    public static func compare(_ lhs: NumericValue, _ rhs: NumericValue) -> Int? {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): return sign(a, b)
        case (.double(let a), .double(let b)): return a.isNaN || b.isNaN ? nil : sign(a, b)
        case (.decimal(let a), .decimal(let b)): return a.isNaN || b.isNaN ? nil : sign(a, b)
        case (.integer(let a), .double(let b)): return compare(a, b)
        case (.double(let a), .integer(let b)): return compare(b, a).map { -$0 }
        case (.integer(let a), .decimal(let b)): return b.isNaN ? nil : sign(Decimal(a), b)
        case (.decimal(let a), .integer(let b)): return a.isNaN ? nil : sign(a, Decimal(b))
        case (.decimal(let a), .double(let b)): return compare(.double(doubleValue(a)), .double(b))
        case (.double(let a), .decimal(let b)): return compare(.double(a), .double(doubleValue(b)))
        }
    }

    /// The double nearest to a decimal (through its text, which Swift rounds correctly).
    private static func doubleValue(_ decimal: Decimal) -> Double {
        Double(decimal.canonicalText) ?? .nan
    }

    private static func sign<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }

    /// Exact integer/double comparison, the same as SQLite's.
    private static func compare(_ integer: Int64, _ double: Double) -> Int? {
        if double.isNaN { return nil }
        if double < -9_223_372_036_854_775_808.0 { return 1 }
        if double >= 9_223_372_036_854_775_808.0 { return -1 }
        let truncated = Int64(double)
        if integer != truncated { return sign(integer, truncated) }
        return sign(Double(integer), double)
    }
}

/// Running sum/average/minimum/maximum of decimals: `@sum`, `@avg`, `@min`, `@max` over a decimal
/// attribute in memory, and the SQL aggregate `cartograph_decimal_aggregate`.
public struct DecimalAggregation: Sendable {
    /// The function computed, numbered for the SQL aggregate.
    public enum Function: Int, Sendable {
        case sum = 1, avg = 2, min = 3, max = 4
    }

    public let function: Function
    private var total = Decimal(0)
    private var count = 0
    private var extreme: Decimal?

    public init(_ function: Function) { self.function = function }

    /// Adds one non-nil value.
    public mutating func add(_ value: Decimal) {
        total += value
        count += 1
        switch function {
        case .min: if extreme.map({ value < $0 }) ?? true { extreme = value }
        case .max: if extreme.map({ value > $0 }) ?? true { extreme = value }
        case .sum, .avg: break
        }
    }

    /// The result: a sum of nothing is 0; an average, minimum or maximum of nothing is nil.
    public var result: Decimal? {
        switch function {
        case .sum: total
        case .avg: count == 0 ? nil : total / Decimal(count)
        case .min, .max: extreme
        }
    }
}

extension AttributeValue {
    /// The value as a number, for the numeric types.
    var numericValue: NumericValue? {
        switch self {
        case .integer(let value): .integer(value)
        case .double(let value): .double(value)
        case .decimal(let value): .decimal(value)
        default: nil
        }
    }
}

/// Comparison of two non-nil values of one domain.
enum ValueComparison {
    /// -1, 0 or 1; nil when the values cannot be ordered (NaN, or kinds that do not compare).
    static func order(_ lhs: AttributeValue, _ rhs: AttributeValue) -> Int? {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.double(let a), .double(let b)): return a.isNaN || b.isNaN ? nil : (a < b ? -1 : (a == b ? 0 : 1))
        case (.string(let a), .string(let b)), (.uuid(let a), .uuid(let b)), (.uri(let a), .uri(let b)),
            (.string(let a), .uuid(let b)), (.uuid(let a), .string(let b)),
            (.string(let a), .uri(let b)), (.uri(let a), .string(let b)),
            (.uuid(let a), .uri(let b)), (.uri(let a), .uuid(let b)):
            return codePointOrder(a, b)
        case (.date(let a), .date(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.boolean(let a), .boolean(let b)): return a == b ? 0 : (a ? 1 : -1)
        case (.binary(let a), .binary(let b)):
            return a.lexicographicallyPrecedes(b) ? -1 : (a == b ? 0 : 1)
        case (.json(let a), .json(let b)): return a == b ? 0 : nil
        default:
            guard let a = lhs.numericValue, let b = rhs.numericValue else { return nil }
            return NumericValue.compare(a, b)
        }
    }

    /// Foundation's equality: nil equals nil, and nothing else.
    static func equal(_ lhs: AttributeValue?, _ rhs: AttributeValue?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case (let a?, let b?): order(a, b) == 0
        default: false
        }
    }

    /// UTF-8 byte order, which is code point order (and SQLite's BINARY collation); `==` on Swift
    /// strings would treat canonically equivalent strings as equal, SQLite does not.
    static func codePointOrder(_ a: String, _ b: String) -> Int {
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?): if x != y { return x < y ? -1 : 1 }
            }
        }
    }
}
