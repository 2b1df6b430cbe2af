// One model's SQLite store (`<data-dir>/tenants/<tenant>/<model>.sqlite`): its schema, objects and
// change feed. Writes are serialized on one connection (R-S3: no SQLITE_BUSY reaches a client);
// reads run on a small pool of WAL connections, each inside a read transaction so a page, its count
// and its includes see one snapshot.
import Foundation
import Synchronization
public import CartographCore

/// What registering a model did (R-M6).
public enum ModelRegistration: Sendable, Equatable {
    case created, migrated, unchanged
}

/// A model's store. Thread-safe.
public final class ModelStore: Sendable {
    public let name: String
    public let path: String
    /// A random id given when the store file was created, and again when it opens as a restored older copy
    /// (R-D7, `StoreInstance`): change-feed pages carry it.
    public let epoch: String
    /// The epoch this open replaced because the file is a restored older copy; nil when it kept its epoch.
    public let replacedEpoch: String?
    let synchronous: SQLiteSynchronous
    /// The time of day of its writes, registrations and snapshot sessions.
    let clock: WallClock

    /// The writer connection and the model it last applied. @unchecked Sendable: it is reached only
    /// inside `writeLock.withLock`, so one thread at a time uses it (GRDB's serialized database).
    final class Writer: @unchecked Sendable {
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
    final class PooledConnection: @unchecked Sendable {
        let connection: SQLiteConnection
        /// The layout last used on this connection, reused while the model version is the same.
        private var cachedLayout: StoreLayout?
        /// The store's `PRAGMA data_version` at this connection's last read, and the model that read found:
        /// while the version stays, nothing has been committed since and the model stands.
        var seen: (dataVersion: Int64, model: Model)?
        /// Destination keys read since `seen`'s data version.
        let keys = KeyCache()
        init(_ connection: SQLiteConnection) { self.connection = connection }

        func layout(for model: Model) -> StoreLayout {
            if let cachedLayout, cachedLayout.model.version == model.version { return cachedLayout }
            let layout = StoreLayout(model: model)
            cachedLayout = layout
            return layout
        }
    }

    struct ReaderPool: ~Copyable {
        var idle: [PooledConnection] = []
    }

    let writer: Writer
    let writeLock = WriteLock()
    let readers = Mutex(ReaderPool())
    /// Idle read connections kept (`init`'s `idleReaders`).
    let idleReaderLimit: Int
    /// The committed model, for readers (updated after each registration commits).
    /// The committed model and its stored JSON text (readers compare texts to notice a migration).
    let published: Mutex<(model: Model, text: String)?>
    /// Whether `published` holds a model (it never goes back to nil): asked without its lock.
    let modelPublished = Atomic<Bool>(false)
    private let lastUsed = Atomic<Int64>(0)
    /// Stored mapping documents parsed, by their text (`mappings(named:)`).
    let parsedMappingDocuments = Mutex<[String: JSONValue]>([:])
    /// Mappings parsed for ingestion with their engines (`preparedMapping`).
    let preparedMappings = Mutex<[PreparedMapping]>([])
    /// Whether each mapping's last payload was mostly new objects (how the next one is read).
    let readAheadHistory = ReadAheadHistory()
    /// What recent commits wrote to identification attributes (R-P7's re-check, `IdentityWriteLog`).
    let identityLog = IdentityWriteLog()
    /// Bytes the store's pages hold, as of its last commit (see `measureBytes`).
    let storedBytes = Atomic<Int64>(0)
    /// Whether large commits leave their checkpoint to another thread (see `checkpointIfDue`).
    let checkpointsInBackground: Bool
    /// A checkpoint is running on another thread.
    let checkpointing = Atomic<Bool>(false)
    /// WAL frames (pages) past which a commit has the log checkpointed on another thread, and past
    /// which — that checkpointer having fallen behind — the commit checkpoints it itself. A page written
    /// by several commits between two checkpoints is copied once: 4,000 frames (16 MiB) instead of 1,000
    /// wrote 11-22% fewer bytes and took 7-8% less server CPU in a re-load whose changed objects change
    /// relationships (docs/storage.md, "Decisions measured").
    static let checkpointFrames = 4_000, writerCheckpointFrames = 10_000
    /// Commits since the store opened: a checkpoint scheduled for when writes pause runs only if no
    /// commit followed the one that scheduled it.
    let commits = Atomic<Int>(0)
    /// How long after its last commit a store that stopped writing has its log checkpointed and cut,
    /// whatever its length: a load that has ended leaves no WAL beside the database.
    static let idleCheckpointDelay = DispatchTimeInterval.milliseconds(500)

    static let metaTable = "_cartograph_meta", mappingsTable = "_cartograph_mappings", idempotencyTable = "_cartograph_idempotency"

    /// Opens or creates the store file at `path`. `checkpointsInBackground` is for the server, whose
    /// writer goes on to the next request meanwhile; a one-shot writer (`cartograph map`) keeps SQLite's
    /// own checkpoints, so that nothing is left running when it closes the store and exits.
    /// - Parameters:
    ///   - idleReaders: read connections kept open between reads: one per thread that may read at once, or
    ///     reads past it open (and register functions on) a connection each time.
    ///   - detectsRestoredCopies: the store is a data directory's, whose restores from an older copy give it a
    ///     new epoch (`StoreInstance`, with a sidecar file beside it); a file of `cartograph map` is not.
    ///   - clock: the time of day its writes, registrations and snapshot sessions read.
    public init(name: String, path: String, synchronous: SQLiteSynchronous = .normal, checkpointsInBackground: Bool = false,
                idleReaders: Int = 8, detectsRestoredCopies: Bool = false, clock: WallClock = .system) throws(CartographError) {
        self.clock = clock
        self.idleReaderLimit = idleReaders
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
            // When the log restarts after a checkpoint, its file is cut back to 64 MiB, more than the
            // 10,000 pages a commit checkpoints at: during a load the log is rewritten in place, where a
            // shorter file made every commit past its end allocate and zero new blocks (shape c's first
            // load: 18% of the server's CPU in COMMIT, a third of it the kernel's memset).
            // It is cut to nothing once writes pause (`cutLogWhenWritesPause`).
            try connection.execute("PRAGMA journal_size_limit = 67108864")
            if checkpointsInBackground { connection.recordWALFramesInsteadOfCheckpointing() }
            // Nothing is written to a file before it is known to be a sound store (R-S12).
            try StoreFileCheck.verify(connection)
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS \(quoted(Self.metaTable)) (key TEXT PRIMARY KEY NOT NULL, value);
                CREATE TABLE IF NOT EXISTS \(quoted(Self.mappingsTable)) (name TEXT PRIMARY KEY NOT NULL, document TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS \(quoted(Self.idempotencyTable)) (
                    key TEXT PRIMARY KEY NOT NULL, request_sha256 BLOB NOT NULL, response TEXT NOT NULL, at INTEGER NOT NULL);
                """ + StoreTransaction.pendingConnectionsSchema + SnapshotSessionTables.schema + CursorTable.schema + DriftTable.schema
                + ArchiveTables.schema)
            let preparedEpoch = try ChangeFeed.prepare(connection)
            let renewedEpoch = detectsRestoredCopies ? try StoreInstance(storePath: path).open(connection) : nil
            epoch = renewedEpoch ?? preparedEpoch
            replacedEpoch = renewedEpoch == nil ? nil : preparedEpoch
            let loaded = try Self.loadModel(connection, name: name)
            if let model = loaded?.model { try SchemaPlan.reconcileIndexes(of: StoreLayout(model: model), connection) }
            bytes = try Self.measureBytes(connection)
            writer = Writer(connection: connection, model: loaded?.model)
            published = Mutex(loaded)
        } catch let error as CartographError {
            throw error
        } catch {
            throw CartographError.store(error, "Cannot open the store of model '\(name)'")
        }
        storedBytes.store(bytes, ordering: .relaxed)
        modelPublished.store(published.withLock { $0 != nil }, ordering: .releasing)
        touchLastUsed()
    }

    /// The committed model, or nil for a store that has none yet.
    public var model: Model? { published.withLock { $0?.model } }

    /// Whether the store has a committed model: `model != nil` without taking the lock or copying the model
    /// (every read request asks; the lock was contended with four request threads).
    public var hasModel: Bool { modelPublished.load(ordering: .acquiring) }

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
    func remeasure(_ connection: SQLiteConnection) {
        if let bytes = try? Self.measureBytes(connection) { storedBytes.store(bytes, ordering: .relaxed) }
    }

    /// Monotonic seconds of the last use, for idle closing.
    public var lastUsedSeconds: Int64 { lastUsed.load(ordering: .relaxed) }
    func touchLastUsed() { lastUsed.store(Self.monotonicSeconds(), ordering: .relaxed) }
    static func monotonicSeconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec)
    }

    /// The stored model and its exact stored text. A stored model that no longer parses was damaged in
    /// the file (it was valid when stored), not sent wrong by the request that opened the store.
    static func loadModel(_ connection: SQLiteConnection, name: String) throws -> (model: Model, text: String)? {
        guard let text = try connection.rows("SELECT value FROM \(quoted(metaTable)) WHERE key = 'model'").first?.first?.textValue else {
            return nil
        }
        do {
            return (try ModelDocument.parse(json: try JSONReader().parse(text), name: name), text)
        } catch {
            throw StoreFileDamage.inconsistent("its model does not read as the model it stored (\(error))")
        }
    }
}
