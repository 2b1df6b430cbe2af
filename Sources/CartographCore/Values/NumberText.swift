// Exact reading of number text ("12", "-0.50", "1.5e3", "007") for R-P3's strict coercions:
// integers must be integral and in range, decimals keep every digit, nothing is read leniently.
public import Foundation

/// A number written in decimal notation, split into sign, significant digits and a power of ten.
public struct NumberText: Sendable, Equatable {
    /// True for a negative, non-zero value.
    public let isNegative: Bool
    /// The significant digits without leading or trailing zeros (empty for zero), ASCII.
    public let digits: [UInt8]
    /// The value is `digits × 10^exponent`.
    public let exponent: Int

    /// The most significant digits a `Decimal` holds exactly.
    public static let maximumDecimalDigits = 38
    /// Exponents beyond this are out of range for every numeric type (and keep arithmetic small).
    private static let exponentLimit = 10_000

    /// Reads `[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?`; nil for anything else, whitespace included.
    public init?(_ text: some StringProtocol) {
        var bytes = Array(text.utf8)[...]
        var negative = false
        if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        let integerPart = bytes.prefix { $0 >= 0x30 && $0 <= 0x39 }
        guard !integerPart.isEmpty else { return nil }
        bytes = bytes.dropFirst(integerPart.count)
        var fractionPart: ArraySlice<UInt8> = []
        if bytes.first == UInt8(ascii: ".") {
            fractionPart = bytes.dropFirst().prefix { $0 >= 0x30 && $0 <= 0x39 }
            guard !fractionPart.isEmpty else { return nil }
            bytes = bytes.dropFirst(1 + fractionPart.count)
        }
        var writtenExponent = 0
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            var exponentNegative = false
            if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
                exponentNegative = sign == UInt8(ascii: "-")
                bytes = bytes.dropFirst()
            }
            let exponentDigits = bytes.prefix { $0 >= 0x30 && $0 <= 0x39 }
            guard !exponentDigits.isEmpty else { return nil }
            bytes = bytes.dropFirst(exponentDigits.count)
            for digit in exponentDigits.drop(while: { $0 == 0x30 }) {
                writtenExponent = writtenExponent * 10 + Int(digit - 0x30)
                // Saturate: anything this large is out of range for every type anyway.
                if writtenExponent > Self.exponentLimit * 10 { break }
            }
            if exponentNegative { writtenExponent = -writtenExponent }
        }
        guard bytes.isEmpty else { return nil }
        var all = Array(integerPart) + fractionPart
        var exponent = writtenExponent - fractionPart.count
        let leadingZeros = all.prefix { $0 == 0x30 }.count
        all.removeFirst(leadingZeros)
        while all.last == 0x30 {
            all.removeLast()
            exponent += 1
        }
        if all.isEmpty { exponent = 0 }
        self.isNegative = negative && !all.isEmpty
        self.digits = all
        self.exponent = exponent
    }

    /// True when the value is zero.
    public var isZero: Bool { digits.isEmpty }

    /// True when the value has no fractional part.
    public var isIntegral: Bool { exponent >= 0 }

    /// The value as a 64-bit integer when it is integral and in range; nil otherwise.
    public var int64Value: Int64? {
        guard isIntegral else { return nil }
        guard digits.count + exponent <= 19 else { return nil }
        // Accumulate negatively so that Int64.min is reachable.
        var value: Int64 = 0
        for digit in digits + [UInt8](repeating: 0x30, count: exponent) {
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = shifted.subtractingReportingOverflow(Int64(digit - 0x30))
            if overflow1 || overflow2 { return nil }
            value = next
        }
        if isNegative { return value }
        return value == Int64.min ? nil : -value
    }

    /// The value as an exact `Decimal`; nil when it has more than 38 significant digits or its
    /// exponent is outside `Decimal`'s range.
    public var decimalValue: Decimal? {
        guard !isZero else { return Decimal(0) }
        guard digits.count <= Self.maximumDecimalDigits, (-128...127).contains(exponent) else { return nil }
        guard let significand = Decimal(string: String(decoding: digits, as: UTF8.self)) else { return nil }
        return Decimal(sign: isNegative ? .minus : .plus, exponent: exponent, significand: significand)
    }

    /// The nearest double; nil when the value overflows to infinity.
    public var doubleValue: Double? {
        guard !isZero else { return 0 }
        guard exponent + digits.count < Self.exponentLimit else { return nil }
        // Swift's parser rounds correctly; very small values underflow to zero as they should.
        let text = (isNegative ? "-" : "") + String(decoding: digits, as: UTF8.self) + "e\(max(exponent, -Self.exponentLimit))"
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// `floor(value × 10^shift)` as an Int64, nil when out of range (used for seconds -> milliseconds).
    public func floorScaled(by shift: Int) -> Int64? {
        let scaledExponent = exponent + shift
        if scaledExponent >= 0 {
            let scaled = NumberText(isNegative: isNegative, digits: digits, exponent: scaledExponent)
            return scaled.int64Value
        }
        let kept = max(0, digits.count + scaledExponent)
        let integral = NumberText(isNegative: isNegative, digits: Array(digits.prefix(kept)), exponent: 0)
        guard let truncated = integral.int64Value else { return nil }
        // Truncation moved a negative value up: floor needs one more step down.
        return isNegative ? truncated.subtractingReportingOverflow(1).overflow ? nil : truncated - 1 : truncated
    }

    private init(isNegative: Bool, digits: [UInt8], exponent: Int) {
        var digits = digits
        var exponent = exponent
        while digits.last == 0x30 {
            digits.removeLast()
            exponent += 1
        }
        let leadingZeros = digits.prefix { $0 == 0x30 }.count
        digits.removeFirst(leadingZeros)
        self.isNegative = isNegative && !digits.isEmpty
        self.digits = digits
        self.exponent = digits.isEmpty ? 0 : exponent
    }
}
