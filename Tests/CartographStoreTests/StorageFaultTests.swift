// Storage faults keep their kind however the SQLite error reaches the client (R-S4, SECURITY.md), and
// every store error keeps the SQLite error it was made from as its cause, for the server's log (R-S6).
import Testing
import CartographCore
@testable import CartographStore

struct StorageFaultTests {
    /// A registration's DDL fails inside `transaction`, which wraps the SQLite error: the disk-full, read-only
    /// and damaged-file answers must see through the wrapper, and an unknown error is an internal one
    /// (it once called itself for ever, a stack overflow that stopped the server).
    @Test func R_S4_aFaultInsideATransactionIsStillAStorageFault() {
        let full = SQLiteError(code: .full, message: "database or disk is full")
        #expect(CartographError.store(TransactionError<SQLiteError>.body(full), "Cannot apply model 'm'").code == .insufficientStorage)
        #expect(CartographError.store(TransactionError<CartographError>.sqlite(full), "x").code == .insufficientStorage)
        let damaged = SQLiteError(code: .corrupt, message: "database disk image is malformed")
        #expect(CartographError.store(TransactionError<SQLiteError>.sqlite(damaged), "x").code == .storeCorrupt)
        struct Unexpected: Error {}
        let unknown = CartographError.store(Unexpected(), "Cannot apply model 'm'")
        #expect(unknown.code == .internalError)
        #expect(unknown.detail.hasPrefix("Cannot apply model 'm'"))
    }

    /// A statement that fails inside a read becomes an internal error that keeps the `SQLiteError` itself —
    /// its result code and message — as its cause; the detail says only what failed, so that SQLite's words
    /// reach the log and never an answer.
    @Test func R_S6_aStoreErrorKeepsTheSQLiteErrorItWasMadeFromAsItsCause() throws {
        let store = try makeStore()
        try SQLiteConnection(path: store.path).execute("DROP TABLE \"Team\"")
        #expect {
            _ = try store.read { (reader) throws(CartographError) in try reader.page(ObjectQuery(entity: "Team")) }
        } throws: { error in
            guard let error = error as? CartographError, let cause = error.underlying as? SQLiteError else { return false }
            return error.code == .internalError && cause.code.primary == .error && cause.message.contains("no such table")
                && !error.detail.contains("no such table") && !error.detail.contains("SQLite")
        }
    }

    /// A storage fault's cause is the SQLite error under the transaction's wrapper, the one its kind was read from.
    @Test func R_S6_aStorageFaultKeepsTheUnwrappedSQLiteErrorAsItsCause() {
        let full = SQLiteError(code: .full, message: "database or disk is full")
        let error = CartographError.store(TransactionError<SQLiteError>.body(full), "Store write failed")
        #expect(error.code == .insufficientStorage)
        #expect((error.underlying as? SQLiteError)?.code == .full)
        #expect(error.detail == "Store write failed: the disk holding the store is full, so nothing was stored. Writes work again once there is room.")
    }
}
