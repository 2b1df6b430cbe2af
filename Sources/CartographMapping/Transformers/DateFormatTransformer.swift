// A declared `dateFormat` value transformer (docs/mapping.md#declared-in-a-model): dates written with a fixed pattern
// (`dd/MM/yyyy HH:mm`) in a given time zone, read and written with Foundation's DateFormatter in
// the en_US_POSIX locale, so that the pattern means the same on every machine whatever its locale.
import CartographCore
import Foundation
import Synchronization

/// Parses and formats dates with one pattern and time zone.
///
/// A DateFormatter is expensive to make, so each transformer keeps one; it is not documented as
/// safe to share across threads on every platform, so it is used under a lock.
final class DateFormatTransformer: Sendable {
    /// The Unicode date pattern, as declared.
    let format: String
    private let formatter: Mutex<DateFormatter>

    /// Nil when `timeZone` names no time zone Foundation knows (by identifier or abbreviation).
    init?(format: String, timeZone: String) {
        guard let zone = TimeZone(identifier: timeZone) ?? TimeZone(abbreviation: timeZone) else { return nil }
        self.format = format
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = zone
        formatter.dateFormat = format
        formatter.isLenient = false
        self.formatter = Mutex(formatter)
    }

    /// A string in the pattern -> the instant as an ISO 8601 string (to the millisecond).
    func parse(_ value: JSONValue, transformer: String) throws(ValueTransformError) -> JSONValue {
        guard case .string(let text) = value else {
            throw ValueTransformError(transformer: transformer, message: "expected a date string in the format \(quoted(format)), got \(value.kindName)")
        }
        guard let date = formatter.withLock({ $0.date(from: text) }) else {
            throw ValueTransformError(transformer: transformer, message: "\(described(value)) does not match the date format \(quoted(format))")
        }
        // Rounded, not truncated: a Double of seconds holds .123 as .12299999….
        let milliseconds = Int64((date.timeIntervalSince1970 * 1_000).rounded())
        return .string(ISO8601Instant.render(milliseconds: milliseconds))
    }

    /// An ISO 8601 date-time -> a string in the pattern.
    func format(_ value: JSONValue, transformer: String) throws(ValueTransformError) -> JSONValue {
        guard case .string(let text) = value, let milliseconds = ISO8601Instant.milliseconds(from: text) else {
            throw ValueTransformError(transformer: transformer, message: "expected an ISO 8601 date-time, got \(described(value))")
        }
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1_000)
        return .string(formatter.withLock { $0.string(from: date) })
    }
}
