// The server's one wall clock (issue 31). Every time it stores or answers — a payload's
// `@metadata.receivedAt`, change-feed tombstones, Idempotency-Key and snapshot-session expiry, tenants'
// and keys' `createdAt`, a storage fault's `since` — is read from the clock it was given, so a test can
// fix time or move it past a lifetime without sleeping. Durations (deadlines, rate limits, idle stores)
// are measured on the monotonic clock instead, which a change of the time of day does not move.
public import Foundation

/// Where the time of day comes from.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Date

    /// A clock that reads `read` (a test's fixed or moving time).
    public init(_ read: @escaping @Sendable () -> Date) { self.read = read }

    /// The system's clock.
    public static let system = WallClock { Date() }

    /// The time of day now.
    public func now() -> Date { read() }
}

extension Date {
    /// Whole milliseconds since 1970, as stores keep instants.
    public var millisecondsSince1970: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }
}
