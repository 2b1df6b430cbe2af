// Every SQLite return code is checked in one place (`SQLiteConnection.check`) and becomes this error.
internal import CSQLite

/// An SQLite result code, kept open like the C API's integer codes (new codes may appear).
public struct SQLiteResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code (the low byte of an extended code).
    public var primary: SQLiteResultCode { SQLiteResultCode(rawValue: rawValue & 0xFF) }

    public static let ok = SQLiteResultCode(rawValue: SQLITE_OK)
    public static let busy = SQLiteResultCode(rawValue: SQLITE_BUSY)
    public static let constraint = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT)
    public static let full = SQLiteResultCode(rawValue: SQLITE_FULL)
    public static let corrupt = SQLiteResultCode(rawValue: SQLITE_CORRUPT)
    public static let cantOpen = SQLiteResultCode(rawValue: SQLITE_CANTOPEN)
    public static let error = SQLiteResultCode(rawValue: SQLITE_ERROR)
    public static let interrupt = SQLiteResultCode(rawValue: SQLITE_INTERRUPT)
    public static let readOnly = SQLiteResultCode(rawValue: SQLITE_READONLY)
    public static let permission = SQLiteResultCode(rawValue: SQLITE_PERM)
    public static let ioError = SQLiteResultCode(rawValue: SQLITE_IOERR)
    public static let notADatabase = SQLiteResultCode(rawValue: SQLITE_NOTADB)

    public var description: String { String(cString: sqlite3_errstr(rawValue)) + " (\(rawValue))" }
}

/// A failed SQLite call: the extended result code, SQLite's message and the statement's SQL.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    public let code: SQLiteResultCode
    public let message: String
    public let sql: String?

    public init(code: SQLiteResultCode, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    public var description: String {
        "SQLite error \(code): \(message)" + (sql.map { " in «\($0)»" } ?? "")
    }
}
