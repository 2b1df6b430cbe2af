// The SQL functions that compiled predicates call (`PredicateSQLFunctions`), registered on a
// connection. Each body calls the same pure-Swift code as the in-memory evaluator, so a predicate
// selects the same objects in SQL and in memory. Callbacks are file-scope functions: C function
// pointers cannot capture context.
internal import CSQLite
import CartographCore
import CartographPredicate
import Foundation

extension SQLiteConnection {
    /// Registers `cartograph_fold`, `cartograph_string_match`, `cartograph_compare` and
    /// `cartograph_decimal_aggregate`; call once per connection before running compiled predicates.
    public func registerPredicateFunctions() throws(SQLiteError) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        try check(sqlite3_create_function_v2(handle, PredicateSQLFunctions.fold, 2, flags, nil, predicateFold, nil, nil, nil))
        try check(sqlite3_create_function_v2(handle, PredicateSQLFunctions.stringMatch, 4, flags, nil, predicateStringMatch, nil, nil, nil))
        try check(sqlite3_create_function_v2(handle, PredicateSQLFunctions.compare, 2, flags, nil, predicateCompare, nil, nil, nil))
        try check(sqlite3_create_function_v2(handle, PredicateSQLFunctions.decimalAggregate, 2, flags, nil, nil,
                                             decimalAggregateStep, decimalAggregateFinal, nil))
    }
}

// MARK: Reading and writing values

/// The text of a TEXT (or other non-NULL) value; nil for NULL.
private func textArgument(_ value: OpaquePointer?) -> String? {
    guard sqlite3_value_type(value) != SQLITE_NULL, let bytes = sqlite3_value_text(value) else { return nil }
    let count = Int(sqlite3_value_bytes(value))
    return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
}

/// A number: INTEGER and REAL as themselves, TEXT as a decimal; nil for NULL, BLOB or non-numeric text.
private func numericArgument(_ value: OpaquePointer?) -> NumericValue? {
    switch sqlite3_value_type(value) {
    case SQLITE_INTEGER: return .integer(sqlite3_value_int64(value))
    case SQLITE_FLOAT: return .double(sqlite3_value_double(value))
    case SQLITE_TEXT: return textArgument(value).flatMap(PredicateSQLFunctions.decimal(fromText:)).map { .decimal($0) }
    default: return nil
    }
}

private func resultText(_ context: OpaquePointer?, _ text: String) {
    // An explicit length keeps any embedded NUL; withCString's buffer holds every byte.
    let length = sqlite3_uint64(text.utf8.count)
    text.withCString { sqlite3_result_text64(context, $0, length, csqlite_transient(), UInt8(SQLITE_UTF8)) }
}

// MARK: Scalar functions

/// cartograph_fold(text, options)
private func predicateFold(_ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
    guard let arguments, let text = textArgument(arguments[0]) else { return sqlite3_result_null(context) }
    resultText(context, PredicateSQLFunctions.fold(text, options: Int(sqlite3_value_int64(arguments[1]))))
}

/// A compiled pattern kept with its statement (SQLite's auxiliary data) while the pattern argument
/// stays the same, so a regular expression is compiled once per query rather than once per row.
private final class CachedPattern {
    let code: Int
    let options: Int
    let source: String
    let pattern: StringPattern?

    init(code: Int, options: Int, source: String) {
        self.code = code
        self.options = options
        self.source = source
        self.pattern = PredicateSQLFunctions.stringPattern(operator: code, options: options, pattern: source)
    }
}

private func releaseCachedPattern(_ pointer: UnsafeMutableRawPointer?) {
    guard let pointer else { return }
    Unmanaged<CachedPattern>.fromOpaque(pointer).release()
}

/// cartograph_string_match(operator, options, subject, pattern)
private func predicateStringMatch(_ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
    guard let arguments, let subject = textArgument(arguments[2]), let source = textArgument(arguments[3]) else {
        return sqlite3_result_null(context)
    }
    let code = Int(sqlite3_value_int64(arguments[0]))
    let options = Int(sqlite3_value_int64(arguments[1]))
    let cached: CachedPattern
    if let pointer = sqlite3_get_auxdata(context, 3),
        case let candidate = Unmanaged<CachedPattern>.fromOpaque(pointer).takeUnretainedValue(),
        candidate.code == code, candidate.options == options, candidate.source == source
    {
        cached = candidate
    } else {
        cached = CachedPattern(code: code, options: options, source: source)
        sqlite3_set_auxdata(context, 3, Unmanaged.passRetained(cached).toOpaque(), releaseCachedPattern)
    }
    let matched = cached.pattern?.matches(subject) == true
    // A regular expression the request's deadline cut short has no answer: the statement fails
    // (SQLITE_INTERRUPT, as the progress handler would) instead of counting it as no match (R-S2).
    if !matched, RequestDeadline.hasPassed { return sqlite3_result_error_code(context, SQLITE_INTERRUPT) }
    sqlite3_result_int64(context, matched ? 1 : 0)
}

/// cartograph_compare(a, b)
private func predicateCompare(_ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
    guard let arguments, let lhs = numericArgument(arguments[0]), let rhs = numericArgument(arguments[1]),
        let order = NumericValue.compare(lhs, rhs)
    else { return sqlite3_result_null(context) }
    sqlite3_result_int64(context, Int64(order))
}

// MARK: Decimal aggregate

/// The running aggregation, owned by SQLite's per-call aggregate context between step and final.
private final class DecimalAggregationBox {
    var aggregation: DecimalAggregation
    init(_ function: DecimalAggregation.Function) { aggregation = DecimalAggregation(function) }
}

/// cartograph_decimal_aggregate(function, value): one row.
private func decimalAggregateStep(_ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
    guard let arguments, let function = DecimalAggregation.Function(rawValue: Int(sqlite3_value_int64(arguments[0]))) else {
        return sqlite3_result_error(context, "cartograph_decimal_aggregate: unknown function", -1)
    }
    let decimal: Decimal? = switch numericArgument(arguments[1]) {
    case .decimal(let value)?: value
    case .integer(let value)?: Decimal(value)
    case .double(let value)?: Decimal(string: "\(value)")
    case nil: nil
    }
    guard let decimal else { return }  // NULL (or non-numeric text) is skipped, as SQL aggregates do
    guard let slot = sqlite3_aggregate_context(context, Int32(MemoryLayout<UnsafeMutableRawPointer?>.size))?
        .assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
    else { return sqlite3_result_error_nomem(context) }
    if slot.pointee == nil { slot.pointee = Unmanaged.passRetained(DecimalAggregationBox(function)).toOpaque() }
    guard let pointer = slot.pointee else { return }
    Unmanaged<DecimalAggregationBox>.fromOpaque(pointer).takeUnretainedValue().aggregation.add(decimal)
}

/// cartograph_decimal_aggregate: the result (NULL when no non-NULL value was seen).
private func decimalAggregateFinal(_ context: OpaquePointer?) {
    guard let slot = sqlite3_aggregate_context(context, 0)?.assumingMemoryBound(to: UnsafeMutableRawPointer?.self),
        let pointer = slot.pointee
    else { return sqlite3_result_null(context) }
    slot.pointee = nil
    let box = Unmanaged<DecimalAggregationBox>.fromOpaque(pointer).takeRetainedValue()
    guard let result = box.aggregation.result else { return sqlite3_result_null(context) }
    resultText(context, result.canonicalText)
}
