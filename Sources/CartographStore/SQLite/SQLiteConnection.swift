// One SQLite database handle. Not Sendable: reach it only through a lock-holding owner
// (a `Mutex<SQLiteConnection>` or a store that serializes access).
internal import CSQLite
import CartographCore

/// How durable a commit is (`--sync`, R-S4): NORMAL survives a process crash in WAL mode,
/// FULL also survives power loss.
public enum SQLiteSynchronous: String, Sendable, CaseIterable {
    case normal, full
}

/// An open SQLite database with a cache of prepared statements.
public final class SQLiteConnection {
    let handle: OpaquePointer
    /// The path the connection was opened with (":memory:" for an in-memory database).
    public let path: String
    private var statementCache: [String: SQLiteStatement] = [:]
    /// The cached statements' SQL, oldest first: a query's SQL varies with its predicate's shape (and a
    /// lookup's with its number of identities), so the cache keeps the newest `statementCacheCapacity`.
    private var statementCacheOrder: [String] = []
    static let statementCacheCapacity = 128
    var cachedStatementCount: Int { statementCache.count }
    /// True while BEGIN, COMMIT or ROLLBACK runs: those finish whatever the deadline interrupted.
    private var runningTransactionControl = false
    /// Frames in the write-ahead log after this connection's last commit, once
    /// `recordWALFramesInsteadOfCheckpointing` has been called.
    public private(set) var walFrames = 0

    /// Opens (and creates, unless `readOnly`) the database at `path` with WAL journaling.
    public init(path: String, readOnly: Bool = false, synchronous: SQLiteSynchronous = .normal) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE))
            | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open database"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: SQLiteResultCode(rawValue: rc), message: message)
        }
        self.handle = db
        self.path = path
        // A writer waiting for another process's lock (e.g. a backup) waits instead of failing.
        sqlite3_busy_timeout(db, Self.busyTimeoutMilliseconds)
        sqlite3_extended_result_codes(db, 1)
        // R-S2: a statement running past the request's deadline is interrupted (SQLITE_INTERRUPT;
        // an interrupted write rolls its transaction back). The handler runs every few thousand
        // virtual-machine steps, on the thread running the statement, so it sees that request's deadline.
        sqlite3_progress_handler(db, 4_096, { context in
            guard let context else { return 0 }
            let connection = Unmanaged<SQLiteConnection>.fromOpaque(context).takeUnretainedValue()
            return !connection.runningTransactionControl && RequestDeadline.hasPassed ? 1 : 0
        }, Unmanaged.passUnretained(self).toOpaque())
        if !readOnly, path != ":memory:" {
            try execute("PRAGMA journal_mode=WAL")
        }
        try execute("PRAGMA synchronous=\(synchronous.rawValue.uppercased())")
        try execute("PRAGMA foreign_keys=ON")
    }

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Replaces SQLite's automatic checkpoint — run by the commit that takes the WAL past 1,000 frames,
    /// inside that commit — with a count of the WAL's frames after each commit (`walFrames`): the owner
    /// decides when and where to checkpoint.
    public func recordWALFramesInsteadOfCheckpointing() {
        sqlite3_wal_hook(handle, { context, _, _, frames in
            guard let context else { return SQLITE_OK }
            Unmanaged<SQLiteConnection>.fromOpaque(context).takeUnretainedValue().walFrames = Int(frames)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// A PASSIVE checkpoint: copies what it can of the WAL into the database file without waiting for
    /// readers or the writer. Returns true when every frame of the log is in the database file now.
    @discardableResult
    public func checkpoint() throws(SQLiteError) -> Bool {
        var logFrames: Int32 = 0, copiedFrames: Int32 = 0
        try check(sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copiedFrames))
        return logFrames == copiedFrames
    }

    static let busyTimeoutMilliseconds: Int32 = 5_000

    /// A TRUNCATE checkpoint: copies the rest of the WAL and cuts its file to zero bytes; SQLITE_BUSY
    /// (thrown) at once while a reader still uses the log — it does not wait for readers, as its caller
    /// holds the write lock and writers would wait with it. Call it only where no other connection writes.
    public func truncateLog() throws(SQLiteError) {
        sqlite3_busy_timeout(handle, 0)
        defer { sqlite3_busy_timeout(handle, Self.busyTimeoutMilliseconds) }
        try check(sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil))
    }

    /// Turns a non-OK return code into an `SQLiteError` carrying the connection's message.
    func check(_ rc: Int32, sql: String? = nil) throws(SQLiteError) {
        guard rc != SQLITE_OK, rc != SQLITE_ROW, rc != SQLITE_DONE else { return }
        throw SQLiteError(
            code: SQLiteResultCode(rawValue: sqlite3_extended_errcode(handle)),
            message: String(cString: sqlite3_errmsg(handle)),
            sql: sql
        )
    }

    /// Runs one or more statements with no parameters (schema, pragmas).
    public func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: SQLiteResultCode(rawValue: sqlite3_extended_errcode(handle)), message: message, sql: sql)
        }
    }

    /// Runs a transaction-control statement (BEGIN, COMMIT, ROLLBACK), which the request deadline
    /// never interrupts: a transaction is always ended, and a pooled connection never left inside one.
    public func control(_ sql: String) throws(SQLiteError) {
        runningTransactionControl = true
        defer { runningTransactionControl = false }
        // Prepared once: every read begins and commits, and `execute` parsed BEGIN and COMMIT again for
        // each (allocations that, with SQLite's memory statistics on, take its global memory lock).
        try cached(sql).run()
    }

    /// Prepares a statement that the caller owns.
    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try prepare(sql, persistent: false)
    }

    /// Returns a cached prepared statement for `sql` (prepared once per connection).
    public func cached(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statementCache[sql] { return statement }
        let statement = try prepare(sql, persistent: true)
        if statementCache.count >= Self.statementCacheCapacity {
            // A statement still in use by a caller stays alive (it is a class) and is finalized after.
            statementCache[statementCacheOrder.removeFirst()] = nil
        }
        statementCache[sql] = statement
        statementCacheOrder.append(sql)
        return statement
    }

    private func prepare(_ sql: String, persistent: Bool) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let rc = sqlite3_prepare_v3(handle, sql, -1, flags, &statement, nil)
        try check(rc, sql: sql)
        guard let statement else {
            throw SQLiteError(code: .error, message: "empty statement", sql: sql)
        }
        return SQLiteStatement(handle: statement, sql: sql, connection: self)
    }

    /// Runs `sql` with `values` bound, through the statement cache.
    public func run(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) {
        try cached(sql).run(values)
    }

    /// Returns every row of `sql` with `values` bound, through the statement cache.
    public func rows(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        try cached(sql).rows(values)
    }

    /// Caps what every SQLite connection of the process holds together, page caches above all: past
    /// `bytes`, a cache recycles its least recently used pages instead of growing (SQLite's soft heap
    /// limit; nothing fails at it). Nil reads the current cap (0: none).
    @discardableResult
    public static func limitMemory(bytes: Int64?) -> Int64 { sqlite3_soft_heap_limit64(bytes ?? -1) }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`; rolls back if it throws, or always when `rollingBack`.
    public func transaction<T, E: Error>(rollingBack: Bool = false, _ body: () throws(E) -> T) throws(TransactionError<E>) -> T {
        do { try control("BEGIN IMMEDIATE") } catch { throw .sqlite(error) }
        let result: T
        do {
            result = try body()
        } catch {
            try? control("ROLLBACK")
            throw .body(error)
        }
        if rollingBack {
            do { try control("ROLLBACK") } catch { throw .sqlite(error) }
            return result
        }
        do { try control("COMMIT") } catch {
            try? control("ROLLBACK")
            throw .sqlite(error)
        }
        return result
    }

    /// Rows changed by the last statement.
    public var changes: Int { Int(sqlite3_changes64(handle)) }
}

/// Why a transaction failed: SQLite refused BEGIN/COMMIT, or the body threw.
public enum TransactionError<Body: Error>: Error, WrappingError {
    case sqlite(SQLiteError)
    case body(Body)

    public var underlying: any Error {
        switch self {
        case .sqlite(let error): error
        case .body(let error): error
        }
    }
}

/// An error that only carries another (whatever its generic parameters), so a handler can reach the cause.
public protocol WrappingError: Error {
    var underlying: any Error { get }
}
