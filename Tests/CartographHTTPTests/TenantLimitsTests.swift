// R-S2 tenant limits without a socket: the token bucket's arithmetic, how a tenant's overrides layer
// over the server's defaults, the PATCH document's rules, and that rate limiting stays off (one
// atomic load per request) until something turns it on; then through the routes, in process: per-tenant
// rate limits (429 with Retry-After), the admin's per-tenant overrides (PATCH /v1/tenants/{tenant}), the
// model-count and store-size quotas (409 quota-exceeded, nothing stored) and the validation of limit
// documents. That overrides persist across a restart is in TenantLimitsLiveTests.
import Foundation
import Testing
import CartographCore
import CartographStore
import CartographTesting
import Logging
@testable import CartographHTTP

struct TenantLimitsTests {
    static let second: UInt64 = 1_000_000_000

    @Test func R_S2_tokenBucketAllowsABurstThenRefillsAtItsRate() {
        var bucket = TokenBucket(policy: RatePolicy(requestsPerSecond: 2, burst: 3), now: 0)
        #expect(bucket.take(now: 0) == nil)
        #expect(bucket.take(now: 0) == nil)
        #expect(bucket.take(now: 0) == nil)
        #expect(bucket.take(now: 0) == 0.5, "empty: the next token is half a second away at 2/s")
        #expect(bucket.take(now: Self.second / 4) == 0.25)
        #expect(bucket.take(now: Self.second / 2) == nil, "refilled one token")
        // A long pause fills the bucket to its size, no more.
        let later = 100 * Self.second
        #expect((0..<3).map { _ in bucket.take(now: later) } == [nil, nil, nil])
        #expect(bucket.take(now: later) != nil)
        // A clock that goes backwards changes nothing.
        #expect(bucket.take(now: 0) != nil)
    }

    @Test func R_S2_limiterRoundsRetryAfterUpAndForgetsABucket() {
        let limiter = TenantRateLimiter()
        let policy = RatePolicy(requestsPerSecond: 0.25, burst: 1)
        var asked = 0
        #expect(limiter.admit(tenant: "acme", now: 0, policy: { asked += 1; return policy }) == nil)
        #expect(limiter.admit(tenant: "acme", now: 0, policy: { asked += 1; return policy })
                == RateLimitRefusal(policy: policy, retryAfterSeconds: 4))
        #expect(limiter.admit(tenant: "acme", now: 3_100_000_000, policy: { policy })?.retryAfterSeconds == 1, "0.9 s rounds up to 1")
        #expect(asked == 1, "the policy is looked up once per bucket")
        #expect(limiter.admit(tenant: "globex", now: 0, policy: { nil }) == nil)
        #expect((0..<100).allSatisfy { _ in limiter.admit(tenant: "globex", now: 0, policy: { policy }) == nil }, "unlimited stays so")
        limiter.forget(tenant: "acme")
        #expect(limiter.admit(tenant: "acme", now: 0, policy: { nil }) == nil)
    }

    @Test func R_S2_tenantOverridesLayerOverTheServerDefaults() {
        var configuration = ServerConfiguration()
        #expect(configuration.effectiveLimits(TenantLimits()) == EffectiveLimits(rate: nil, maxStoreBytes: nil, maxModels: nil))
        configuration.tenantRateLimit = 10
        configuration.tenantMaxModels = 5
        #expect(configuration.effectiveLimits(TenantLimits()).rate == RatePolicy(requestsPerSecond: 10, burst: 10))
        configuration.tenantRateBurst = 100
        #expect(configuration.effectiveLimits(TenantLimits()).rate == RatePolicy(requestsPerSecond: 10, burst: 100))
        // A tenant's own rate brings one second's worth of burst, not the server's.
        #expect(configuration.effectiveLimits(TenantLimits(requestsPerSecond: 1)).rate == RatePolicy(requestsPerSecond: 1, burst: 1))
        #expect(configuration.effectiveLimits(TenantLimits(requestsPerSecond: 0.2)).rate == RatePolicy(requestsPerSecond: 0.2, burst: 1))
        #expect(configuration.effectiveLimits(TenantLimits(requestsPerSecond: 1, burst: 7)).rate == RatePolicy(requestsPerSecond: 1, burst: 7))
        // 0 = no limit for this tenant.
        let unlimited = configuration.effectiveLimits(TenantLimits(requestsPerSecond: 0, maxStoreBytes: 0, maxModels: 0))
        #expect(unlimited == EffectiveLimits(rate: nil, maxStoreBytes: nil, maxModels: nil))
        #expect(configuration.effectiveLimits(TenantLimits(maxStoreBytes: 1 << 20)).maxStoreBytes == 1 << 20)
        #expect(configuration.effectiveLimits(TenantLimits()).maxModels == 5)
    }

    @Test func R_S2_patchReplacesNamedLimitsAndNullRestoresTheDefault() throws {
        let current = TenantLimits(requestsPerSecond: 5, burst: 10, maxStoreBytes: 1000, maxModels: 2)
        let patched = try TenantLimits.patched(current, with: ["limits": ["burst": nil, "maxModels": 0, "requestsPerSecond": .number(JSONNumber(validatedText: "0.5"))]])
        #expect(patched == TenantLimits(requestsPerSecond: 0.5, burst: nil, maxStoreBytes: 1000, maxModels: 0))
        #expect(try TenantLimits.patched(current, with: ["limits": nil]) == TenantLimits())
        #expect(try TenantLimits.patched(current, with: [:]) == current)
        #expect {
            _ = try TenantLimits.patched(current, with: ["limits": ["maxModels": .number(JSONNumber(validatedText: "1e3")), "burst": 1_000_000_001]])
        } throws: { error in
            let error = error as? CartographError
            return error?.code == .unprocessable && error?.errors.map(\.pointer) == ["/limits/maxModels", "/limits/burst"]
        }
    }

    @Test func R_S2_rateLimitingIsOffUntilSomethingTurnsItOn() throws {
        let directory = DataDirectory(path: FileManager.default.temporaryDirectory.appendingPathComponent("cartograph-limits-\(UUID().uuidString)").path)
        defer { try? FileManager.default.removeItem(at: directory.root) }
        let control = try ControlStore(directory: directory)
        let limits = TenantLimitsInForce(defaults: ServerConfiguration(), control: control)
        #expect(!limits.rateLimiter.isEnabled)
        _ = try control.createTenant(id: "acme")
        _ = try control.setLimits(TenantLimits(requestsPerSecond: 3), tenantID: "acme")
        limits.changed(tenant: "acme")
        #expect(limits.rateLimiter.isEnabled)
        _ = try control.setLimits(TenantLimits(requestsPerSecond: 0), tenantID: "acme")
        limits.changed(tenant: "acme")
        #expect(!limits.rateLimiter.isEnabled)
        var configuration = ServerConfiguration()
        configuration.tenantRateLimit = 1
        #expect(TenantLimitsInForce(defaults: configuration, control: control).rateLimiter.isEnabled)
    }
}

/// Creates a tenant with the admin token and returns its admin-scope key.
func createTenant(_ id: String, on server: some TestServer) throws -> String {
    let created = try server.client.sendJSON("POST", "/v1/tenants", ["id": .string(id)], token: server.adminToken)
    #expect(created.status == 201, "\(created.text)")
    return try #require(try created.json()["apiKey"]?.stringValue)
}

/// PATCHes a tenant's limits with the admin token.
func setLimits(_ tenant: String, _ limits: JSONValue, on server: some TestServer) throws -> RawResponse {
    try server.client.send("PATCH", "/v1/tenants/\(tenant)", headers: [("Content-Type", "application/json")],
                           body: (["limits": limits] as JSONValue).jsonBytes, token: server.adminToken)
}

/// The tenant as the admin sees it.
func tenantDetail(_ tenant: String, on server: some TestServer) throws -> JSONValue {
    try server.client.send("GET", "/v1/tenants/\(tenant)", token: server.adminToken).json()
}

@Suite(.serialized) struct TenantRateLimitTests {
    @Test func R_S2_rateLimitedTenantGets429WithRetryAfter() throws {
        // The server-wide default from the flag: 0.5 requests/s, 3 at once.
        let server = try InProcessServer(arguments: ["--tenant-rate-limit", "0.5", "--tenant-rate-burst", "3"])
        let key = try createTenant("acme", on: server)
        for _ in 0..<3 {
            #expect(try server.client.send("GET", "/v1/tenants/acme/models", token: key).status == 200)
        }
        // The 4th within the same ~2 s: refused before anything runs — the model is not created.
        let refused = try server.client.sendJSON("PUT", "/v1/tenants/acme/models/work", projectsModel, token: key)
        #expect(refused.status == 429)
        #expect(refused.header("Content-Type") == "application/problem+json")
        let retryAfter = try #require(refused.header("Retry-After").flatMap(Int.init))
        #expect((1...2).contains(retryAfter), "one token at 0.5/s is at most 2 s away")
        #expect(refused.header("RateLimit-Policy") == "\"tenant\";q=3;w=6")
        #expect(refused.header("RateLimit") == "\"tenant\";r=0;t=\(retryAfter)")
        let problem = try refused.json()
        #expect(problem["type"] == "urn:cartograph:problem:too-many-requests")
        #expect(problem["status"] == 429)
        #expect(problem["detail"]?.stringValue?.contains("Tenant 'acme' is over its rate limit of 0.5 requests per second") == true)
        #expect(try server.client.send("GET", "/v1/tenants/acme/models", token: server.adminToken).json()["items"] == [])
        #expect(try tenantDetail("acme", on: server)["usage"]?["models"] == 0)
    }

    @Test func R_S2_anotherTenantAndTheAdminTokenAreNotLimited() throws {
        let server = try InProcessServer(arguments: ["--tenant-rate-limit", "0.5", "--tenant-rate-burst", "2"])
        let acme = try createTenant("acme", on: server)
        let globex = try createTenant("globex", on: server)
        let acmeStatuses = try (0..<4).map { _ in try server.client.send("GET", "/v1/tenants/acme/keys", token: acme).status }
        #expect(acmeStatuses == [200, 200, 429, 429])
        // Another tenant has its own bucket, full.
        let globexStatuses = try (0..<2).map { _ in try server.client.send("GET", "/v1/tenants/globex/keys", token: globex).status }
        #expect(globexStatuses == [200, 200])
        // The admin token is exempt, on acme's routes too, and can still lift acme's limit.
        let adminStatuses = try (0..<10).map { _ in try server.client.send("GET", "/v1/tenants/acme/keys", token: server.adminToken).status }
        #expect(adminStatuses.allSatisfy { $0 == 200 })
        #expect(try setLimits("acme", ["requestsPerSecond": 0], on: server).status == 200)
        let lifted = try (0..<5).map { _ in try server.client.send("GET", "/v1/tenants/acme/keys", token: acme).status }
        #expect(lifted.allSatisfy { $0 == 200 }, "0 = no limit for this tenant, whatever the server's default")
        #expect(try tenantDetail("acme", on: server)["effectiveLimits"]?["requestsPerSecond"] == .null)
        #expect(try tenantDetail("globex", on: server)["effectiveLimits"]?["requestsPerSecond"]?.numberValue?.doubleValue == 0.5)
    }

    @Test func R_S2_tokensRefillAtTheTenantsRate() throws {
        let server = try InProcessServer()
        let key = try createTenant("acme", on: server)
        // No server default: the limit is the tenant's own, 2/s, one at a time.
        #expect(try setLimits("acme", ["requestsPerSecond": 2, "burst": 1], on: server).status == 200)
        #expect(try server.client.send("GET", "/v1/tenants/acme/models", token: key).status == 200)
        let refused = try server.client.send("GET", "/v1/tenants/acme/models", token: key)
        #expect(refused.status == 429)
        #expect(refused.header("Retry-After") == "1")
        Thread.sleep(forTimeInterval: 1.2)  // 2.4 tokens' worth of time; the bucket holds 1
        #expect(try server.client.send("GET", "/v1/tenants/acme/models", token: key).status == 200)
        #expect(try server.client.send("GET", "/v1/tenants/acme/models", token: key).status == 429)
    }

    @Test func R_S2_badLimitValuesAre422WithAPointerEach() throws {
        let server = try InProcessServer()
        let key = try createTenant("acme", on: server)
        let bad = try server.client.send(
            "PATCH", "/v1/tenants/acme", headers: [("Content-Type", "application/json")],
            body: Array(#"{"id": "other", "limits": {"requestsPerSecond": -1, "burst": 0, "maxStoreBytes": "1GB", "maxModels": 1.5, "colour": 1}}"#.utf8),
            token: server.adminToken)
        #expect(bad.status == 422)
        let problem = try bad.json()
        #expect(problem["type"] == "urn:cartograph:problem:unprocessable")
        let pointers = Set(problem["errors"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } ?? [])
        #expect(pointers == ["/id", "/limits/requestsPerSecond", "/limits/burst", "/limits/maxStoreBytes", "/limits/maxModels", "/limits/colour"])
        // Nothing changed.
        #expect(try tenantDetail("acme", on: server)["limits"] == ["requestsPerSecond": nil, "burst": nil, "maxStoreBytes": nil, "maxModels": nil])

        let notAnObject = try setLimits("acme", 5, on: server)
        #expect(notAnObject.status == 422)
        #expect(try notAnObject.json()["errors"]?.arrayValue?.first?["pointer"] == "/limits")
        let tooFast = try setLimits("acme", ["requestsPerSecond": 2_000_000, "maxStoreBytes": -5], on: server)
        #expect(Set(try tooFast.json()["errors"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } ?? [])
                == ["/limits/requestsPerSecond", "/limits/maxStoreBytes"])
        let array = try server.client.sendJSON("PATCH", "/v1/tenants/acme", [["limits": [:]]], token: server.adminToken)
        #expect(array.status == 422)
        #expect(try array.json()["errors"]?.arrayValue?.first?["pointer"] == "")
        let malformed = try server.client.send("PATCH", "/v1/tenants/acme", headers: [("Content-Type", "application/json")],
                                               body: Array(#"{"limits": {"#.utf8), token: server.adminToken)
        #expect(malformed.status == 400)
        let wrongType = try server.client.send("PATCH", "/v1/tenants/acme", headers: [("Content-Type", "text/plain")],
                                               body: Array(#"{"limits": {}}"#.utf8), token: server.adminToken)
        #expect(wrongType.status == 415)
        // Only the admin sets limits; unknown tenants are 404.
        #expect(try server.client.sendJSON("PATCH", "/v1/tenants/acme", ["limits": ["maxModels": 100]], token: key).status == 403)
        #expect(try setLimits("ghost", ["maxModels": 1], on: server).status == 404)
        #expect(try tenantDetail("acme", on: server)["limits"]?["maxModels"] == .null)
    }
}

@Suite(.serialized) struct TenantQuotaTests {
    @Test func R_S2_modelCountQuotaRefusesTheModelOverTheLimit() throws {
        // Server default: one model per tenant; acme gets two of its own.
        let server = try InProcessServer(arguments: ["--tenant-max-models", "1"])
        let acme = try createTenant("acme", on: server)
        let globex = try createTenant("globex", on: server)
        #expect(try setLimits("acme", ["maxModels": 2], on: server).status == 200)
        let put = { (tenant: String, model: String, key: String) throws -> RawResponse in
            try server.client.sendJSON("PUT", "/v1/tenants/\(tenant)/models/\(model)", projectsModel, token: key)
        }
        #expect(try put("acme", "one", acme).status == 201)
        #expect(try put("acme", "two", acme).status == 201)
        let refused = try put("acme", "three", acme)
        #expect(refused.status == 409)
        let problem = try refused.json()
        #expect(problem["type"] == "urn:cartograph:problem:quota-exceeded")
        #expect(problem["detail"]?.stringValue?.contains("at most 2 models") == true)
        let names = { (tenant: String, key: String) throws -> [String] in
            try server.client.send("GET", "/v1/tenants/\(tenant)/models", token: key).json()["items"]?.arrayValue?
                .compactMap { $0["name"]?.stringValue } ?? []
        }
        #expect(try names("acme", acme) == ["one", "two"])
        #expect(try server.client.send("GET", "/v1/tenants/acme/models/three", token: acme).status == 404)
        // Re-registering an existing model is not a new one.
        #expect(try put("acme", "two", acme).status == 200)
        // Deleting a model makes room.
        #expect(try server.client.send("DELETE", "/v1/tenants/acme/models/one", token: acme).status == 204)
        #expect(try put("acme", "three", acme).status == 201)
        #expect(try names("acme", acme) == ["three", "two"].sorted())
        // A registration refused for a bad query parameter leaves no model behind to count.
        let badFlag = try server.client.sendJSON("PUT", "/v1/tenants/globex/models/zero?allowDestructive=maybe", projectsModel, token: globex)
        #expect(badFlag.status == 400)
        #expect(try tenantDetail("globex", on: server)["usage"]?["models"] == 0)
        // The server's default applies to globex, and to the admin token acting for it.
        #expect(try put("globex", "one", globex).status == 201)
        #expect(try put("globex", "two", server.adminToken).status == 409)
        #expect(try names("globex", globex) == ["one"])
        #expect(try tenantDetail("globex", on: server)["usage"]?["models"] == 1)
    }

    @Test func R_S2_storeSizeQuotaRefusesAPayloadThatWouldGrowPastItAndStoresNothing() throws {
        try withProjectsAndServer { server, key, post, get in
            #expect(try post(["projects": [["id": 1, "name": "Apollo"], ["id": 2, "name": "Gemini"]]]).status == 200)
            let before = try tenantDetail("acme", on: server)
            let used = try #require(before["usage"]?["storeBytes"]?.numberValue?.int64Value)
            #expect(used > 0)
            #expect(before["usage"]?["models"] == 1)
            let feedBefore = try get("changes")
            #expect(feedBefore["changes"]?.arrayValue?.count == 2)

            // 256 KiB of room; the payload below is about 2 MB of names (twice over, with the change feed).
            #expect(try setLimits("acme", ["maxStoreBytes": .number(JSONNumber(used + 256 * 1024))], on: server).status == 200)
            let name = String(repeating: "x", count: 1000)
            let big: JSONValue = ["projects": .array((100..<2100).map { ["id": .number(JSONNumber($0)), "name": .string(name)] })]
            let refused = try post(big)
            #expect(refused.status == 409)
            let problem = try refused.json()
            #expect(problem["type"] == "urn:cartograph:problem:quota-exceeded")
            #expect(problem["detail"]?.stringValue?.contains("nothing was stored") == true)
            // Nothing was stored: no objects, no feed entries, not a byte more.
            #expect(try get("entities/Project/objects?count=true&limit=1")["total"] == 2)
            #expect(try get("changes") == feedBefore)
            #expect(try tenantDetail("acme", on: server)["usage"]?["storeBytes"]?.numberValue?.int64Value == used)
            // A payload that fits is stored.
            #expect(try post(["projects": [["id": 3, "name": "Mercury"]]]).status == 200)
            #expect(try get("entities/Project/objects?count=true&limit=1")["total"] == 3)

            // At the limit: no new model, no growth — but deleting is allowed.
            #expect(try setLimits("acme", ["maxStoreBytes": 1], on: server).status == 200)
            let newModel = try server.client.sendJSON("PUT", "/v1/tenants/acme/models/other", projectsModel, token: key)
            #expect(newModel.status == 409)
            #expect(try newModel.json()["type"] == "urn:cartograph:problem:quota-exceeded")
            // (Growth is counted in pages: an object that fits in a page already in use adds no bytes.)
            let fifty: JSONValue = ["projects": .array((4..<54).map { ["id": .number(JSONNumber($0)), "name": .string(name)] })]
            #expect(try post(fifty).status == 409)
            let deleted = try server.client.send("DELETE", "/v1/tenants/acme/models/work/entities/Project/objects?where=TRUEPREDICATE", token: key)
            #expect(deleted.status == 200)
            #expect(try deleted.json()["deleted"] == 3)
            #expect(try get("entities/Project/objects?count=true&limit=1")["total"] == 0)
            #expect(try tenantDetail("acme", on: server)["usage"]?["models"] == 1)
        }
    }
}

/// An in-process server with tenant acme, model `work` and mapping `projects` (as in PayloadTests), handing
/// the test the server, acme's key, a poster and a reader.
private func withProjectsAndServer(
    _ body: (InProcessServer, String, (JSONValue) throws -> RawResponse, (String) throws -> JSONValue) throws -> Void
) throws {
    let server = try InProcessServer()
    let client = server.client
    let key = try createTenant("acme", on: server)
    #expect(try client.sendJSON("PUT", "/v1/tenants/acme/models/work", projectsModel, token: key).status == 201)
    #expect(try client.sendJSON("PUT", "/v1/tenants/acme/models/work/mappings/projects", projectMapping(), token: key).status == 201)
    let post = { (payload: JSONValue) throws -> RawResponse in
        try client.send("POST", "/v1/tenants/acme/models/work/mappings/projects/payloads",
                        headers: [("Content-Type", "application/json")], body: payload.jsonBytes, token: key)
    }
    let get = { (path: String) throws -> JSONValue in try client.send("GET", "/v1/tenants/acme/models/work/" + path, token: key).json() }
    try body(server, key, post, get)
}
