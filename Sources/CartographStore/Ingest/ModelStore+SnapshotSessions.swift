// Snapshot sessions (R-D5 across pages, docs/mapping.md "Snapshot sessions"): a listing too large for
// one payload is sent as pages under a client token. Each page is mapped and committed as it comes,
// and the `_id`s it mentioned are recorded in the same transaction; completing the session deletes,
// in one transaction, what the mapping's `deleteMissing` scope holds and no page mentioned. Sessions
// live in the model's own file beside the objects they name; unused for `SnapshotSession.lifetime`
// they expire, deleting nothing.
public import Foundation
public import CartographCore
public import CartographMapping

/// A snapshot session of a mapping, named by the client's token.
public struct SnapshotSession: Sendable, Equatable {
    public let mapping: String
    public let token: String

    /// Sessions unused this long (no page, no completion) expire without deleting anything.
    public static let lifetime: TimeInterval = 24 * 60 * 60
    /// 1 to 128 of RFC 3986's unreserved characters: a token is safe in a query and a path unescaped.
    static let maximumTokenLength = 128

    /// A 400 for a token that is not 1 to 128 of `A-Z a-z 0-9 . _ ~ -`; `pointer` names where it was given.
    public init(mapping: String, token: String, pointer: String) throws(CartographError) {
        let unreserved = token.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "-"): true
            default: false
            }
        }
        guard unreserved, (1...Self.maximumTokenLength).contains(token.utf8.count) else {
            throw CartographError(.badRequest, "A snapshot token is 1 to \(Self.maximumTokenLength) characters of A-Z, a-z, 0-9, '.', '_', '~' and '-'.",
                                  errors: [.init(pointer: pointer, message: "not a snapshot token")])
        }
        self.mapping = mapping
        self.token = token
    }
}

/// The two tables that hold snapshot sessions, and the statements on them.
enum SnapshotSessionTables {
    static let sessions = "_cartograph_snapshot_sessions", mentions = "_cartograph_snapshot_mentions"

    /// Created when any store opens (IF NOT EXISTS: stores made before sessions get them too). A
    /// session keeps the `deleteMissing` scope its first page was mapped with (`entity`, `scope`), so
    /// that it never completes under another; `last_used` is milliseconds since 1970.
    static let schema = """
        CREATE TABLE IF NOT EXISTS \(quoted(sessions)) (
            id INTEGER PRIMARY KEY, mapping TEXT NOT NULL, token TEXT NOT NULL, entity TEXT NOT NULL, scope TEXT NOT NULL,
            last_used INTEGER NOT NULL, UNIQUE (mapping, token));
        CREATE TABLE IF NOT EXISTS \(quoted(mentions)) (
            session INTEGER NOT NULL, object_id INTEGER NOT NULL, PRIMARY KEY (session, object_id)) WITHOUT ROWID;
        """

    /// A stored session: its row id and the scope its pages were mapped with.
    struct Stored {
        let id: Int64
        let entity: String
        let scope: String
    }

    /// Drops the sessions unused since `now - lifetime` (lazily, whenever sessions are touched).
    static func purgeExpired(_ connection: SQLiteConnection, now: Date) throws(SQLiteError) {
        let cutoff = now.addingTimeInterval(-SnapshotSession.lifetime).millisecondsSince1970
        try connection.run("DELETE FROM \(quoted(mentions)) WHERE session IN (SELECT id FROM \(quoted(sessions)) WHERE last_used <= ?)", [.integer(cutoff)])
        try connection.run("DELETE FROM \(quoted(sessions)) WHERE last_used <= ?", [.integer(cutoff)])
    }

    /// The live session, or nil (expired sessions are purged first).
    static func find(_ session: SnapshotSession, _ connection: SQLiteConnection, now: Date) throws(SQLiteError) -> Stored? {
        try purgeExpired(connection, now: now)
        let rows = try connection.rows("SELECT id, entity, scope FROM \(quoted(sessions)) WHERE mapping = ? AND token = ?",
                                       [.text(session.mapping), .text(session.token)])
        return rows.first.map { Stored(id: $0[0].integerValue ?? 0, entity: $0[1].textValue ?? "", scope: $0[2].textValue ?? "") }
    }

    /// Creates the session with the page's scope, or marks it used now.
    static func use(_ session: SnapshotSession, entity: String, scope: String, _ connection: SQLiteConnection, now: Date) throws(SQLiteError) -> Stored {
        if let stored = try find(session, connection, now: now) {
            try connection.run("UPDATE \(quoted(sessions)) SET last_used = ? WHERE id = ?", [.integer(now.millisecondsSince1970), .integer(stored.id)])
            return stored
        }
        try connection.run("INSERT INTO \(quoted(sessions)) (mapping, token, entity, scope, last_used) VALUES (?, ?, ?, ?, ?)",
                           [.text(session.mapping), .text(session.token), .text(entity), .text(scope), .integer(now.millisecondsSince1970)])
        let id = try connection.rows("SELECT last_insert_rowid()").first?.first?.integerValue ?? 0
        return Stored(id: id, entity: entity, scope: scope)
    }

    static func addMentions(_ ids: Set<Int64>, session: Int64, _ connection: SQLiteConnection) throws(SQLiteError) {
        let insert = try connection.cached("INSERT OR IGNORE INTO \(quoted(mentions)) (session, object_id) VALUES (?, ?)")
        for id in ids {
            try insert.bind([.integer(session), .integer(id)])
            try insert.runBound()
        }
    }

    static func mentioned(session: Int64, _ connection: SQLiteConnection) throws(SQLiteError) -> Set<Int64> {
        Set(try connection.rows("SELECT object_id FROM \(quoted(mentions)) WHERE session = ?", [.integer(session)]).compactMap { $0[0].integerValue })
    }

    /// Drops one session (`id`), or every session of `mapping`.
    static func drop(id: Int64, _ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.run("DELETE FROM \(quoted(mentions)) WHERE session = ?", [.integer(id)])
        try connection.run("DELETE FROM \(quoted(sessions)) WHERE id = ?", [.integer(id)])
    }

    static func drop(mapping: String, _ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.run("DELETE FROM \(quoted(mentions)) WHERE session IN (SELECT id FROM \(quoted(sessions)) WHERE mapping = ?)", [.text(mapping)])
        try connection.run("DELETE FROM \(quoted(sessions)) WHERE mapping = ?", [.text(mapping)])
    }

    /// Runs `body`'s statements on the session tables, a failure becoming a 500 (or a storage fault) that
    /// names the session: its token is the request's, so the request log leaves the detail out.
    static func sqlite<T>(_ session: SnapshotSession, _ body: () throws(SQLiteError) -> T) throws(CartographError) -> T {
        do { return try body() } catch {
            throw CartographError.store(error, "Cannot read or write snapshot session '\(session.token)'").quotingRequestValues()
        }
    }

    /// The refusal of a snapshot session for a mapping that deletes nothing: there would be nothing to complete.
    static func needsDeleteMissing(_ session: SnapshotSession) -> CartographError {
        let phrase = CartographError.OptionPhrase(option: "snapshot", words: "map the payload outside a snapshot session")
        return CartographError(.unprocessable, "Mapping '\(session.mapping)' has no deleteMissing, so it takes no snapshot sessions: \(phrase.words).",
                               errors: [.init(pointer: "/snapshot", message: "the mapping has no deleteMissing")], optionPhrase: phrase)
    }
}

extension SnapshotSessionTables.Stored {
    /// A 409 when `mapping` no longer has the `deleteMissing` scope the session's pages were mapped with:
    /// they listed another set, and completing would delete by the wrong one.
    func requireScope(of mapping: EntityMapping, session: SnapshotSession) throws(CartographError) {
        let current = mapping.deleteMissing.map { "\(mapping.entity) where \($0.scope.format)" } ?? "no deleteMissing"
        guard current != "\(entity) where \(scope)" else { return }
        throw CartographError(.conflict, "Mapping '\(session.mapping)' changed since snapshot session '\(session.token)' began: its pages listed \(entity) "
                              + "where \(scope), the mapping now has \(current). Nothing was deleted; abandon the session and send the listing again.",
                              errors: [.init(pointer: "", message: "the deleteMissing scope changed")]).quotingRequestValues()
    }
}

extension StoreTransaction {
    /// Records a snapshot session's page (inside the page's own transaction): the session is created
    /// or marked used at the transaction's time, and the `_id`s the page mentioned are added to it.
    func recordSnapshotPage(_ session: SnapshotSession, mapping: EntityMapping, mentioned: Set<Int64>) throws(CartographError) {
        guard let snapshot = mapping.deleteMissing else { throw SnapshotSessionTables.needsDeleteMissing(session) }
        let stored = try SnapshotSessionTables.sqlite(session) { () throws(SQLiteError) in
            try SnapshotSessionTables.use(session, entity: mapping.entity, scope: snapshot.scope.format, connection, now: startedAt)
        }
        try stored.requireScope(of: mapping, session: session)
        try SnapshotSessionTables.sqlite(session) { () throws(SQLiteError) in try SnapshotSessionTables.addMentions(mentioned, session: stored.id, connection) }
    }
}

extension ModelStore {
    /// Completes a snapshot session in one write transaction: deletes the objects in `source`'s
    /// `deleteMissing` scope that no page of the session mentioned (with delete rules and tombstones)
    /// and drops the session, answering the document `answer` writes of the result (R-P12). 404 for an unknown or expired
    /// session; 409, nothing deleted and the session kept, past `maxDeletes` or when the mapping's scope
    /// changed since the session began. A dry run deletes and drops nothing.
    public func completeSnapshot(_ session: SnapshotSession, mapping source: MappingSource, dryRun: Bool,
                                 answer: ResultWriter) throws(CartographError) -> IngestResult {
        try applyPayload(idempotency: nil, dryRun: dryRun, answer: answer) { (transaction) throws(CartographError) -> MappingResult in
            let mapping = try source.mappings(for: transaction.model, in: self).mapping
            let stored = try transaction.liveSnapshotSession(session)
            try stored.requireScope(of: mapping, session: session)
            let connection = transaction.connection
            let mentioned = try SnapshotSessionTables.sqlite(session) { () throws(SQLiteError) in try SnapshotSessionTables.mentioned(session: stored.id, connection) }
            let result = try MappingEngine(model: transaction.model).deleteMissing(of: mapping, keeping: mentioned, in: transaction)
            try SnapshotSessionTables.sqlite(session) { () throws(SQLiteError) in try SnapshotSessionTables.drop(id: stored.id, connection) }
            return result
        }
    }

    /// Abandons a snapshot session: its pages stay, nothing is deleted. 404 for an unknown or expired one.
    public func abandonSnapshot(_ session: SnapshotSession) throws(CartographError) {
        _ = try write { (transaction) throws(CartographError) in
            let stored = try transaction.liveSnapshotSession(session)
            try SnapshotSessionTables.sqlite(session) { () throws(SQLiteError) in try SnapshotSessionTables.drop(id: stored.id, transaction.connection) }
        }
    }
}

extension StoreTransaction {
    /// The session, unless unknown or expired by the transaction's time (a 404).
    fileprivate func liveSnapshotSession(_ session: SnapshotSession) throws(CartographError) -> SnapshotSessionTables.Stored {
        let (connection, now) = (self.connection, startedAt)
        guard let stored = try SnapshotSessionTables.sqlite(session, { () throws(SQLiteError) in try SnapshotSessionTables.find(session, connection, now: now) }) else {
            throw CartographError(.notFound, "Mapping '\(session.mapping)' has no snapshot session '\(session.token)' (never begun, completed, abandoned, or unused for 24 hours).")
                .quotingRequestValues()
        }
        return stored
    }
}
