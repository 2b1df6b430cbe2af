// Reliability regressions found by the crash harness (scripts/crash-harness.py), in process: a payload
// racing a migration maps with the model its transaction writes under (R-S4, R-M6).
import Foundation
import Synchronization
import Testing
import CartographCore
import CartographTesting

@Suite(.serialized) struct ReliabilityTests {
    /// Found by the crash harness: a payload whose request read the model before a migration committed
    /// was mapped with the old model, so objects it inserted lacked the new attribute's default.
    @Test func R_S4_R_M6_payloadsRacingAMigrationGetTheNewAttributesDefaults() throws {
        let server = try InProcessServer()
        let client = server.client
        let key = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        @Sendable func model(extraVersions: [Int]) -> JSONValue {
            var attributes: [JSONValue] = [["name": "iid", "type": "string"]]
            for version in extraVersions {
                attributes.append(["name": .string("x\(version)"), "type": "integer64", "default": .number(JSONNumber(version))])
            }
            return ["entities": [["name": "Item", "attributes": .array(attributes), "userInfo": ["identityAttributes": "iid"]]]]
        }
        #expect(try client.sendJSON("PUT", "/v1/tenants/acme/models/race", model(extraVersions: []), token: key).status == 201)
        #expect(try client.sendJSON("PUT", "/v1/tenants/acme/models/race/mappings/items", ["entity": "Item", "attributes": ["iid"]],
                                    token: key).status == 201)
        let lastVersion = 9
        let stop = Atomic<Bool>(false)
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            if worker == 0 {
                // Each migration adds a defaulted attribute while the other workers post.
                for version in 2...lastVersion {
                    Thread.sleep(forTimeInterval: 0.02)
                    let response = try? client.sendJSON("PUT", "/v1/tenants/acme/models/race", model(extraVersions: Array(2...version)), token: key)
                    if response?.status != 200 { failures.withLock { $0.append("migration to \(version): \(response?.text ?? "no answer")") } }
                }
                stop.store(true, ordering: .releasing)
                return
            }
            var count = 0
            while !stop.load(ordering: .acquiring) {
                count += 1
                let response = try? client.sendJSON("POST", "/v1/tenants/acme/models/race/mappings/items/payloads",
                                                    ["iid": .string("w\(worker)-\(count)")], token: key)
                if response?.status != 200 { failures.withLock { $0.append("POST: \(response?.text ?? "no answer")") } }
            }
        }
        #expect(failures.withLock { $0 } == [])
        for version in 2...lastVersion {
            let missing = try client.send("GET", "/v1/tenants/acme/models/race/entities/Item/objects?count=true&limit=1&where=x\(version)%20==%20nil",
                                          token: key).json()
            #expect(missing["total"] == 0, "objects without the default of x\(version)")
        }
    }
}
