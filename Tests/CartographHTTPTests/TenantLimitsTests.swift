// R-S2 tenant limits without a socket: the token bucket's arithmetic, how a tenant's overrides layer
// over the server's defaults, the PATCH document's rules, and that rate limiting stays off (one
// atomic load per request) until something turns it on.
import Foundation
import Testing
import CartographCore
import CartographStore
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
