// The one date rendering of the API: `YYYY-MM-DDTHH:MM:SS.sssZ` (docs/api.md#json).
public import Foundation

/// Renders instants as ISO 8601 UTC with milliseconds.
public enum Timestamp {
    /// Exact to the millisecond, without Foundation's formatters (this runs on hot request paths).
    public static func render(_ date: Date) -> String {
        ISO8601Instant.render(milliseconds: date.millisecondsSince1970)
    }
}
