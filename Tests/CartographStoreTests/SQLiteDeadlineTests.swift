// R-S2: SQLite statements stop at the request's deadline; transaction control never does.
import Foundation
import Testing
import CartographCore
@testable import CartographStore

struct SQLiteDeadlineTests {
    /// A statement that counts to a billion: minutes of virtual-machine steps.
    static let endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000000) SELECT count(*) FROM n"

    @Test func R_S2_aStatementPastTheDeadlineIsInterruptedAndTheTransactionStillEnds() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t (x INTEGER)")
        let started = ContinuousClock.now
        let failure = RequestDeadline.$current.withValue(RequestDeadline(limit: .milliseconds(200))) { () -> SQLiteError? in
            do throws(SQLiteError) {
                try connection.control("BEGIN IMMEDIATE")
                try connection.run("INSERT INTO t VALUES (1)")
                _ = try connection.rows(Self.endless)
                return nil
            } catch {
                // The deadline has passed: ending the transaction must still work.
                try? connection.control("ROLLBACK")
                return error
            }
        }
        #expect(failure?.code.primary == .interrupt, "\(String(describing: failure))")
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(try connection.rows("SELECT count(*) FROM t").first?.first?.integerValue == 0, "the insert was rolled back")
        // Without a deadline the connection is as before: statements run to the end.
        #expect(try connection.rows("SELECT count(*) FROM (SELECT 1 UNION ALL SELECT 2)").first?.first?.integerValue == 2)
        try connection.control("BEGIN")
        try connection.control("COMMIT")
    }
}
