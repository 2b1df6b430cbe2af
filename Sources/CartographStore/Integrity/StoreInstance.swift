// R-D7: a store restored from an older copy gets a new epoch, so that its followers start over instead of
// keeping positions that the restored store hands out again to other writes (the writes of the copy's
// last moments are gone; their sequence numbers are not). A copy cannot be told from its original by
// what it holds, so every open gives the store a new random instance id, written both into the store —
// it travels with every copy: Litestream's replica, a backup — and into a sidecar file beside it,
// `<store>-instance`, which no copy takes along (Litestream replicates `*.sqlite` only). At the next open
// the two agree, unless the file was put back from a copy taken before the last open, or came without
// its sidecar (a volume restored from the replica). The check costs a small write at open, nothing per
// commit.
import Foundation
import CartographCore

/// The instance id of a data directory's store and its sidecar file.
public struct StoreInstance: Sendable {
    /// The sidecar's name is the store's with this appended, as SQLite's `-wal` and `-shm`.
    public static let sidecarSuffix = "-instance"
    /// What a restore step writes into the sidecar of each store it restored (scripts/cluster/node.py,
    /// deploy/kubernetes/cluster.yaml): never an instance id, so the store opens as an older copy even
    /// when it has no instance id (it was last written by a build before this check).
    public static let restoredMark = "restored"
    /// The instance id a backup copy carries (`StoreBackup`): no sidecar holds it, so wherever the copy is
    /// put back it opens as an older copy.
    static let backupMark = "backup"
    /// What the sidecar holds for a store without an instance id: a store written by a build before this
    /// check keeps its epoch when a new build first opens it.
    private static let noInstanceID = "none"
    static let metaKey = "instance"

    let sidecarPath: String

    init(storePath: String) { sidecarPath = storePath + Self.sidecarSuffix }

    /// Gives the store a new instance id and, when the file is an older copy, a new epoch in the same
    /// transaction, which it returns (nil: the store keeps its epoch).
    func open(_ connection: SQLiteConnection) throws(CartographError) -> String? {
        let current: String?
        do {
            current = try connection.rows("SELECT value FROM \(quoted(ModelStore.metaTable)) WHERE key = ?", [.text(Self.metaKey)])
                .first?.first?.textValue
        } catch {
            throw CartographError.store(error, "Cannot read the store's instance id")
        }
        // No sidecar: the volume was restored (or the store just created, or never opened by this build).
        let accepted = try acceptedIDs() ?? [Self.noInstanceID]
        let isOlderCopy = !accepted.contains(current ?? Self.noInstanceID)
        let next = RandomToken.hex(bytes: 16)
        // The sidecar accepts the new id before the store has it, and the store's current id until then: a
        // crash in between leaves a store whose id the sidecar accepts, unless the store is an older copy.
        try writeSidecar(isOlderCopy ? [next] : [current ?? Self.noInstanceID, next])
        let renewed = try record(next, renewingEpoch: isOlderCopy, connection)
        try writeSidecar([next])
        return renewed
    }

    /// Stores the instance id `next` and, when `renewingEpoch`, a new epoch, which it returns.
    private func record(_ next: String, renewingEpoch: Bool, _ connection: SQLiteConnection) throws(CartographError) -> String? {
        do {
            return try connection.transaction { () throws(SQLiteError) -> String? in
                try connection.run("INSERT OR REPLACE INTO \(quoted(ModelStore.metaTable)) (key, value) VALUES (?, ?)",
                                   [.text(Self.metaKey), .text(next)])
                return renewingEpoch ? try ChangeFeed.renewEpoch(connection) : nil
            }
        } catch {
            throw CartographError.store(error, "Cannot record the store's instance id")
        }
    }

    /// The ids the sidecar accepts, one a line; nil when there is no sidecar.
    private func acceptedIDs() throws(CartographError) -> Set<String>? {
        guard FileManager.default.fileExists(atPath: sidecarPath) else { return nil }
        guard let contents = FileManager.default.contents(atPath: sidecarPath) else {
            throw CartographError(.storeUnavailable, "Cannot read \(sidecarPath), which tells whether the store was restored from an older copy.",
                                  retryAfterSeconds: 5)
        }
        return Set(String(decoding: contents, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init))
    }

    /// Replaces the sidecar whole (a new file renamed over it): a crash leaves the old one or the new one.
    private func writeSidecar(_ ids: [String]) throws(CartographError) {
        do {
            try Data(ids.map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: sidecarPath), options: .atomic)
        } catch {
            throw CartographError(.storeUnavailable, "Cannot write \(sidecarPath), which tells whether the store was restored from an older copy: "
                                  + "\(error.localizedDescription)", retryAfterSeconds: 5, underlying: error)
        }
    }
}
