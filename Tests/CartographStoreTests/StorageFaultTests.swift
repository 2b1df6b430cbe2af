// Storage faults keep their kind however the SQLite error reaches the client (R-S4, SECURITY.md).
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
}
