// One model's SQLite store (`<data-dir>/tenants/<tenant>/<model>.sqlite`): its schema, objects and
// change feed. Writes are serialized on one connection (R-S3: no SQLITE_BUSY reaches a client);
// reads run on a small pool of WAL connections, each inside a read transaction so a page, its count
// and its includes see one snapshot.
import Foundation
import Synchronization
public import CartographCore
import CartographPredicate

/// What registering a model did (R-M6).
public enum ModelRegistration: Sendable, Equatable {
    case created, migrated, unchanged
}

/// A model's store. Thread-safe.
public final class ModelStore: Sendable {
    public let name: String
    public let path: String
    /// A random id fixed when the store file was created (R-D7): change-feed pages carry it.
    public let epoch: String
    private let synchronous: SQLiteSynchronous

    /// The writer connection and the model it last applied. @unchecked Sendable: it is reached only
    /// inside `writeLock.withLock`, so one thread at a time uses it (GRDB's serialized database).
    private final class Writer: @unchecked Sendable {
        let connection: SQLiteConnection
        var model: Model?
        /// The layout of `model`, kept across writes: its lookups are cached per layout.
        private var cachedLayout: StoreLayout?
        init(connection: SQLiteConnection, model: Model?) {
            self.connection = connection
            self.model = model
        }

        func layout(for model: Model) -> StoreLayout {
            if let cachedLayout, cachedLayout.model.version == model.version { return cachedLayout }
            let layout = StoreLayout(model: model)
            cachedLayout = layout
            return layout
        }
    }

    /// An idle read connection. @unchecked Sendable: a connection in the pool is used by no thread;
    /// `read` takes it out under the pool's lock, uses it on one thread, and puts it back under the
    /// lock, so it is never reached from two threads at once.
    private final class PooledConnection: @unchecked Sendable {
        let connection: SQLiteConnection
        /// The layout last used on this connection, reused while the model version is the same.
        private var cachedLayout: StoreLayout?
        init(_ connection: SQLiteConnection) { self.connection = connection }

        func layout(for model: Model) -> StoreLayout {
            if let cachedLayout, cachedLayout.model.version == model.version { return cachedLayout }
            let layout = StoreLayout(model: model)
            cachedLayout = layout
            return layout
        }
    }

    private struct ReaderPool: ~Copyable {
        var idle: [PooledConnection] = []
    }

    private let writer: Writer
    private let writeLock = WriteLock()
    private let readers = Mutex(ReaderPool())
    /// The committed model, for readers (updated after each registration commits).
    /// The committed model and its stored JSON text (readers compare texts to notice a migration).
    private let published: Mutex<(model: Model, text: String)?>
    private let lastUsed = Atomic<Int64>(0)
    /// Bytes the store's pages hold, as of its last commit (see `measureBytes`).
    private let storedBytes = Atomic<Int64>(0)
    /// Whether large commits leave their checkpoint to another thread (see `checkpointIfDue`).
    private let checkpointsInBackground: Bool
    /// A checkpoint is running on another thread.
    private let checkpointing = Atomic<Bool>(false)
    /// WAL frames (pages) past which a commit has the log checkpointed on another thread, and past
    /// which — that checkpointer having fallen behind — the commit checkpoints it itself.
    static let checkpointFrames = 1_000, writerCheckpointFrames = 10_000

    static let metaTable = "_cartograph_meta", mappingsTable = "_cartograph_mappings", idempotencyTable = "_cartograph_idempotency"

    /// Opens or creates the store file at `path`. `checkpointsInBackground` is for the server, whose
    /// writer goes on to the next request meanwhile; a one-shot writer (`cartograph map`) keeps SQLite's
    /// own checkpoints, so that nothing is left running when it closes the store and exits.
    public init(name: String, path: String, synchronous: SQLiteSynchronous = .normal, checkpointsInBackground: Bool = false) throws(CartographError) {
        self.checkpointsInBackground = checkpointsInBackground
        self.name = name
        self.path = path
        self.synchronous = synchronous
        let bytes: Int64
        do {
            let connection = try SQLiteConnection(path: path, synchronous: synchronous)
            try connection.registerPredicateFunctions()
            try connection.registerCollations()
            // The writer walks identity indexes of large tables: a 32 MiB page cache (grown only as used)
            // instead of SQLite's 2 MiB keeps them in memory.
            try connection.execute("PRAGMA cache_size = \(Self.writerCacheKiB)")
            // When the log restarts after a checkpoint, its file is cut back to 4 MiB.
            try connection.execute("PRAGMA journal_size_limit = 4194304")
            if checkpointsInBackground { connection.recordWALFramesInsteadOfCheckpointing() }
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS \(quoted(Self.metaTable)) (key TEXT PRIMARY KEY NOT NULL, value);
                CREATE TABLE IF NOT EXISTS \(quoted(Self.mappingsTable)) (name TEXT PRIMARY KEY NOT NULL, document TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS \(quoted(Self.idempotencyTable)) (
                    key TEXT PRIMARY KEY NOT NULL, request_sha256 BLOB NOT NULL, response TEXT NOT NULL, at INTEGER NOT NULL);
                """ + StoreTransaction.pendingConnectionsSchema)
            epoch = try ChangeFeed.prepare(connection)
            let loaded = try Self.loadModel(connection, name: name)
            bytes = try Self.measureBytes(connection)
            writer = Writer(connection: connection, model: loaded?.model)
            published = Mutex(loaded)
        } catch let error as CartographError {
            throw error
        } catch {
            throw CartographError(.internalError, "Cannot open the store of model '\(name)': \(error)")
        }
        storedBytes.store(bytes, ordering: .relaxed)
        touchLastUsed()
    }

    /// The committed model, or nil for a store that has none yet.
    public var model: Model? { published.withLock { $0?.model } }

    /// Bytes in use in the store as of its last commit: its pages less the free ones, WAL content
    /// included (R-S2 quotas). Measured at open and inside every write from SQLite's page counts —
    /// header fields, never a scan. A write that ran on an instance already evicted from the registry
    /// (see `write`) updates that instance only, until the store is next opened.
    public var usedBytes: Int64 { storedBytes.load(ordering: .relaxed) }

    /// `(page_count - freelist_count) * page_size`: what the database would occupy after a checkpoint
    /// and a VACUUM. Deleting objects lowers it (their pages go to the free list), unlike the file size.
    static func measureBytes(_ connection: SQLiteConnection) throws(SQLiteError) -> Int64 {
        try connection.rows("""
            SELECT (p.page_count - f.freelist_count) * s.page_size
            FROM pragma_page_count() AS p, pragma_freelist_count() AS f, pragma_page_size() AS s
            """).first?.first?.integerValue ?? 0
    }

    /// After a write outside `write` (registration, mappings): `usedBytes` as the write left them.
    private func remeasure(_ connection: SQLiteConnection) {
        if let bytes = try? Self.measureBytes(connection) { storedBytes.store(bytes, ordering: .relaxed) }
    }

    /// Monotonic seconds of the last use, for idle closing.
    public var lastUsedSeconds: Int64 { lastUsed.load(ordering: .relaxed) }
    private func touchLastUsed() { lastUsed.store(Self.monotonicSeconds(), ordering: .relaxed) }
    static func monotonicSeconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec)
    }

    /// The stored model and its exact stored text.
    private static func loadModel(_ connection: SQLiteConnection, name: String) throws -> (model: Model, text: String)? {
        guard let text = try connection.rows("SELECT value FROM \(quoted(metaTable)) WHERE key = 'model'").first?.first?.textValue else {
            return nil
        }
        return (try ModelDocument.parse(json: try JSONReader().parse(text), name: name), text)
    }

    // MARK: Registration (R-M6)

    /// Registers `proposed` (version ignored): creates the schema, or migrates it in place in one
    /// transaction. Destructive changes are refused with 409 unless `allowDestructive`.
    public func register(_ proposed: Model, allowDestructive: Bool) throws(CartographError) -> (model: Model, outcome: ModelRegistration) {
        touchLastUsed()
        let writer = self.writer
        let result = try writeLock.withLock { () throws(CartographError) -> (model: Model, outcome: ModelRegistration) in
            var model = proposed
            model.name = name
            let old = writer.model
            if let old {
                let migration = ModelMigration(from: old, to: model)
                if migration.isEmpty { return (old, .unchanged) }
                if migration.hasDestructiveChanges && !allowDestructive {
                    throw CartographError(
                        .conflict, "This change would lose or invalidate data; repeat the PUT with ?allowDestructive=true to apply it.",
                        errors: migration.destructiveChanges.map { CartographError.Detail(pointer: $0.pointer, message: $0.message) })
                }
                model.version = old.version + 1
            } else {
                model.version = 1
            }
            try apply(model, replacing: old, writer: writer)
            remeasure(writer.connection)
            return (model, old == nil ? .created : .migrated)
        }
        if result.outcome != .unchanged {
            let text = result.model.normalizedJSON.jsonText
            published.withLock { $0 = (result.model, text) }
        }
        return result
    }

    private func apply(_ model: Model, replacing old: Model?, writer: Writer) throws(CartographError) {
        let connection = writer.connection
        let newLayout = StoreLayout(model: model)
        let oldLayout = old.map(StoreLayout.init)
        do {
            let existingIndexes = Set(try connection.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'ix:%'")
                .compactMap { $0.first?.textValue })
            let plan = SchemaPlan(from: oldLayout, to: newLayout, existingIndexes: existingIndexes)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            _ = try connection.transaction { () throws(SQLiteError) in
                // Objects of entities that leave the model (or change hierarchy) get tombstones first.
                if let oldLayout {
                    let reader = ObjectReader(connection: connection, layout: oldLayout)
                    var seq = try ChangeFeed.head(connection)
                    for entity in plan.removedEntities {
                        let table = oldLayout.table(of: entity)
                        for row in try connection.rows("SELECT _id FROM \(quoted(table)) WHERE _entity = ?", [.text(entity)]) {
                            guard let id = row[0].integerValue, let object = try reader.object(id: id, entity: entity) else { continue }
                            seq += 1
                            try ChangeFeed.recordDeletion(connection, id: id, entity: entity, key: reader.key(of: object), seq: seq, at: now)
                        }
                        if oldLayout.model.entity(named: table) != nil, newLayout.model.entity(named: table)?.parent == nil {
                            try connection.run("DELETE FROM \(quoted(table)) WHERE _entity = ?", [.text(entity)])
                        }
                    }
                }
                for index in plan.droppedIndexes { try connection.execute("DROP INDEX IF EXISTS \(quoted(index))") }
                for statement in plan.statements { try connection.execute(statement) }
                for fill in plan.defaultFills {
                    let marks = Array(repeating: "?", count: fill.entities.count).joined(separator: ", ")
                    try connection.run("UPDATE \(quoted(fill.table)) SET \(quoted(fill.column)) = ? WHERE _entity IN (\(marks))",
                                       [fill.value] + fill.entities.map { .text($0) })
                }
                for index in plan.indexes { try connection.execute(index.sql) }
                try connection.run("INSERT OR REPLACE INTO \(quoted(Self.metaTable)) (key, value) VALUES ('model', ?), ('version', ?)",
                                   [.text(model.normalizedJSON.jsonText), .integer(Int64(model.version))])
            }
        } catch {
            throw CartographError(.internalError, "Cannot apply model '\(model.name)' version \(model.version): \(error)")
        }
        writer.model = model
    }

    // MARK: Writes

    /// The writer's page cache (negative: KiB), and the smaller one a large write spills to the log
    /// from (see `StoreTransaction.largeWriteObjects`).
    static let writerCacheKiB = -32768
    static let largeWriteCacheKiB = -4096

    /// Runs `body` in one write transaction and commits it with its change-feed entries. Returns the
    /// body's result and the last change sequence number. Nothing is stored if `body` throws.
    /// With `dryRun` everything runs, feed entries included, and is then rolled back (R-P11).
    /// `beforeCommit` sees the result and the change sequence inside the transaction (to record them atomically).
    /// `checkBytes`, called last before COMMIT with the store's `usedBytes` before the write and as
    /// the write leaves them, may throw to roll the write back (a quota, R-S2).
    public func write<T: Sendable>(dryRun: Bool = false, _ body: (StoreTransaction) throws(CartographError) -> T,
                                   beforeCommit: ((StoreTransaction, T, Int64) throws(CartographError) -> Void)? = nil,
                                   checkBytes: ((_ before: Int64, _ after: Int64) throws(CartographError) -> Void)? = nil)
        throws(CartographError) -> (value: T, changeSeq: Int64) {
        touchLastUsed()
        let writer = self.writer
        return try writeLock.withLock { () throws(CartographError) -> (value: T, changeSeq: Int64) in
            let connection = writer.connection
            let outcome: (T, Int64)
            var bytesAfter: Int64?
            // A large write ran with a small page cache (`StoreTransaction.largeWriteObjects`): give its
            // pages back once it is over, committed or not, and let later writes have the whole cache.
            var touchedObjects = 0
            defer {
                if touchedObjects >= StoreTransaction.largeWriteObjects {
                    try? connection.execute("PRAGMA shrink_memory; PRAGMA cache_size = \(Self.writerCacheKiB)")
                }
            }
            do throws(TransactionError<CartographError>) {
                outcome = try connection.transaction(rollingBack: dryRun) { () throws(CartographError) -> (T, Int64) in
                    // Under BEGIN IMMEDIATE the file is ours: re-read what another instance of this store
                    // (one evicted from the registry while still in use) may have changed.
                    let nextID: Int64
                    do {
                        nextID = try connection.rows("SELECT value FROM \(quoted(Self.metaTable)) WHERE key = 'next_id'").first?.first?.integerValue ?? 1
                    } catch { throw CartographError(.internalError, "Cannot read the id counter: \(error)") }
                    guard let model = writer.model else { throw CartographError(.notFound, "Model '\(name)' has no schema yet.") }
                    let transaction = StoreTransaction(connection: connection, layout: writer.layout(for: model), nextID: nextID)
                    defer { touchedObjects = transaction.touched.count }
                    let value = try body(transaction)
                    let seq = try ChangeFeed.record(transaction)
                    try beforeCommit?(transaction, value, seq)
                    do {
                        try connection.run("INSERT OR REPLACE INTO \(quoted(Self.metaTable)) (key, value) VALUES ('next_id', ?)",
                                           [.integer(transaction.nextID)])
                    } catch { throw CartographError(.internalError, "Cannot record the id counter: \(error)") }
                    do { bytesAfter = try Self.measureBytes(connection) } catch {
                        throw CartographError(.internalError, "Cannot measure the store: \(error)")
                    }
                    try checkBytes?(storedBytes.load(ordering: .relaxed), bytesAfter ?? 0)
                    return (value, seq)
                }
            } catch {
                switch error {
                case .body(let error): throw error
                case .sqlite(let error): throw CartographError(.internalError, "The write could not be committed: \(error)")
                }
            }
            if !dryRun, let bytesAfter { storedBytes.store(bytesAfter, ordering: .relaxed) }
            if !dryRun, checkpointsInBackground { checkpointIfDue(writer: connection) }
            return outcome
        }
    }

    /// Keeps the WAL short without making the request whose commit crosses the threshold pay for it:
    /// copying the log's pages into the database file and syncing it (a fifth of a large store's
    /// write time) runs on a pooled connection on another thread, while the writer goes on. Only a log
    /// that has outgrown that (long readers keep a PASSIVE checkpoint from finishing) is checkpointed
    /// by the commit itself. Called under the write lock, right after a commit.
    private func checkpointIfDue(writer: SQLiteConnection) {
        let frames = writer.walFrames
        if frames >= Self.writerCheckpointFrames {
            _ = try? writer.checkpoint()  // a failed checkpoint leaves the log for the next one
            return
        }
        guard frames >= Self.checkpointFrames,
              checkpointing.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        DispatchQueue.global(qos: .utility).async { [self] in
            defer { checkpointing.store(false, ordering: .releasing) }
            guard let pooled = try? pooledConnection() else { return }
            defer { release(pooled) }
            guard (try? pooled.connection.checkpoint()) == true else { return }
            // The whole log is in the database file. If no write is running, cut the log's file to zero
            // (nothing left to copy, so this is quick): a load that has ended leaves no WAL of its own
            // size beside the database. A write in progress will restart the log itself.
            writeLock.withLockIfAvailable { try? self.writer.connection.truncateLog() }
        }
    }

    // MARK: Reads

    /// Runs `body` on a pooled read connection inside a read transaction.
    public func read<T>(_ body: (StoreReader) throws(CartographError) -> T) throws(CartographError) -> T {
        touchLastUsed()
        let pooled = try pooledConnection()
        let connection = pooled.connection
        defer { release(pooled) }
        do { try connection.control("BEGIN") } catch { throw CartographError(.internalError, "Cannot start a read: \(error)") }
        defer { try? connection.control("COMMIT") }
        // The model this snapshot was written with (a migration may have committed since `published`).
        let current = published.withLock { $0 }
        var model = current?.model
        do {
            // The version is a small integer: comparing it costs nothing; the model text is read only on a change.
            let version = try connection.rows("SELECT value FROM \(quoted(Self.metaTable)) WHERE key = 'version'").first?.first?.integerValue
            if version != model.map({ Int64($0.version) }),
               let text = try connection.rows("SELECT value FROM \(quoted(Self.metaTable)) WHERE key = 'model'").first?.first?.textValue,
               text != current?.text {
                model = try ModelDocument.parse(json: try JSONReader().parse(text), name: name)
            }
        } catch {
            throw CartographError(.internalError, "Cannot read the model of '\(name)': \(error)")
        }
        guard let model else { throw CartographError(.notFound, "Model '\(name)' has no schema yet.") }
        return try body(StoreReader(reader: ObjectReader(connection: connection, layout: pooled.layout(for: model))))
    }

    /// An idle read connection, or a new one.
    private func pooledConnection() throws(CartographError) -> PooledConnection {
        if let idle = readers.withLock({ $0.idle.popLast() }) { return idle }
        do {
            let connection = try SQLiteConnection(path: path, synchronous: synchronous)
            try connection.registerPredicateFunctions()
            try connection.registerCollations()
            return PooledConnection(connection)
        } catch { throw CartographError(.internalError, "Cannot open a read connection: \(error)") }
    }

    /// Returns a connection to the pool (up to 8 are kept).
    private func release(_ pooled: PooledConnection) {
        readers.withLock { if $0.idle.count < 8 { $0.idle.append(pooled) } }
    }

    // MARK: Mapping documents
    // Mappings live in their model's file: deleting the model deletes them, and a migration and the
    // mappings it may invalidate are never out of step on disk. Validation is the caller's (it needs the
    // mapping language); the store keeps the normalized document.

    /// Stores (or replaces) a mapping document; true when it was created.
    public func putMapping(name: String, document: JSONValue) throws(CartographError) -> Bool {
        touchLastUsed()
        let writer = self.writer
        return try writeLock.withLock { () throws(CartographError) -> Bool in
            do {
                let existed = try !writer.connection.rows("SELECT 1 FROM \(quoted(Self.mappingsTable)) WHERE name = ?", [.text(name)]).isEmpty
                try writer.connection.run("INSERT OR REPLACE INTO \(quoted(Self.mappingsTable)) (name, document) VALUES (?, ?)",
                                          [.text(name), .text(document.jsonText)])
                remeasure(writer.connection)
                return !existed
            } catch { throw CartographError(.internalError, "Cannot store mapping '\(name)': \(error)") }
        }
    }

    /// Deletes a mapping; false when there was none.
    public func deleteMapping(name: String) throws(CartographError) -> Bool {
        let writer = self.writer
        return try writeLock.withLock { () throws(CartographError) -> Bool in
            do {
                try writer.connection.run("DELETE FROM \(quoted(Self.mappingsTable)) WHERE name = ?", [.text(name)])
                let deleted = writer.connection.changes > 0
                remeasure(writer.connection)
                return deleted
            } catch { throw CartographError(.internalError, "Cannot delete mapping '\(name)': \(error)") }
        }
    }

    /// The stored mapping documents by name (all, or the one named).
    public func mappings(named name: String? = nil) throws(CartographError) -> [(name: String, document: JSONValue)] {
        try read { (reader) throws(CartographError) -> [(name: String, document: JSONValue)] in
            let sql = "SELECT name, document FROM \(quoted(Self.mappingsTable))" + (name == nil ? "" : " WHERE name = ?") + " ORDER BY name"
            do {
                return try reader.reader.connection.rows(sql, name.map { [.text($0)] } ?? []).map { row in
                    (row[0].textValue ?? "", (try? JSONReader().parse(row[1].textValue ?? "null")) ?? .null)
                }
            } catch { throw CartographError(.internalError, "Cannot read mappings: \(error)") }
        }
    }

}
