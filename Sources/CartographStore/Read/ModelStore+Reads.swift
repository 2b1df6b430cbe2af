// Reads from a store: a pool of WAL connections, each read inside one read transaction (one snapshot).
import Synchronization
public import CartographCore

extension ModelStore {
    /// Each reader's page cache (negative: KiB), grown only as used: enough to keep a table's scan
    /// projection (3.7 MB for 100k articles) in memory between lists, where SQLite's 2 MiB made every list
    /// read it again from the OS (+8% req/s on the headline list). All caches together stay within the
    /// process's SQLite memory budget (`SQLiteConnection.limitMemory`).
    static let readerCacheKiB = -16384

    /// Asked at the start of every read (its text built once).
    private static let selectDataVersion = "PRAGMA data_version"
    /// Asked at the start of a read when something was committed since the connection's last read.
    private static let selectVersion = "SELECT value FROM \(quoted(metaTable)) WHERE key = 'version'"

    /// Runs `body` on a pooled read connection inside a read transaction.
    public func read<T>(_ body: (StoreReader) throws(CartographError) -> T) throws(CartographError) -> T {
        touchLastUsed()
        let pooled = try pooledConnection()
        let connection = pooled.connection
        defer { release(pooled) }
        do { try connection.control("BEGIN") } catch { throw CartographError.store(error, "Cannot start a read") }
        defer { try? connection.control("COMMIT") }
        // Another connection's commit moves the data version (this one only reads): while it stays, the
        // snapshot holds what this connection's last read saw, its model and its keys.
        let dataVersion: Int64
        do { dataVersion = try connection.rows(Self.selectDataVersion).first?.first?.integerValue ?? 0 } catch {
            throw CartographError.store(error, "Cannot read the model of '\(name)'")
        }
        let model: Model?
        if let seen = pooled.seen, seen.dataVersion == dataVersion {
            model = seen.model
        } else {
            pooled.keys.removeAll()
            model = try snapshotModel(connection)
            pooled.seen = model.map { (dataVersion, $0) }
        }
        guard let model else { throw CartographError(.notFound, "Model '\(name)' has no schema yet.") }
        return try body(StoreReader(reader: ObjectReader(connection: connection, layout: pooled.layout(for: model), keyCache: pooled.keys)))
    }

    /// The model the snapshot `connection` reads was written with (a migration may have committed since
    /// `published`).
    private func snapshotModel(_ connection: SQLiteConnection) throws(CartographError) -> Model? {
        let current = published.withLock { $0 }
        do {
            // The version is a small integer: comparing it costs nothing; the model text is read only on a change.
            let version = try connection.rows(Self.selectVersion).first?.first?.integerValue
            guard version != current.map({ Int64($0.model.version) }),
                  let text = try connection.rows("SELECT value FROM \(quoted(Self.metaTable)) WHERE key = 'model'").first?.first?.textValue,
                  text != current?.text else { return current?.model }
            return try ModelDocument.parse(json: try JSONReader().parse(text), name: name)
        } catch {
            throw CartographError.store(error, "Cannot read the model of '\(name)'")
        }
    }

    /// An idle read connection, or a new one.
    func pooledConnection() throws(CartographError) -> PooledConnection {
        if let idle = readers.withLock({ $0.idle.popLast() }) { return idle }
        do {
            let connection = try SQLiteConnection(path: path, synchronous: synchronous)
            try connection.registerPredicateFunctions()
            try connection.registerCollations()
            try connection.execute("PRAGMA cache_size = \(Self.readerCacheKiB)")
            return PooledConnection(connection)
        } catch { throw CartographError.store(error, "Cannot open a read connection") }
    }

    /// Returns a connection to the pool (up to `idleReaderLimit` are kept).
    func release(_ pooled: PooledConnection) {
        readers.withLock { if $0.idle.count < idleReaderLimit { $0.idle.append(pooled) } }
    }
}
