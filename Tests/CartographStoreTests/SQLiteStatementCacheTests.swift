// The prepared-statement cache of a connection is bounded: a query's SQL varies with its predicate's
// shape, so a client sending ever new shapes must not grow a reader's memory without end (issue 15,
// "statements are prepared once per connection").
import Testing
@testable import CartographStore

struct SQLiteStatementCacheTests {
    @Test func theStatementCacheKeepsTheNewestStatementsAndEvictedOnesStillRun() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t (x INTEGER)")
        let first = try connection.cached("SELECT 0 FROM t WHERE x = ?")
        for n in 1...(SQLiteConnection.statementCacheCapacity * 3) {
            _ = try connection.cached("SELECT \(n) FROM t WHERE x = ?")
        }
        #expect(connection.cachedStatementCount == SQLiteConnection.statementCacheCapacity)
        // The evicted statement a caller still holds keeps working; asking again prepares it anew.
        #expect(try first.rows([.integer(1)]).isEmpty)
        let again = try connection.cached("SELECT 0 FROM t WHERE x = ?")
        #expect(again !== first)
        #expect(try connection.cached("SELECT \(SQLiteConnection.statementCacheCapacity * 3) FROM t WHERE x = ?") === connection.cached("SELECT \(SQLiteConnection.statementCacheCapacity * 3) FROM t WHERE x = ?"))
    }
}
