// The change feed (R-D4, docs/change-feed.md), compacted as CouchDB's `_changes` is: one row per
// object that ever changed, at the sequence number of its latest change, and read when the feed is read.
// A write costs one small row per touched object (no copy of the object), and the feed holds at most
// one row per object plus one tombstone per deleted object, whatever the number of updates.
//
// What a reader is promised: a page lists entries with `seq > since` in order; an entry shows the
// object as it stands when read, which is its state at that seq (any later change would have moved it
// to a later seq). A follower paging from 0 while writers commit reaches every object's final state,
// because a change after the follower's position moves the object past that position.
public import CartographCore
import CartographMapping

/// One page of the feed (the store's `epoch` goes with it: `ModelStore.epoch`).
public struct ChangeFeedPage: Sendable {
    public var entries: [ChangeFeedEntry]
    /// The `since` to resume from: the last entry's seq, or the request's `since` when the page is empty.
    public var next: Int64
}

/// One object's latest change.
public struct ChangeFeedEntry: Sendable {
    public let seq: Int64
    /// The object's concrete entity.
    public let entity: String
    /// The object's key (docs/api.md#object-keys).
    public let key: JSONValue
    public let change: Change

    public enum Change: Sendable {
        /// The object as it stands, with its stored relationships (not those stored by the other side).
        case upsert(ObjectValues)
        /// Deleted at this time (milliseconds since 1970).
        case delete(atMilliseconds: Int64)
    }
}

enum ChangeFeed {
    static let table = "_cartograph_feed"
    /// The feed of stores written before compaction: one row (with the object's JSON) per change.
    static let legacyTable = "_cartograph_changes"

    /// `object_id` is the rowid: writing an object's entry replaces the one it had. Upserts carry no key
    /// (the object is read for it); a tombstone keeps the key and time of the deletion.
    static let schema = """
        CREATE TABLE IF NOT EXISTS \(quoted(table)) (
            object_id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, entity TEXT NOT NULL, key TEXT, deleted_at INTEGER);
        CREATE UNIQUE INDEX IF NOT EXISTS "_cartograph_feed_by_seq" ON \(quoted(table)) (seq);
        """

    /// Creates the feed, moves a legacy feed into it (keeping each object's latest entry, so the head and
    /// every follower's position stay valid) and gives the store its epoch, which it returns. One
    /// transaction: a store whose migration was interrupted still holds its legacy feed and migrates
    /// when next opened.
    static func prepare(_ connection: SQLiteConnection) throws(SQLiteError) -> String {
        let hasLegacy = try !connection.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(legacyTable)]).isEmpty
        let hasFeed = try !connection.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(table)]).isEmpty
        if !hasLegacy, hasFeed, let epoch = try storedEpoch(connection) { return epoch }
        try migrate(connection, fromLegacy: hasLegacy)
        return try storedEpoch(connection) ?? ""
    }

    private static func storedEpoch(_ connection: SQLiteConnection) throws(SQLiteError) -> String? {
        try connection.rows("SELECT value FROM \(quoted(ModelStore.metaTable)) WHERE key = 'epoch'").first?.first?.textValue
    }

    private static func migrate(_ connection: SQLiteConnection, fromLegacy hasLegacy: Bool) throws(SQLiteError) {
        do {
            try connection.transaction { () throws(SQLiteError) in
                try connection.execute(schema)
                if hasLegacy {
                    // SQLite takes the bare columns of an aggregate query with max() from the row holding the max.
                    try connection.execute("""
                        INSERT OR REPLACE INTO \(quoted(table)) (object_id, seq, entity, key, deleted_at)
                        SELECT object_id, max(seq), entity, CASE op WHEN 'delete' THEN key END, CASE op WHEN 'delete' THEN at END
                        FROM \(quoted(legacyTable)) GROUP BY object_id;
                        DROP TABLE \(quoted(legacyTable));
                        """)
                }
                try connection.run("INSERT OR IGNORE INTO \(quoted(ModelStore.metaTable)) (key, value) VALUES ('epoch', ?)", [.text(newEpoch())])
            }
        } catch {
            switch error {
            case .body(let error), .sqlite(let error): throw error
            }
        }
    }

    /// 128 random bits as hex.
    private static func newEpoch() -> String { RandomToken.hex(bytes: 16) }

    /// Gives the store a new epoch, inside the caller's transaction, and returns it (R-D7: the store is a
    /// restored older copy, see `StoreInstance`).
    static func renewEpoch(_ connection: SQLiteConnection) throws(SQLiteError) -> String {
        let epoch = newEpoch()
        try connection.run("INSERT OR REPLACE INTO \(quoted(ModelStore.metaTable)) (key, value) VALUES ('epoch', ?)", [.text(epoch)])
        return epoch
    }

    /// The last sequence number given (0 for a store that has none).
    static func head(_ connection: SQLiteConnection) throws(SQLiteError) -> Int64 {
        try connection.cached("SELECT coalesce(max(seq), 0) FROM \(quoted(table))").rows().first?.first?.integerValue ?? 0
    }

    /// Which of `ids` have an entry after `seq` (changed or deleted since). At most `head - seq` entries
    /// lie after `seq` (sequence numbers are dense): when that is fewer than `ids`, those entries are read
    /// by the seq index and matched here; otherwise each id is looked up by rowid.
    static func changed(among ids: [Int64], since seq: Int64, head: Int64, _ connection: SQLiteConnection) throws(SQLiteError) -> Set<Int64> {
        guard !ids.isEmpty, head > seq else { return [] }
        if head - seq < Int64(ids.count) {
            let wanted = Set(ids)
            let statement = try connection.cached("SELECT object_id FROM \(quoted(table)) WHERE seq > ?")
            return Set(try statement.rows([.integer(seq)]).compactMap { $0.first?.integerValue }.filter(wanted.contains))
        }
        let statement = try connection.cached("SELECT seq FROM \(quoted(table)) WHERE object_id = ?")
        var changed = Set<Int64>()
        for id in ids {
            if let entry = try statement.rows([.integer(id)]).first?.first?.integerValue, entry > seq { changed.insert(id) }
        }
        return changed
    }

    private static let upsertSQL = "INSERT OR REPLACE INTO \(quoted(table)) (object_id, seq, entity, key, deleted_at) VALUES (?, ?, ?, NULL, NULL)"
    /// The entries of a run of consecutive ids of one entity (a payload's inserts are one run), each the
    /// next sequence number, in one statement: a tiny object's entry took 13% of its first load's server
    /// CPU when bound and stepped one by one (issue 29). Bound with the run's length, first id, first seq
    /// and entity. A run of one (an updated object) takes `upsertSQL`, which has no recursion to set up.
    private static let upsertRunSQL = """
        WITH RECURSIVE run(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM run WHERE i + 1 < ?1)
        INSERT OR REPLACE INTO \(quoted(table)) (object_id, seq, entity, key, deleted_at) SELECT ?2 + i, ?3 + i, ?4, NULL, NULL FROM run
        """
    private static let tombstoneSQL = "INSERT OR REPLACE INTO \(quoted(table)) (object_id, seq, entity, key, deleted_at) VALUES (?, ?, ?, ?, ?)"

    /// Gives every object the transaction changed its next sequence number, in first-touch order, then
    /// the deleted objects that existed before it their tombstones, stamped with the transaction's time.
    /// Returns the head after the write.
    static func record(_ transaction: StoreTransaction) throws(CartographError) -> Int64 {
        let connection = transaction.connection
        let deletedAt = transaction.startedAt.millisecondsSince1970
        do {
            var seq = try head(connection)
            transaction.feedHeadBefore = seq
            let deleted = transaction.deletedIDs
            let upsert = try connection.cached(upsertSQL), upsertRun = try connection.cached(upsertRunSQL)
            /// The entries of `count` objects from `first` on, each the next sequence number.
            func write(first: Int64, count: Int64, entity: String) throws(SQLiteError) {
                if count == 1 {
                    try upsert.run([.integer(first), .integer(seq + 1), .text(entity)])
                } else if count > 1 {
                    try upsertRun.run([.integer(count), .integer(first), .integer(seq + 1), .text(entity)])
                }
                seq += count
            }
            for run in transaction.touched.idRuns {
                // An object inserted and deleted here has no entry: the run is written around it.
                var first = run.first
                let end = run.first + Int64(run.count)
                if !deleted.isEmpty {
                    for id in first..<end where deleted.contains(id) {
                        try write(first: first, count: id - first, entity: run.entity)
                        first = id + 1
                    }
                }
                try write(first: first, count: end - first, entity: run.entity)
            }
            for (id, entity, key) in transaction.deleted where id < transaction.firstNewID {
                seq += 1
                try recordDeletion(connection, id: id, entity: entity, key: key, seq: seq, at: deletedAt)
            }
            return seq
        } catch {
            throw CartographError.store(error, "Cannot write the change feed")
        }
    }

    static func recordDeletion(_ connection: SQLiteConnection, id: Int64, entity: String, key: JSONValue, seq: Int64, at: Int64) throws(SQLiteError) {
        let statement = try connection.cached(tombstoneSQL)
        try statement.bind([.integer(id), .integer(seq), .text(entity), .text(key.jsonText), .integer(at)])
        try statement.runBound()
    }

    /// Up to `limit` entries after `since`. A `since` beyond the head is a 400 naming the head.
    static func page(_ reader: ObjectReader, since: Int64, limit: Int) throws(CartographError) -> ChangeFeedPage {
        let connection = reader.connection
        do {
            let head = try head(connection)
            guard since <= head else {
                throw CartographError(.badRequest, "since \(since) is beyond the head of the change feed (\(head)).",
                                      errors: [.init(pointer: "/since", message: "must be at most \(head)")])
            }
            let rows = try connection.rows(
                "SELECT seq, object_id, entity, key, deleted_at FROM \(quoted(table)) WHERE seq > ? ORDER BY seq LIMIT ?",
                [.integer(since), .integer(Int64(limit))])
            var keys: [Int64: JSONValue] = [:]
            var entries: [ChangeFeedEntry] = []
            entries.reserveCapacity(rows.count)
            let jsonReader = JSONReader()
            for row in rows {
                let seq = row[0].integerValue ?? 0, id = row[1].integerValue ?? 0, entity = row[2].textValue ?? ""
                if let deletedAt = row[4].integerValue {
                    entries.append(ChangeFeedEntry(seq: seq, entity: entity, key: (try? jsonReader.parse(row[3].textValue ?? "null")) ?? .null,
                                                   change: .delete(atMilliseconds: deletedAt)))
                } else {
                    // Every upsert row's object exists in the same snapshot: a deletion replaces the row.
                    guard let object = try reader.object(id: id, entity: entity) else { continue }
                    entries.append(ChangeFeedEntry(seq: seq, entity: object.entity, key: reader.key(of: object),
                                                   change: .upsert(try reader.values(of: object, storedRelationshipsOnly: true, keys: &keys))))
                }
            }
            return ChangeFeedPage(entries: entries, next: rows.last?[0].integerValue ?? since)
        } catch let error as CartographError {
            throw error
        } catch {
            throw CartographError.store(error, "Cannot read the change feed")
        }
    }
}
