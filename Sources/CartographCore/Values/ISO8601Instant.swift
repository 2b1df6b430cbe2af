// ISO 8601 date-times <-> instants as milliseconds since 1970 UTC, exact and calendar-free
// (proleptic Gregorian), so that mapping, predicates and rendering agree to the millisecond.

/// Reads and writes ISO 8601 date-times as milliseconds since 1970-01-01T00:00:00Z.
public enum ISO8601Instant {
    /// Reads `YYYY-MM-DDTHH:MM[:SS[.fraction]](Z|±HH:MM|±HHMM)` or a bare `YYYY-MM-DD` (midnight UTC).
    /// Fractions finer than a millisecond are truncated toward the past. Nil for anything else.
    public static func milliseconds(from text: String) -> Int64? {
        var reader = DigitReader(Array(text.utf8))
        guard let year = reader.number(digits: 4), reader.take("-"),
            let month = reader.number(digits: 2), reader.take("-"),
            let day = reader.number(digits: 2)
        else { return nil }
        guard (1...12).contains(month), (1...daysInMonth(year: year, month: month)).contains(day) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        if reader.isAtEnd { return days * 86_400_000 }
        guard reader.take("T") || reader.take("t"),
            let hour = reader.number(digits: 2), reader.take(":"),
            let minute = reader.number(digits: 2)
        else { return nil }
        // Seconds are optional in ISO 8601 (`2011-08-09T00:00Z`, as RestKit reads it).
        var second: Int64 = 0
        if reader.take(":") {
            guard let seconds = reader.number(digits: 2) else { return nil }
            second = seconds
        }
        guard hour < 24, minute < 60, second < 60 else { return nil }
        var millisecond: Int64 = 0
        if reader.take(".") {
            let fraction = reader.digitRun()
            guard !fraction.isEmpty else { return nil }
            for (index, digit) in fraction.prefix(3).enumerated() {
                millisecond += Int64(digit - 0x30) * [100, 10, 1][index]
            }
        }
        var offsetMinutes: Int64 = 0
        if reader.take("Z") || reader.take("z") {
            offsetMinutes = 0
        } else if let sign = reader.takeSign() {
            guard let offsetHours = reader.number(digits: 2) else { return nil }
            _ = reader.take(":")
            guard let offsetMins = reader.number(digits: 2), offsetHours < 24, offsetMins < 60 else { return nil }
            offsetMinutes = sign * (offsetHours * 60 + offsetMins)
        } else {
            return nil
        }
        guard reader.isAtEnd else { return nil }
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offsetMinutes * 60
        return seconds * 1_000 + millisecond
    }

    /// The instants of years 0…9999: those `render` writes in the form `milliseconds(from:)` reads.
    public static let fourDigitYears: Range<Int64> = -62_167_219_200_000..<253_402_300_800_000

    /// Renders `YYYY-MM-DDTHH:MM:SS.sssZ` (docs/api.md#json); years outside 0…9999 get a sign and
    /// as many digits as they need.
    public static func render(milliseconds: Int64) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(24)
        write(milliseconds: milliseconds, into: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends what `render` returns to `out`: a page renders its dates into its response without a
    /// String each (24 bytes, so each was a heap allocation).
    public static func write(milliseconds: Int64, into out: inout [UInt8]) {
        let (days, millisecondOfDay) = milliseconds.quotientAndFlooredRemainder(dividingBy: 86_400_000)
        let (year, month, day) = civilFromDays(days)
        let hour = millisecondOfDay / 3_600_000
        let minute = millisecondOfDay / 60_000 % 60
        let second = millisecondOfDay / 1_000 % 60
        let millisecond = millisecondOfDay % 1_000
        guard (0...9999).contains(year) else {
            let yearText = (year < 0 ? "-" : "+") + pad(abs(year), 6)
            out.append(contentsOf: "\(yearText)-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(millisecond, 3))Z".utf8)
            return
        }
        // Digits written in place: a page of 50 articles renders 100 dates, and building each from seven
        // padded strings was 4% of such a list's CPU.
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: 24))
        out.withUnsafeMutableBufferPointer { buffer in
            let text = UnsafeMutableBufferPointer(rebasing: buffer[start...])
            func put(_ value: Int64, width: Int, at start: Int) {
                var rest = value
                for index in stride(from: start + width - 1, through: start, by: -1) {
                    text[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
            }
            put(year, width: 4, at: 0)
            put(month, width: 2, at: 5)
            put(day, width: 2, at: 8)
            put(hour, width: 2, at: 11)
            put(minute, width: 2, at: 14)
            put(second, width: 2, at: 17)
            put(millisecond, width: 3, at: 20)
            (text[4], text[7], text[10], text[13], text[16], text[19], text[23]) =
                (UInt8(ascii: "-"), UInt8(ascii: "-"), UInt8(ascii: "T"), UInt8(ascii: ":"), UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "Z"))
        }
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    private static func isLeapYear(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civilFromDays(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int64 {
    /// Floored division: the remainder is never negative.
    fileprivate func quotientAndFlooredRemainder(dividingBy divisor: Int64) -> (Int64, Int64) {
        let (q, r) = quotientAndRemainder(dividingBy: divisor)
        return r < 0 ? (q - 1, r + divisor) : (q, r)
    }
}

/// A cursor over ASCII bytes for the fixed-width fields of ISO 8601.
private struct DigitReader {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position == bytes.count }

    mutating func take(_ character: Unicode.Scalar) -> Bool {
        guard position < bytes.count, bytes[position] == UInt8(character.value) else { return false }
        position += 1
        return true
    }

    /// `+` -> 1, `-` -> -1, anything else -> nil (nothing consumed).
    mutating func takeSign() -> Int64? {
        if take("+") { return 1 }
        if take("-") { return -1 }
        return nil
    }

    mutating func number(digits count: Int) -> Int64? {
        guard position + count <= bytes.count else { return nil }
        var value: Int64 = 0
        for byte in bytes[position..<position + count] {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int64(byte - 0x30)
        }
        position += count
        return value
    }

    mutating func digitRun() -> ArraySlice<UInt8> {
        let start = position
        while position < bytes.count, bytes[position] >= 0x30, bytes[position] <= 0x39 { position += 1 }
        return bytes[start..<position]
    }
}
