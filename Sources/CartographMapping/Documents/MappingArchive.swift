// A mapping's raw archive (R-P18, docs/mapping.md "Archive, replay and dead letters"): a mapping bug found
// weeks later is fixed by mapping the payloads again through the fixed mapping, not by fetching everything
// again from a rate-limited API. The store keeps the bodies; this is only how long.

/// `"archive": {"days": 30}`: every committed payload's body, and the invalid objects it discarded, are
/// kept this many days after they arrived.
public struct MappingArchive: Sendable, Equatable {
    /// Whole days, within `allowedDays`.
    public var days: Int

    /// One day to ten years: a longer archive is a backup, which the store's file already is.
    public static let allowedDays = 1...3650

    public init(days: Int) {
        self.days = days
    }

    /// How long an archived body is kept, in milliseconds.
    public var lifetimeMilliseconds: Int64 { Int64(days) * 24 * 60 * 60 * 1000 }
}
