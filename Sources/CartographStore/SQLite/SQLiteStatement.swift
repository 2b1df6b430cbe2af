// A prepared statement. Not Sendable: it belongs to the connection that prepared it.
internal import CSQLite

/// A prepared statement with positional parameters (`?`, bound from 1).
public final class SQLiteStatement {
    let handle: OpaquePointer
    /// The statement's SQL, for error messages.
    public let sql: String
    unowned let connection: SQLiteConnection

    init(handle: OpaquePointer, sql: String, connection: SQLiteConnection) {
        self.handle = handle
        self.sql = sql
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and binds `values` to parameters 1...n.
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds one value to the 1-based parameter `index`.
    public func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
        case .real(let v): rc = sqlite3_bind_double(handle, index, v)
        case .text(let v):
            // An explicit length keeps an embedded NUL (with -1 SQLite would stop at it, so "a\0b" would
            // be stored, compared and identified as "a"); withCString's buffer holds every byte.
            let length = sqlite3_uint64(v.utf8.count)
            rc = v.withCString { sqlite3_bind_text64(handle, index, $0, length, csqlite_transient(), UInt8(SQLITE_UTF8)) }
        case .blob(let v):
            rc = v.withUnsafeBytes { sqlite3_bind_blob64(handle, index, $0.baseAddress, sqlite3_uint64($0.count), csqlite_transient()) }
        }
        try connection.check(rc, sql: sql)
    }

    /// Advances to the next row; false when the statement is done.
    public func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        try connection.check(rc, sql: sql)
        return false
    }

    /// Runs the statement to completion, ignoring rows, and resets it.
    public func run(_ values: [SQLiteValue] = []) throws(SQLiteError) {
        try bind(values)
        try runBound()
    }

    /// Runs the statement with the parameters bound now to completion, ignoring rows, and resets it.
    public func runBound() throws(SQLiteError) {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// Runs the statement and returns every row, then resets it.
    public func rows(_ values: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        try bind(values)
        defer { sqlite3_reset(handle) }
        var result: [[SQLiteValue]] = []
        let count = columnCount
        while try step() {
            result.append((0..<count).map { column($0) })
        }
        return result
    }

    /// Rows a full table scan stepped through since the last call (the count restarts at 0): SQLite's
    /// `SQLITE_STMTSTATUS_FULLSCAN_STEP`, which an index would have spared.
    public func takeFullScanSteps() -> Int {
        Int(sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_FULLSCAN_STEP, 1))
    }

    /// Number of result columns.
    public var columnCount: Int32 { sqlite3_column_count(handle) }

    /// Reads column `index` of the current row.
    /// The storage class of column `index` in the current row.
    func columnType(_ index: Int32) -> Int32 { sqlite3_column_type(handle, index) }

    /// Column `index` of the current row as an integer (its value converted as SQLite converts).
    func columnInteger(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// The UTF-8 bytes of text column `index`, valid only inside `body` (no String is made: a page
    /// renders titles and bodies straight into its response).
    func withColumnText<R>(_ index: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let count = Int(sqlite3_column_bytes(handle, index))
        return body(UnsafeBufferPointer(start: sqlite3_column_text(handle, index), count: count))
    }

    public func column(_ index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard let bytes = sqlite3_column_text(handle, index) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }
}
