// Storage faults (docs/errors.md#storage-faults): what a failed SQLite call means to the client of a store.
public import CartographCore

extension CartographError {
    /// A failed store operation (`what`, "Cannot store mapping 'x'") as the client sees it: a full disk,
    /// a file that cannot be written and a damaged file are storage faults of their own (docs/errors.md#storage-faults);
    /// anything else is an internal error whose SQLite words go to the log only.
    public static func store(_ error: any Error, _ what: String) -> CartographError {
        if let error = error as? CartographError { return error }
        if let wrapping = error as? any WrappingError { return store(wrapping.underlying, what) }
        guard let sqlite = error as? SQLiteError else { return CartographError(.internalError, "\(what): \(error)") }
        switch sqlite.code.primary {
        case .full:
            return CartographError(.insufficientStorage, "\(what): the disk holding the store is full, so nothing was stored. "
                + "Writes work again once there is room.")
        case .readOnly, .cantOpen, .permission, .ioError:
            return CartographError(.storeUnavailable, "\(what): the store's file cannot be written (\(sqlite.message)), so nothing was stored. "
                + "It is opened again on a later request once the file can be written.", retryAfterSeconds: 5)
        case .corrupt, .notADatabase:
            return CartographError(.storeCorrupt, "\(what): the store's file is damaged (\(sqlite.message)); it takes no more writes until an "
                + "operator restores it from a backup (see SECURITY.md).")
        default:
            return CartographError(.internalError, "\(what): \(sqlite)")
        }
    }
}

/// What an operator runs on a store that answered `store-corrupt` (`cartograph check-store`).
public enum StoreCheck {
    /// SQLite's `PRAGMA integrity_check` of the file at `path`, opened read-only: empty when it is sound,
    /// else each problem SQLite found (at most 100). A file that is not a database is one problem.
    public static func problems(path: String) -> [String] {
        do {
            let connection = try SQLiteConnection(path: path, readOnly: true)
            let rows = try connection.rows("PRAGMA integrity_check(100)")
            let messages = rows.compactMap { $0.first?.textValue }
            return messages == ["ok"] ? [] : messages
        } catch {
            return ["\(error.message)"]
        }
    }
}
