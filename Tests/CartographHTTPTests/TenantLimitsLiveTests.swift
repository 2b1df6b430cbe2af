// R-S2 tenant limits over the real server: the admin's per-tenant overrides (PATCH /v1/tenants/{tenant})
// persist across a restart. The limits themselves are in TenantLimitsTests (in process).
import Foundation
import Testing
import CartographCore
import CartographTesting

@Suite(.serialized) struct TenantRateLimitLiveTests {
    @Test func R_S2_perTenantLimitsSetByPatchPersistAcrossRestart() throws {
        let server = try LiveServer()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let key = try createTenant("acme", on: server)
        _ = try createTenant("globex", on: server)
        let patched = try setLimits("acme", ["requestsPerSecond": .number(JSONNumber(validatedText: "0.5")), "burst": 2, "maxStoreBytes": 10_000_000, "maxModels": 3], on: server)
        #expect(patched.status == 200, "\(patched.text)")
        let body = try patched.json()
        #expect(body["limits"]?["requestsPerSecond"]?.numberValue?.doubleValue == 0.5)
        #expect(body["limits"]?["burst"] == 2)
        #expect(body["limits"]?["maxStoreBytes"] == 10_000_000)
        #expect(body["limits"]?["maxModels"] == 3)
        #expect(body["effectiveLimits"]?["maxModels"] == 3)
        #expect(body["usage"] == ["models": 0, "storeBytes": 0])
        // A partial PATCH keeps what it does not name.
        #expect(try setLimits("acme", ["maxModels": 4], on: server).json()["limits"]?["burst"] == 2)
        #expect(server.stop() == 0)

        let restarted = try LiveServer(dataDirectory: server.dataDirectory)
        defer { restarted.stop() }
        let shown = try tenantDetail("acme", on: restarted)
        #expect(shown["limits"]?["requestsPerSecond"]?.numberValue?.doubleValue == 0.5)
        #expect(shown["limits"]?["burst"] == 2)
        #expect(shown["limits"]?["maxStoreBytes"] == 10_000_000)
        #expect(shown["limits"]?["maxModels"] == 4)
        #expect(try tenantDetail("globex", on: restarted)["limits"]
                == ["requestsPerSecond": nil, "burst": nil, "maxStoreBytes": nil, "maxModels": nil])
        // The list shows the limits as set, too.
        let listed = try restarted.client.send("GET", "/v1/tenants", token: restarted.adminToken).json()["items"]?.arrayValue
        #expect(listed?.first?["limits"]?["maxModels"] == 4)
        // The persisted rate applies after the restart...
        let statuses = try (0..<3).map { _ in try restarted.client.send("GET", "/v1/tenants/acme/keys", token: key).status }
        #expect(statuses == [200, 200, 429])
        // ...until the admin returns it to the server's default (off).
        let reset = try setLimits("acme", ["requestsPerSecond": nil, "burst": nil], on: restarted).json()
        #expect(reset["limits"]?["requestsPerSecond"] == .null)
        #expect(reset["effectiveLimits"]?["requestsPerSecond"] == .null)
        #expect(reset["limits"]?["maxModels"] == 4)
        let afterReset = try (0..<5).map { _ in try restarted.client.send("GET", "/v1/tenants/acme/keys", token: key).status }
        #expect(afterReset.allSatisfy { $0 == 200 })
        // `"limits": null` returns every limit to the defaults.
        #expect(try restarted.client.send("PATCH", "/v1/tenants/acme", headers: [("Content-Type", "application/json")],
                                          body: Array(#"{"limits": null}"#.utf8), token: restarted.adminToken)
                    .json()["limits"] == ["requestsPerSecond": nil, "burst": nil, "maxStoreBytes": nil, "maxModels": nil])
    }
}
