// A collation that orders decimal columns (stored as canonical text to keep every digit) by value.
internal import CSQLite
import Foundation

extension SQLiteConnection {
    /// The collation name for decimal columns in ORDER BY and keyset comparisons.
    public static let decimalCollation = "CARTOGRAPH_DECIMAL"

    /// Registers `CARTOGRAPH_DECIMAL` on this connection.
    public func registerCollations() throws(SQLiteError) {
        let rc = sqlite3_create_collation_v2(handle, Self.decimalCollation, SQLITE_UTF8, nil, compareDecimalText, nil)
        try check(rc)
    }
}

/// Numeric comparison of two decimal texts; texts that are not numbers sort after numbers, by bytes.
private func compareDecimalText(_: UnsafeMutableRawPointer?, _ leftCount: Int32, _ left: UnsafeRawPointer?,
                                _ rightCount: Int32, _ right: UnsafeRawPointer?) -> Int32 {
    let a = String(decoding: UnsafeRawBufferPointer(start: left, count: Int(leftCount)), as: UTF8.self)
    let b = String(decoding: UnsafeRawBufferPointer(start: right, count: Int(rightCount)), as: UTF8.self)
    switch (Decimal(string: a, locale: Locale(identifier: "en_US_POSIX")), Decimal(string: b, locale: Locale(identifier: "en_US_POSIX"))) {
    case (let x?, let y?): return x < y ? -1 : (x > y ? 1 : 0)
    case (nil, _?): return 1
    case (_?, nil): return -1
    case (nil, nil): return a < b ? -1 : (a > b ? 1 : 0)
    }
}
