// Per-tenant request rate limits (R-S2): a token bucket per tenant, taken from by every request a
// tenant key authenticates. The admin token is exempt, so an operator can always fix things.
//
// Cost on the request path: with no rate limit configured anywhere (the default), one relaxed atomic
// load. With limits: one short lock, a dictionary lookup and a little arithmetic — no allocation
// after a tenant's first request.
import Foundation
import Synchronization

/// A token bucket: `burst` tokens at most, refilled at `requestsPerSecond`; a request takes one.
struct TokenBucket: Sendable, Equatable {
    let policy: RatePolicy
    private(set) var tokens: Double
    /// Monotonic nanoseconds of the last refill.
    private(set) var updated: UInt64

    /// A full bucket.
    init(policy: RatePolicy, now: UInt64) {
        self.policy = policy
        self.tokens = Double(policy.burst)
        self.updated = now
    }

    /// Takes a token: nil when one was there, else the seconds until one will be.
    mutating func take(now: UInt64) -> Double? {
        if now > updated {
            tokens = min(Double(policy.burst), tokens + Double(now - updated) / 1e9 * policy.requestsPerSecond)
            updated = now
        }
        if tokens >= 1 {
            tokens -= 1
            return nil
        }
        return (1 - tokens) / policy.requestsPerSecond
    }
}

/// Why a request was refused: the tenant's policy and when to retry.
struct RateLimitRefusal: Sendable, Equatable {
    let policy: RatePolicy
    /// Seconds until a token is available, rounded up (at least 1): the `Retry-After` value.
    let retryAfterSeconds: Int
}

/// The buckets of every tenant that has sent a request since its limits last changed.
final class TenantRateLimiter: Sendable {
    private enum Entry {
        case unlimited
        case limited(TokenBucket)
    }

    private let buckets = Mutex<[String: Entry]>([:])
    /// False while no tenant can be limited: then `admit` is not even called.
    private let enabled = Atomic<Bool>(false)

    /// Whether any tenant may be rate limited (a server default or some tenant's own rate).
    var isEnabled: Bool { enabled.load(ordering: .relaxed) }

    func setEnabled(_ value: Bool) { enabled.store(value, ordering: .relaxed) }

    /// Takes a token from `tenant`'s bucket; nil when the request may proceed. `policy` is asked only
    /// for a tenant without a bucket (its first request, or the first since `forget`).
    func admit(tenant: String, now: UInt64 = TenantRateLimiter.now(), policy: () -> RatePolicy?) -> RateLimitRefusal? {
        let taken = buckets.withLock { buckets -> (known: Bool, wait: Double?, policy: RatePolicy?) in
            switch buckets[tenant] {
            case nil: return (false, nil, nil)
            case .unlimited?: return (true, nil, nil)
            case .limited(var bucket)?:
                let wait = bucket.take(now: now)
                buckets[tenant] = .limited(bucket)
                return (true, wait, bucket.policy)
            }
        }
        if taken.known {
            guard let wait = taken.wait, let policy = taken.policy else { return nil }
            return RateLimitRefusal(policy: policy, retryAfterSeconds: max(1, Int(wait.rounded(.up))))
        }
        // First request: build the bucket outside the lock (the policy comes from the control store).
        let resolved = policy()
        let refusal = buckets.withLock { buckets -> RateLimitRefusal? in
            var entry = buckets[tenant] ?? resolved.map { .limited(TokenBucket(policy: $0, now: now)) } ?? .unlimited
            defer { buckets[tenant] = entry }
            guard case .limited(var bucket) = entry else { return nil }
            let wait = bucket.take(now: now)
            entry = .limited(bucket)
            return wait.map { RateLimitRefusal(policy: bucket.policy, retryAfterSeconds: max(1, Int($0.rounded(.up)))) }
        }
        return refusal
    }

    /// Drops a tenant's bucket, so its next request starts a full one under its current limits.
    func forget(tenant: String) {
        _ = buckets.withLock { $0.removeValue(forKey: tenant) }
    }

    /// Monotonic nanoseconds.
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
