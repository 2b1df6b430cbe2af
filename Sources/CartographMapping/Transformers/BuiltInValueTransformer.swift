// The value transformers every model has (docs/mapping.md#built-in), each with its reverse. Forward transforms
// produce what R-P3's coercion then reads exactly: integers and doubles as JSON numbers, decimals as
// numbers with every digit, dates as `YYYY-MM-DDTHH:MM:SS.sssZ`. Reverse transforms read a stored
// value's API JSON form (decimals as strings, dates as ISO 8601) and produce the payload's form.
import CartographCore
import Foundation

/// A built-in value transformer, named as mappings and annotations name it.
enum BuiltInValueTransformer: String, Sendable, CaseIterable {
    case stringToInteger = "StringToInteger"
    case stringToDecimal = "StringToDecimal"
    case stringToDouble = "StringToDouble"
    case stringToBool = "StringToBool"
    case iso8601ToDate = "ISO8601ToDate"
    case unixSecondsToDate = "UnixSecondsToDate"
    case unixMillisecondsToDate = "UnixMillisecondsToDate"
    case stringToURL = "StringToURL"
    case stringToUUID = "StringToUUID"
    case trim = "Trim"
    case lowercase = "Lowercase"
    case uppercase = "Uppercase"
    case jsonString = "JSONString"

    /// The forward transform; never sees null (`JSONValueTransformer` passes it through).
    func transform(_ value: JSONValue) throws(ValueTransformError) -> JSONValue {
        switch self {
        case .stringToInteger: return .number(JSONNumber(try integer(value, accepting: "an integer string")))
        case .stringToDecimal: return .number(JSONNumber(validatedText: try decimalText(value, accepting: "a decimal string")))
        case .stringToDouble: return .number(try double(value, accepting: "a number string"))
        case .stringToBool: return try coerce(value, to: .boolean).jsonValue
        case .iso8601ToDate: return try canonicalDate(value)
        case .unixSecondsToDate: return try date(fromUnix: value, scale: 3)
        case .unixMillisecondsToDate: return try date(fromUnix: value, scale: 0)
        case .stringToURL: return try coerce(value, to: .uri).jsonValue
        case .stringToUUID: return try coerce(value, to: .uuid).jsonValue
        case .trim: return .string(try string(value).trimmingCharacters(in: .whitespacesAndNewlines))
        case .lowercase: return .string(try string(value).lowercased())
        case .uppercase: return .string(try string(value).uppercased())
        case .jsonString:
            // A value that is already structured has nothing to parse.
            guard case .string(let text) = value else { return value }
            do {
                return try JSONReader().parse(Array(text.utf8))
            } catch {
                throw failure("the string is not JSON: \(error.message) at byte \(error.offset)")
            }
        }
    }

    /// The reverse transform, from a stored value's API JSON form; never sees null.
    func reverseTransform(_ value: JSONValue) throws(ValueTransformError) -> JSONValue {
        switch self {
        case .stringToInteger:
            guard case .number = value else { throw failure("expected an integer, got \(value.kindName)") }
            return .string(String(try integer(value, accepting: "an integer")))
        case .stringToDecimal: return .string(try decimalText(value, accepting: "a decimal"))
        case .stringToDouble:
            guard case .number = value else { throw failure("expected a number, got \(value.kindName)") }
            return .string(try double(value, accepting: "a number").text)
        case .stringToBool:
            guard case .bool(let flag) = value else { throw failure("expected a boolean, got \(value.kindName)") }
            return .string(flag ? "true" : "false")
        case .iso8601ToDate: return try canonicalDate(value)
        case .unixSecondsToDate: return .number(JSONNumber(validatedText: Self.secondsText(milliseconds: try milliseconds(value))))
        case .unixMillisecondsToDate: return .number(JSONNumber(try milliseconds(value)))
        case .stringToURL: return try coerce(value, to: .uri).jsonValue
        case .stringToUUID: return try coerce(value, to: .uuid).jsonValue
        // Trimming and case changes lose what they change: their reverse is the identity.
        case .trim, .lowercase, .uppercase: return value
        case .jsonString: return .string(value.jsonText)
        }
    }

    private func failure(_ message: String) -> ValueTransformError { ValueTransformError(transformer: rawValue, message: message) }

    private func string(_ value: JSONValue) throws(ValueTransformError) -> String {
        guard case .string(let text) = value else { throw failure("expected a string, got \(value.kindName)") }
        return text
    }

    /// The exact number in a numeric string or a JSON number (strict: no spaces, no `12x`).
    private func numberText(_ value: JSONValue, accepting expected: String) throws(ValueTransformError) -> NumberText {
        let text: String
        switch value {
        case .string(let string): text = string
        case .number(let number): text = number.text
        default: throw failure("expected \(expected), got \(value.kindName)")
        }
        guard let number = NumberText(text) else { throw failure("\(described(value)) is not a number") }
        return number
    }

    private func integer(_ value: JSONValue, accepting expected: String) throws(ValueTransformError) -> Int64 {
        let number = try numberText(value, accepting: expected)
        guard number.isIntegral else { throw failure("\(described(value)) is not an integer") }
        guard let integer = number.int64Value else { throw failure("\(described(value)) is out of range for a 64-bit integer") }
        return integer
    }

    /// The canonical text of an exact decimal (at most 38 significant digits).
    private func decimalText(_ value: JSONValue, accepting expected: String) throws(ValueTransformError) -> String {
        guard let decimal = try numberText(value, accepting: expected).decimalValue else {
            throw failure("\(described(value)) has more than \(NumberText.maximumDecimalDigits) significant digits or is out of range")
        }
        return decimal.canonicalText
    }

    private func double(_ value: JSONValue, accepting expected: String) throws(ValueTransformError) -> JSONNumber {
        guard let double = try numberText(value, accepting: expected).doubleValue, let json = JSONNumber(double) else {
            throw failure("\(described(value)) is out of range for a double")
        }
        return json
    }

    private func coerce(_ value: JSONValue, to type: AttributeType) throws(ValueTransformError) -> AttributeValue {
        let coerced: AttributeValue?
        do {
            coerced = try AttributeValue.coerce(value, to: type)
        } catch {
            throw failure(error.message)
        }
        // Null never reaches a built-in transformer, so coercion always yields a value.
        guard let coerced else { throw failure("expected a value, got null") }
        return coerced
    }

    private func milliseconds(_ value: JSONValue) throws(ValueTransformError) -> Int64 {
        guard case .string(let text) = value else { throw failure("expected an ISO 8601 date-time string, got \(value.kindName)") }
        guard let milliseconds = ISO8601Instant.milliseconds(from: text) else { throw failure("\(described(value)) is not an ISO 8601 date-time") }
        return milliseconds
    }

    private func canonicalDate(_ value: JSONValue) throws(ValueTransformError) -> JSONValue {
        .string(ISO8601Instant.render(milliseconds: try milliseconds(value)))
    }

    /// The instant a date transformer reads (milliseconds since 1970), for a date attribute: what
    /// `transform` renders as text, which coercion would parse again. Nil for other transformers.
    func instant(_ value: JSONValue) throws(ValueTransformError) -> Int64? {
        switch self {
        case .iso8601ToDate: try milliseconds(value)
        case .unixSecondsToDate: try milliseconds(fromUnix: value, scale: 3)
        case .unixMillisecondsToDate: try milliseconds(fromUnix: value, scale: 0)
        default: nil
        }
    }

    private func date(fromUnix value: JSONValue, scale: Int) throws(ValueTransformError) -> JSONValue {
        .string(ISO8601Instant.render(milliseconds: try milliseconds(fromUnix: value, scale: scale)))
    }

    /// Seconds (`scale` 3) or milliseconds (`scale` 0) since 1970 as a number or numeric string;
    /// finer fractions are floored to the millisecond.
    private func milliseconds(fromUnix value: JSONValue, scale: Int) throws(ValueTransformError) -> Int64 {
        let number = try numberText(value, accepting: scale == 3 ? "seconds since 1970" : "milliseconds since 1970")
        guard let milliseconds = number.floorScaled(by: scale) else { throw failure("\(described(value)) is out of range for a date") }
        return milliseconds
    }

    /// Milliseconds as exact seconds: `1500` -> `1.5`, `-1` -> `-0.001`, `2000` -> `2`.
    static func secondsText(milliseconds: Int64) -> String {
        let whole = milliseconds.magnitude / 1_000
        let fraction = milliseconds.magnitude % 1_000
        var text = (milliseconds < 0 ? "-" : "") + String(whole)
        if fraction != 0 {
            let digits = String(fraction)
            let padded = String(repeating: "0", count: 3 - digits.count) + digits
            text += "." + String(padded.reversed().drop(while: { $0 == "0" }).reversed())
        }
        return text
    }
}
