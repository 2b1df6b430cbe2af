// A mapping's raw archive and its dead letters (R-P18, docs/mapping.md "Archive, replay and dead
// letters"). A mapping bug found weeks later is fixed by mapping the payloads again through the fixed
// mapping instead of fetching everything again from a rate-limited API, so a mapping with `"archive":
// {"days": N}` keeps every committed payload's body (deflated), with the request's @metadata, the
// mapping's version and the changeSeq it committed at, and each invalid object it discarded. Both are
// written in the payload's own transaction, just before COMMIT (a dry run, a refused payload and a replay
// keep nothing), in the model's store file: they count toward the tenant's storage quota as objects do.
import Foundation
import Crypto
public import CartographCore
import CartographMapping

/// One archived payload as `GET …/archive` lists it.
public struct ArchivedPayload: Sendable, Equatable {
    public let id: Int64
    /// When the transaction that committed it started, and when it expires (the store's clock), ms since 1970.
    public let receivedAt: Int64
    public let expiresAt: Int64
    /// The body's size as posted, and as kept (deflated).
    public let bytes: Int64
    public let storedBytes: Int64
    /// A SHA-256 prefix of the mapping document it was mapped with (as registered, normalized).
    public let mappingVersion: String
    public let changeSeq: Int64
    /// `{"receivedAt", "query", "header"}`: the request's @metadata, which a replay maps with again.
    public let metadata: JSONValue
}

/// An invalid object a committed payload discarded (R-P8), kept while its payload is.
public struct DeadLetter: Sendable, Equatable {
    public let id: Int64
    public let archiveID: Int64
    public let receivedAt: Int64
    public let expiresAt: Int64
    /// Where the representation was in the payload, and the entity and key it would have had.
    public let pointer: String
    public let entity: String
    public let key: JSONValue
    /// `[{"pointer", "message"}]`: why it was invalid, as the payload's answer listed it.
    public let reasons: JSONValue
    /// The representation itself; null when its pointer named nothing in the body.
    public let representation: JSONValue
}

/// A page of rows listed by id (keyset paging: `next` is the `after` of the next page, nil on the last).
public struct ArchivePage<Item: Sendable>: Sendable {
    public let items: [Item]
    public let next: Int64?
}

/// What replaying one archived payload did (or, in a dry run, would do).
public struct ReplayedPayload: Sendable {
    public let archiveID: Int64
    public let inserted: Int, updated: Int, unchanged: Int, deleted: Int, discarded: Int
    /// The change sequence the replay committed at; nil for a dry run.
    public let changeSeq: Int64?
    /// A dry run's objects that would be inserted, updated or deleted: `{"pointer", "entity", "key", "action"}` (R-P13's trace).
    public let changes: [JSONValue]
    /// What the replay committed (its counts feed the metrics, R-S9); nil for a dry run.
    public let committed: MappedCounts?
}

/// What a replay did: each payload it mapped, and the id to replay from next when it stopped short of
/// `to` to answer within the request's time limit (nil when it reached `to`).
public struct ReplayOutcome: Sendable {
    public let payloads: [ReplayedPayload]
    public let next: Int64?
}

extension MappedCounts {
    /// A replayed payload's counts, without its drift: that was counted when the payload arrived (R-P17).
    init(replayed result: MappingResult) {
        (inserted, updated, unchanged, deleted) = (result.inserted, result.updated, result.unchanged, result.deleted)
        drifted = 0
    }
}

/// The archive's two tables, one row per payload and one per discarded object.
enum ArchiveTables {
    static let payloads = "_cartograph_archive", deadLetters = "_cartograph_dead_letters"

    /// Created when any store opens (IF NOT EXISTS: stores made before the archive get it too). AUTOINCREMENT:
    /// an id is never given again, so a replay range written down names the same payloads or none.
    static let schema = """
        CREATE TABLE IF NOT EXISTS \(quoted(payloads)) (
            id INTEGER PRIMARY KEY AUTOINCREMENT, mapping TEXT NOT NULL, received_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
            mapping_version TEXT NOT NULL, change_seq INTEGER NOT NULL, metadata TEXT NOT NULL, body BLOB NOT NULL, body_bytes INTEGER NOT NULL);
        CREATE INDEX IF NOT EXISTS "_cartograph_archive_by_expiry" ON \(quoted(payloads)) (mapping, expires_at);
        CREATE TABLE IF NOT EXISTS \(quoted(deadLetters)) (
            id INTEGER PRIMARY KEY AUTOINCREMENT, mapping TEXT NOT NULL, archive_id INTEGER NOT NULL, received_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL, pointer TEXT NOT NULL, entity TEXT NOT NULL, key TEXT NOT NULL, reasons TEXT NOT NULL,
            representation TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS "_cartograph_dead_letters_by_expiry" ON \(quoted(deadLetters)) (mapping, expires_at);
        """

    /// Forgets a mapping's archive: the mapping is deleted, or registered again without `archive`.
    static func drop(mapping: String, _ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.run("DELETE FROM \(quoted(payloads)) WHERE mapping = ?", [.text(mapping)])
        try connection.run("DELETE FROM \(quoted(deadLetters)) WHERE mapping = ?", [.text(mapping)])
    }

    /// The version an archived payload records: the first 16 hex digits of the SHA-256 of the mapping
    /// document's normalized text (a replay through the same document maps as the payload was).
    static func version(of document: JSONValue) -> String {
        HexText.lowercase(SHA256.hash(data: document.jsonBytes).prefix(8))
    }
}

/// What archiving a payload needs, made before the write lock is taken (the body deflated there).
struct PayloadArchiving {
    let mapping: String
    let archive: MappingArchive
    let version: String
    let metadata: String
    let body: [UInt8]
    let deflated: [UInt8]

    /// The archiving of `body` mapped through `source`, when its mapping keeps an archive; nil for a dry
    /// run and a replay (a replayed payload is archived already).
    init?(_ body: [UInt8], source: MappingSource, mapping: EntityMapping, options: IngestOptions) throws(CartographError) {
        guard !options.dryRun, !options.replaying, let archive = mapping.archive, case .document(let document, let name?) = source else { return nil }
        guard let deflated = ArchiveCompression.deflate(body) else {
            throw CartographError(.internalError, "Cannot compress the payload for the archive of mapping '\(name)'; nothing was stored.")
        }
        (self.mapping, self.archive, version, metadata, self.body, self.deflated) =
            (name, archive, ArchiveTables.version(of: document), options.metadata.jsonText, body, deflated)
    }
}

extension StoreTransaction {
    /// Archives a committed payload and the objects it discarded, and deletes this mapping's expired
    /// rows; answers the payload's archive id. Called just before COMMIT, with the payload's changeSeq.
    func archive(_ archiving: PayloadArchiving, result: MappingResult, changeSeq: Int64) throws(CartographError) -> Int64 {
        let now = startedAt.millisecondsSince1970
        let expiresAt = now + archiving.archive.lifetimeMilliseconds
        let name = archiving.mapping
        do {
            for table in [ArchiveTables.payloads, ArchiveTables.deadLetters] {
                try connection.run("DELETE FROM \(quoted(table)) WHERE mapping = ? AND expires_at <= ?", [.text(name), .integer(now)])
            }
            let inserted = try connection.rows("""
                INSERT INTO \(quoted(ArchiveTables.payloads)) (mapping, received_at, expires_at, mapping_version, change_seq, metadata, body, body_bytes)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
                """, [.text(name), .integer(now), .integer(expiresAt), .text(archiving.version), .integer(changeSeq), .text(archiving.metadata),
                      .blob(archiving.deflated), .integer(Int64(archiving.body.count))])
            guard let id = inserted.first?.first?.integerValue else { throw SQLiteError(code: .error, message: "INSERT … RETURNING id returned no id") }
            guard !result.discarded.isEmpty else { return id }
            // Parsed again only now: most payloads discard nothing, and the parsed body is long gone.
            let document = try? JSONReader().parse(archiving.body)
            for discarded in result.discarded {
                let pointer = discarded["pointer"]?.stringValue ?? ""
                let representation = document.flatMap { JSONPointer.resolve(pointer, in: $0) } ?? .null
                try connection.run("""
                    INSERT INTO \(quoted(ArchiveTables.deadLetters)) (mapping, archive_id, received_at, expires_at, pointer, entity, key, reasons, representation)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, [.text(name), .integer(id), .integer(now), .integer(expiresAt), .text(pointer),
                          .text(discarded["entity"]?.stringValue ?? ""), .text((discarded["key"] ?? .null).jsonText),
                          .text((discarded["errors"] ?? .array([])).jsonText), .text(representation.jsonText)])
            }
            return id
        } catch { throw CartographError.store(error, "Cannot archive the payload of mapping '\(name)'") }
    }
}

extension ModelStore {
    /// Most archived payloads one replay maps: a longer range is replayed in several requests.
    public static let replayLimit = 1000
    /// The actions of R-P13's trace that a dry-run replay lists as changes (not `unchanged`, `discard`, `connect`).
    static let replayChangeActions: Set<String> = ["insert", "update", "delete"]

    /// Mapping `name`'s archived payloads after id `after`, oldest first, at most `limit` (expired ones
    /// are never listed, even before a later payload deletes them).
    public func archivedPayloads(mapping name: String, after: Int64 = 0, limit: Int) throws(CartographError) -> ArchivePage<ArchivedPayload> {
        let now = clock.now().millisecondsSince1970
        return try read { (reader) throws(CartographError) -> ArchivePage<ArchivedPayload> in
            let rows: [[SQLiteValue]]
            do {
                rows = try reader.reader.connection.rows("""
                    SELECT id, received_at, expires_at, body_bytes, length(body), mapping_version, change_seq, metadata FROM \(quoted(ArchiveTables.payloads))
                    WHERE mapping = ? AND id > ? AND expires_at > ? ORDER BY id LIMIT ?
                    """, [.text(name), .integer(after), .integer(now), .integer(Int64(limit) + 1)])
            } catch { throw CartographError.store(error, "Cannot read the archive of mapping '\(name)'") }
            let items = rows.prefix(limit).map { row in
                ArchivedPayload(id: row[0].integerValue ?? 0, receivedAt: row[1].integerValue ?? 0, expiresAt: row[2].integerValue ?? 0,
                                bytes: row[3].integerValue ?? 0, storedBytes: row[4].integerValue ?? 0, mappingVersion: row[5].textValue ?? "",
                                changeSeq: row[6].integerValue ?? 0,
                                metadata: row[7].textValue.flatMap { try? JSONReader().parse($0) } ?? .object(JSONObject()))
            }
            return ArchivePage(items: items, next: rows.count > limit ? items.last?.id : nil)
        }
    }

    /// The body of mapping `name`'s archived payload `id`, as it was posted; nil when it has expired or
    /// was never archived (for this mapping).
    public func archivedBody(mapping name: String, id: Int64) throws(CartographError) -> [UInt8]? {
        try archivedPayload(mapping: name, id: id)?.body
    }

    /// Archived payload `id`'s body as it was posted and the @metadata it came with, read in one query;
    /// nil when it has expired or was never archived (for this mapping).
    func archivedPayload(mapping name: String, id: Int64) throws(CartographError) -> (body: [UInt8], metadata: JSONValue)? {
        let now = clock.now().millisecondsSince1970
        return try read { (reader) throws(CartographError) -> (body: [UInt8], metadata: JSONValue)? in
            let row: [SQLiteValue]?
            do {
                row = try reader.reader.connection.rows(
                    "SELECT body, body_bytes, metadata FROM \(quoted(ArchiveTables.payloads)) WHERE mapping = ? AND id = ? AND expires_at > ?",
                    [.text(name), .integer(id), .integer(now)]).first
            } catch { throw CartographError.store(error, "Cannot read the archive of mapping '\(name)'") }
            guard let row else { return nil }
            guard let deflated = row[0].blobValue, let body = ArchiveCompression.inflate(deflated, size: Int(row[1].integerValue ?? -1)) else {
                throw CartographError(.internalError, "Archived payload \(id) of mapping '\(name)' does not inflate to its recorded size.")
            }
            return (body, row[2].textValue.flatMap { try? JSONReader().parse($0) } ?? .object(JSONObject()))
        }
    }

    /// Mapping `name`'s dead letters after id `after`, oldest first, at most `limit` (unexpired only).
    public func deadLetters(mapping name: String, after: Int64 = 0, limit: Int) throws(CartographError) -> ArchivePage<DeadLetter> {
        let now = clock.now().millisecondsSince1970
        return try read { (reader) throws(CartographError) -> ArchivePage<DeadLetter> in
            let rows: [[SQLiteValue]]
            do {
                rows = try reader.reader.connection.rows("""
                    SELECT id, archive_id, received_at, expires_at, pointer, entity, key, reasons, representation FROM \(quoted(ArchiveTables.deadLetters))
                    WHERE mapping = ? AND id > ? AND expires_at > ? ORDER BY id LIMIT ?
                    """, [.text(name), .integer(after), .integer(now), .integer(Int64(limit) + 1)])
            } catch { throw CartographError.store(error, "Cannot read the dead letters of mapping '\(name)'") }
            let reader = JSONReader()
            func json(_ value: SQLiteValue) -> JSONValue { value.textValue.flatMap { try? reader.parse($0) } ?? .null }
            let items = rows.prefix(limit).map { row in
                DeadLetter(id: row[0].integerValue ?? 0, archiveID: row[1].integerValue ?? 0, receivedAt: row[2].integerValue ?? 0,
                           expiresAt: row[3].integerValue ?? 0, pointer: row[4].textValue ?? "", entity: row[5].textValue ?? "",
                           key: json(row[6]), reasons: json(row[7]), representation: json(row[8]))
            }
            return ArchivePage(items: items, next: rows.count > limit ? items.last?.id : nil)
        }
    }

    /// Maps mapping `name`'s archived payloads `from` through `to` (ids, both archived and unexpired) again,
    /// in id order, through the mapping as registered now, each with the @metadata it came with and in its
    /// own write transaction: the write lock is never held longer than one payload holds it. A replay is
    /// not archived again, counts no drift and runs no `deleteMissing` (a payload replayed alone is not the
    /// snapshot it was part of). A dry run maps each payload against the store as it is and rolls it back.
    /// Within a request's time limit (`RequestDeadline`), no payload after the first starts once less
    /// than a quarter of the limit remains: the outcome's `next` says where to go on.
    /// - Throws: 409 when the mapping keeps no archive; 404 naming the ids that remain when `from` or `to`
    ///   is not kept; 422 for a range of more than `replayLimit` payloads; whatever mapping a payload
    ///   throws (the payloads replayed before it stay committed).
    public func replay(mapping name: String, from: Int64, to: Int64, model: Model, dryRun: Bool, maximumObjects: Int,
                       quota: StorageQuota?) throws(CartographError) -> ReplayOutcome {
        guard let document = try mappings(named: name).first?.document else { throw unknownMapping(name) }
        guard try parseMapping(document, name: name, model: model).archive != nil else {
            throw CartographError(.conflict, "Mapping '\(name)' keeps no archive to replay; declare \"archive\": {\"days\": N} (docs/mapping.md) and post its payloads again.")
        }
        let ids = try archivedIDs(mapping: name, from: from, to: to)
        guard ids.count <= Self.replayLimit else {
            throw CartographError(.unprocessable, "A replay maps at most \(Self.replayLimit) archived payloads; \(from)-\(to) holds \(ids.count).",
                                  errors: [.init(pointer: "/to", message: "must be at most \(ids[Self.replayLimit - 1]) for a replay from \(from)")])
        }
        let source = MappingSource.document(document, name: name)
        var replayed: [ReplayedPayload] = []
        let deadline = RequestDeadline.current
        for id in ids {
            if let deadline, !replayed.isEmpty, ContinuousClock.now + deadline.limit / 4 >= deadline.instant {
                return ReplayOutcome(payloads: replayed, next: id)
            }
            // A payload that expired since the range was read is skipped: it is no longer kept.
            guard let (body, metadata) = try archivedPayload(mapping: name, id: id) else { continue }
            var options = IngestOptions(metadata: metadata, explain: dryRun, dryRun: dryRun, maximumObjects: maximumObjects, quota: quota)
            options.replaying = true
            var mapped: (result: MappingResult, changeSeq: Int64?)?
            _ = try ingest(body, mapping: source, model: model, options: options) { result, changeSeq in
                mapped = (result, changeSeq)
                return []
            }
            guard let (result, changeSeq) = mapped else { continue }
            let changes = (result.explain ?? []).compactMap { entry -> JSONValue? in
                guard let action = entry["action"]?.stringValue, Self.replayChangeActions.contains(action) else { return nil }
                return ["pointer": entry["pointer"] ?? .null, "entity": entry["entity"] ?? .null, "key": entry["key"] ?? .null, "action": .string(action)]
            }
            replayed.append(ReplayedPayload(archiveID: id, inserted: result.inserted, updated: result.updated, unchanged: result.unchanged,
                                            deleted: result.deleted, discarded: result.discarded.count, changeSeq: changeSeq, changes: changes,
                                            committed: dryRun ? nil : MappedCounts(replayed: result)))
        }
        return ReplayOutcome(payloads: replayed, next: nil)
    }

    /// The ids of mapping `name`'s unexpired archived payloads from `from` through `to`; 404 naming what
    /// remains when either end is not among them (expired, never archived, or another mapping's).
    func archivedIDs(mapping name: String, from: Int64, to: Int64) throws(CartographError) -> [Int64] {
        let now = clock.now().millisecondsSince1970
        let (ids, kept) = try read { (reader) throws(CartographError) -> (ids: [Int64], kept: [SQLiteValue]?) in
            let connection = reader.reader.connection
            do {
                let ids = try connection.rows(
                    "SELECT id FROM \(quoted(ArchiveTables.payloads)) WHERE mapping = ? AND id BETWEEN ? AND ? AND expires_at > ? ORDER BY id",
                    [.text(name), .integer(from), .integer(to), .integer(now)]).compactMap { $0.first?.integerValue }
                guard ids.first != from || ids.last != to else { return (ids, nil) }
                let kept = try connection.rows(
                    "SELECT min(id), max(id), count(*) FROM \(quoted(ArchiveTables.payloads)) WHERE mapping = ? AND expires_at > ?",
                    [.text(name), .integer(now)]).first
                return (ids, kept)
            } catch { throw CartographError.store(error, "Cannot read the archive of mapping '\(name)'") }
        }
        guard ids.first != from || ids.last != to else { return ids }
        let remain: String
        if let first = kept?[0].integerValue, let last = kept?[1].integerValue, let count = kept?[2].integerValue {
            remain = first == last ? "archived payload \(first) remains" : "archived payloads \(first)-\(last) remain (\(count))"
        } else {
            remain = "no archived payload remains"
        }
        let missing = Set([from, to].filter { !ids.contains($0) }).sorted()
        throw CartographError(.notFound, "Mapping '\(name)' keeps no archived payload \(missing.map(String.init).joined(separator: " and ")) "
                                + "(expired or never archived); \(remain).",
                              errors: missing.map { id in .init(pointer: id == from ? "/from" : "/to", message: "archived payload \(id) is not kept; \(remain)") })
    }
}
