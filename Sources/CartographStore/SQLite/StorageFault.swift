// Storage faults (docs/errors.md#storage-faults): what a failed SQLite call means to the client of a store.
public import CartographCore

extension CartographError {
    /// A failed store operation (`what`, "Cannot store mapping 'x'") as the client sees it: a full disk,
    /// a file that cannot be written and a damaged file are storage faults of their own (docs/errors.md#storage-faults);
    /// anything else is an internal error. Each keeps the error it was made from as its `underlying` cause
    /// (the `SQLiteError` itself, unwrapped from a transaction's), which the server logs and never answers.
    public static func store(_ error: any Error, _ what: String) -> CartographError {
        if let error = error as? CartographError { return error }
        if let wrapping = error as? any WrappingError { return store(wrapping.underlying, what) }
        if let damage = error as? StoreFileDamage {
            switch damage {
            case .unreadable(let sqlite): return store(sqlite, what)
            case .inconsistent(let reason): return corrupt(what, reason, underlying: damage)
            }
        }
        guard let sqlite = error as? SQLiteError else { return CartographError(.internalError, "\(what).", underlying: error) }
        switch sqlite.code.primary {
        case .full:
            return CartographError(.insufficientStorage, "\(what): the disk holding the store is full, so nothing was stored. "
                + "Writes work again once there is room.", underlying: sqlite)
        case .readOnly, .cantOpen, .permission, .ioError:
            return CartographError(.storeUnavailable, "\(what): the store's file cannot be written (\(sqlite.message)), so nothing was stored. "
                + "It is opened again on a later request once the file can be written.", retryAfterSeconds: 5, underlying: sqlite)
        case .corrupt, .notADatabase:
            return corrupt(what, sqlite.message, underlying: sqlite)
        default:
            return CartographError(.internalError, "\(what).", underlying: sqlite)
        }
    }

    /// The answer of every request to a store whose file is damaged (R-S12), `reason` saying how.
    private static func corrupt(_ what: String, _ reason: String, underlying: any Error) -> CartographError {
        CartographError(.storeCorrupt, "\(what): the store's file is damaged (\(reason)); its model answers nothing until an "
            + "operator checks it with `cartograph check-store`, restores it from a backup and restarts the server (see SECURITY.md).",
            underlying: underlying)
    }
}
