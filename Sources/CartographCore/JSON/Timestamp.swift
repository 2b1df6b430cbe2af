// The one date rendering of the API: `YYYY-MM-DDTHH:MM:SS.sssZ` (DESIGN §10).
public import Foundation

/// Renders instants as ISO 8601 UTC with milliseconds.
public enum Timestamp {
    public static func render(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }
}
