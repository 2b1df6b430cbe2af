// The limits in force for a tenant (R-S2): its overrides over the server's defaults, their JSON for
// the control plane, and the PATCH document that changes them.
import CartographCore
import CartographStore

/// A token bucket's parameters: `requestsPerSecond` refill, `burst` tokens at most.
struct RatePolicy: Sendable, Equatable {
    var requestsPerSecond: Double
    var burst: Int
}

/// The limits that apply to one tenant now; nil = no limit.
struct EffectiveLimits: Sendable, Equatable {
    var rate: RatePolicy?
    var maxStoreBytes: Int64?
    var maxModels: Int?

    var json: JSONValue {
        ["requestsPerSecond": rate.flatMap { JSONNumber($0.requestsPerSecond) }.map(JSONValue.number) ?? .null,
         "burst": rate.map { .number(JSONNumber($0.burst)) } ?? .null,
         "maxStoreBytes": maxStoreBytes.map { .number(JSONNumber($0)) } ?? .null,
         "maxModels": maxModels.map { .number(JSONNumber($0)) } ?? .null]
    }
}

extension ServerConfiguration {
    /// A tenant's overrides over the server's defaults (0 = no limit, either way). The burst, when
    /// the tenant has none of its own, is the server's — unless the tenant has its own rate: then one
    /// second's worth of that rate, so that `{"requestsPerSecond": 1}` means about one a second.
    func effectiveLimits(_ limits: TenantLimits) -> EffectiveLimits {
        let rate = limits.requestsPerSecond ?? tenantRateLimit
        var policy: RatePolicy?
        if rate > 0 {
            let inherited = limits.requestsPerSecond == nil && tenantRateBurst > 0 ? tenantRateBurst : nil
            policy = RatePolicy(requestsPerSecond: rate, burst: max(1, limits.burst ?? inherited ?? Int(rate.rounded(.up))))
        }
        let bytes = limits.maxStoreBytes ?? tenantMaxStoreBytes
        let models = limits.maxModels ?? tenantMaxModels
        return EffectiveLimits(rate: policy, maxStoreBytes: bytes > 0 ? bytes : nil, maxModels: models > 0 ? models : nil)
    }
}

extension TenantLimits {
    /// The overrides as set: null = the server's default, 0 = no limit.
    var json: JSONValue {
        ["requestsPerSecond": requestsPerSecond.flatMap { JSONNumber($0) }.map(JSONValue.number) ?? .null,
         "burst": burst.map { .number(JSONNumber($0)) } ?? .null,
         "maxStoreBytes": maxStoreBytes.map { .number(JSONNumber($0)) } ?? .null,
         "maxModels": maxModels.map { .number(JSONNumber($0)) } ?? .null]
    }

    /// Bounds on what the admin may set; generous, but they keep the arithmetic finite.
    static let maxRequestsPerSecond = 1_000_000.0, maxBurst = 1_000_000_000, maxModelsBound = 1_000_000
    static let maxStoreBytesBound: Int64 = 1 << 50

    /// `current` with the PATCH body `{"limits": {...}}` applied, merge-patch style: a member that is
    /// present replaces the override, `null` returns it to the server's default, an absent one is kept;
    /// `"limits": null` returns every limit to the default. Every bad value is a 422 entry with its pointer.
    static func patched(_ current: TenantLimits, with body: JSONValue) throws(CartographError) -> TenantLimits {
        guard case .object(let document) = body else {
            throw CartographError(.unprocessable, "The body must be an object like {\"limits\": {\"requestsPerSecond\": 50}}.",
                                  errors: [.init(pointer: "", message: "expected an object, found \(body.kindName)")])
        }
        var limits = current
        var problems: [CartographError.Detail] = []
        for (key, value) in document {
            let pointer = JSONPointer.root.appending(key)
            guard key == "limits" else {
                problems.append(.init(pointer: pointer.description, message: "unknown or read-only field; only 'limits' can be changed"))
                continue
            }
            switch value {
            case .null:
                limits = TenantLimits()
            case .object(let members):
                for (name, value) in members {
                    limits.apply(name, value, at: pointer.appending(name).description, problems: &problems)
                }
            default:
                problems.append(.init(pointer: pointer.description, message: "expected an object or null, found \(value.kindName)"))
            }
        }
        guard problems.isEmpty else {
            throw CartographError(.unprocessable, "The tenant's limits are not valid; nothing was changed.", errors: problems)
        }
        return limits
    }

    private mutating func apply(_ name: String, _ value: JSONValue, at pointer: String, problems: inout [CartographError.Detail]) {
        func integer(_ range: ClosedRange<Int64>, _ what: String) -> Int64? {
            guard let number = value.numberValue, number.isInteger, let integer = number.int64Value, range.contains(integer) else {
                problems.append(.init(pointer: pointer, message: "expected null or \(what), found \(Self.describe(value))"))
                return nil
            }
            return integer
        }
        switch name {
        case "requestsPerSecond":
            if value.isNull { requestsPerSecond = nil; return }
            guard let rate = value.numberValue?.doubleValue, rate.isFinite, (0...Self.maxRequestsPerSecond).contains(rate) else {
                problems.append(.init(pointer: pointer, message: "expected null or a number from 0 (no limit) to 1000000, found \(Self.describe(value))"))
                return
            }
            requestsPerSecond = rate
        case "burst":
            if value.isNull { burst = nil; return }
            if let burst = integer(1...Int64(Self.maxBurst), "an integer from 1 to \(Self.maxBurst)") { self.burst = Int(burst) }
        case "maxStoreBytes":
            if value.isNull { maxStoreBytes = nil; return }
            if let bytes = integer(0...Self.maxStoreBytesBound, "an integer from 0 (no limit) to \(Self.maxStoreBytesBound)") { maxStoreBytes = bytes }
        case "maxModels":
            if value.isNull { maxModels = nil; return }
            if let models = integer(0...Int64(Self.maxModelsBound), "an integer from 0 (no limit) to \(Self.maxModelsBound)") { maxModels = Int(models) }
        default:
            problems.append(.init(pointer: pointer, message: "unknown limit; expected requestsPerSecond, burst, maxStoreBytes or maxModels"))
        }
    }

    private static func describe(_ value: JSONValue) -> String {
        if case .number(let number) = value { return number.text }
        return value.kindName
    }
}
