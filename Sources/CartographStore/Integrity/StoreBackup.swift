// `cartograph backup-store`: a backup of one store, taken while the server runs, that is known for a copy
// wherever it is put back (R-D7): it carries an instance id no sidecar holds, so the store opens with a
// new epoch and its followers start over, instead of keeping positions the copy hands out again.
import Foundation
public import CartographCore

public enum StoreBackup {
    /// Writes a consistent copy of the store at `store` to `copy` (which must not exist): one read
    /// transaction (`VACUUM INTO`), so writers go on meanwhile; then marks the copy.
    public static func copy(store: String, to copy: String) throws(CartographError) {
        guard FileManager.default.fileExists(atPath: store) else { throw CartographError(.notFound, "No store file at \(store).") }
        guard !FileManager.default.fileExists(atPath: copy) else {
            throw CartographError(.conflict, "\(copy) exists: a backup is written to a new file.")
        }
        do throws(SQLiteError) {
            try SQLiteConnection(path: store, readOnly: true).run("VACUUM INTO ?", [.text(copy)])
            try SQLiteConnection(path: copy).run("INSERT OR REPLACE INTO \(quoted(ModelStore.metaTable)) (key, value) VALUES (?, ?)",
                                                 [.text(StoreInstance.metaKey), .text(StoreInstance.backupMark)])
        } catch {
            try? FileManager.default.removeItem(atPath: copy)
            throw CartographError(.internalError, "Cannot back up \(store) to \(copy): \(error.message)", underlying: error)
        }
    }
}
