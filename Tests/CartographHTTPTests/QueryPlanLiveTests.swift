// The index advisor's log (R-Q5) on the real server: a list that keeps reading every row logs the index
// to declare. Indexes and `explain=true` themselves are in QueryPlanTests (in process).
import Foundation
import Testing
import CartographCore
import CartographTesting

struct QueryPlanLiveTests {
    /// The index advisor's log: the 20th list of one shape that read 10,000 rows or more without an index
    /// logs a notice naming the attribute to declare; once the index is declared the same lists read none.
    @Test func R_Q5_aListThatKeepsScanningEveryRowIsLoggedWithTheIndexToDeclare() throws {
        try withLiveServer { server in
            let client = server.client
            let key = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
            let base = "/v1/tenants/acme/models/m"
            #expect(try client.sendJSON("PUT", base, articlesModel(indexed: false), token: key).status == 201)
            #expect(try client.sendJSON("PUT", base + "/mappings/articles", articlesMapping, token: key).status == 201)
            let payload: JSONValue = .array((1...10_200).map { n in
                ["id": .number(JSONNumber(n)), "publishedAt": .number(JSONNumber(1_600_000_000 + n)), "views": .number(JSONNumber(n % 1000))]
            })
            #expect(try client.sendJSON("POST", base + "/mappings/articles/payloads", payload, token: key).status == 200)
            let list = base + "/entities/Article/objects?where=views%20%3E%20500&orderBy=-publishedAt&limit=5"
            for _ in 1..<20 { #expect(try client.send("GET", list, token: key).status == 200) }
            #expect(!server.logContains("a list keeps reading every row", timeout: 0.2), "not before the 20th")
            #expect(try client.send("GET", list, token: key).status == 200)
            #expect(server.logContains("a list keeps reading every row"))
            // The text log quotes a value with spaces as logfmt does, escaping its quotes.
            #expect(server.logContains(#"declare \"indexed\": true on Article.publishedAt"#))
            #expect(server.logContains("rowsScanned"))

            #expect(try client.sendJSON("PUT", base, articlesModel(indexed: true), token: key).status == 200)
            let plan = try client.send("GET", list + "&explain=true", token: key).json()["plan"]
            #expect(plan?["fullScan"] == false)
        }
    }
}
