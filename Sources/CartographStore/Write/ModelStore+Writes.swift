// Writes to a store: one serialized write transaction at a time, its change-feed entries, and the
// checkpoints that keep the write-ahead log short.
import Foundation
import Synchronization
public import CartographCore

extension ModelStore {

    /// The writer's page cache (negative: KiB), and the smaller one a large write spills to the log
    /// from (see `StoreTransaction.largeWriteObjects`).
    static let writerCacheKiB = -32768
    static let largeWriteCacheKiB = -2048

    /// Runs `body` in one write transaction and commits it with its change-feed entries. Returns the
    /// body's result and the last change sequence number. Nothing is stored if `body` throws.
    /// With `dryRun` everything runs, feed entries included, and is then rolled back (R-P11).
    /// `beforeCommit` sees the result and the change sequence inside the transaction (to record them atomically).
    /// `checkBytes`, called last before COMMIT with the store's `usedBytes` before the write and as
    /// the write leaves them, may throw to roll the write back (a quota, R-S2).
    public func write<T: Sendable>(dryRun: Bool = false, _ body: (StoreTransaction) throws(CartographError) -> T,
                                   beforeCommit: (StoreTransaction, T, Int64) throws(CartographError) -> Void = { _, _, _ in },
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
            /// What the committed transaction wrote, for `identityLog`.
            var written: (before: Int64?, modelVersion: Int, digests: [Int]?)?
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
                    } catch { throw CartographError.store(error, "Cannot read the id counter") }
                    guard let model = writer.model else { throw CartographError(.notFound, "Model '\(name)' has no schema yet.") }
                    let transaction = StoreTransaction(connection: connection, layout: writer.layout(for: model), startedAt: clock.now(),
                                                       nextID: nextID, identityLog: identityLog)
                    defer {
                        touchedObjects = transaction.touched.count
                        written = (transaction.feedHeadBefore, model.version, transaction.identityDigests)
                    }
                    let value = try body(transaction)
                    let seq = try ChangeFeed.record(transaction)
                    try beforeCommit(transaction, value, seq)
                    // A write that inserted nothing leaves the counter as it was: a payload that changes
                    // nothing (posted again) writes no page at all.
                    if transaction.nextID != nextID {
                        do {
                            try connection.run("INSERT OR REPLACE INTO \(quoted(Self.metaTable)) (key, value) VALUES ('next_id', ?)",
                                               [.integer(transaction.nextID)])
                        } catch { throw CartographError.store(error, "Cannot record the id counter") }
                    }
                    do { bytesAfter = try Self.measureBytes(connection) } catch {
                        throw CartographError.store(error, "Cannot measure the store")
                    }
                    try checkBytes?(storedBytes.load(ordering: .relaxed), bytesAfter ?? 0)
                    return (value, seq)
                }
            } catch {
                switch error {
                case .body(let error): throw error
                case .sqlite(let error): throw CartographError.store(error, "The write could not be committed")
                }
            }
            if !dryRun, let before = written?.before, let written {
                identityLog.record(before: before, after: outcome.1, modelVersion: written.modelVersion, digests: written.digests)
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
    /// by the commit itself. Whatever its length, the log is cut once writes pause. Called under the
    /// write lock, right after a commit.
    func checkpointIfDue(writer: SQLiteConnection) {
        let frames = writer.walFrames
        guard frames > 0 else { return }
        if frames >= Self.writerCheckpointFrames {
            _ = try? writer.checkpoint()  // a failed checkpoint leaves the log for the next one
        } else if frames >= Self.checkpointFrames {
            checkpointInBackground()
        }
        cutLogWhenWritesPause()
    }

    /// The log's file is left as it is (see `journal_size_limit` in `ModelStore.init`): the next commit
    /// writes it again from its start.
    private func checkpointInBackground() {
        guard checkpointing.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        DispatchQueue.global(qos: .utility).async { [self] in
            defer { checkpointing.store(false, ordering: .releasing) }
            guard let pooled = try? pooledConnection() else { return }
            defer { release(pooled) }
            _ = try? pooled.connection.checkpoint()
        }
    }

    /// Cuts the log `idleCheckpointDelay` after this commit if no commit followed it: a load that has
    /// ended leaves no WAL beside the database. Weak: a store the registry has closed (or whose model
    /// was deleted) is left alone.
    private func cutLogWhenWritesPause() {
        let commit = commits.add(1, ordering: .relaxed).newValue
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + Self.idleCheckpointDelay) { [weak self] in
            guard let self, commits.load(ordering: .relaxed) == commit else { return }
            truncateLogIfNoWriteRuns()
        }
    }

    /// A TRUNCATE checkpoint on the writer's connection, unless a write is running (it restarts the log
    /// itself) or a reader still uses the log (it never waits for one: see `truncateLog`).
    private func truncateLogIfNoWriteRuns() {
        writeLock.withLockIfAvailable { try? writer.connection.truncateLog() }
    }
}
