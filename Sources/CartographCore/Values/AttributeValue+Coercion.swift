// R-P3: a JSON value coerced to an attribute type, strictly ("12x" is not an integer, 70000 is not
// an integer16), with a message a user can act on when it cannot be.
import Foundation

/// A JSON value that cannot become a value of the attribute's type.
public struct ValueCoercionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The type the value was coerced to.
    public let type: AttributeType
    /// What is wrong, for a person (`"12x" is not an integer`).
    public let message: String

    public init(type: AttributeType, message: String) {
        self.type = type
        self.message = message
    }

    public var description: String { message }
}

extension AttributeValue {
    /// Coerces `value` to `type` by R-P3's rules; nil for JSON null.
    ///
    /// - integers: integral numbers or numeric strings in the type's range; booleans as 0/1.
    /// - decimal: numbers (their exact text) or numeric strings, at most 38 significant digits.
    /// - double/float: numbers, numeric strings, booleans; finite and in range.
    /// - string: strings, numbers (their text) and booleans (`true`/`false`).
    /// - boolean: booleans, numbers (0 is false, anything else true), and the strings
    ///   `true`/`false`/`yes`/`no`/`1`/`0` in any case.
    /// - date: ISO 8601 strings (fractional seconds optional, `Z` or an offset) and numbers of
    ///   seconds since 1970.
    /// - uuid/uri: validated strings; binary: base64 strings; transformable: any JSON value.
    public static func coerce(_ value: JSONValue, to type: AttributeType) throws(ValueCoercionError) -> AttributeValue? {
        if case .null = value { return nil }
        let fail = { (reason: String) in ValueCoercionError(type: type, message: reason) }
        switch type {
        case .integer16, .integer32, .integer64:
            let number: NumberText
            switch value {
            case .bool(let flag): return .integer(flag ? 1 : 0)
            case .number(let json):
                // Most integers are written as plain digits, which Int64 reads as they are (a fraction or an
                // exponent, `1.0` or `1e3`, goes the way of every other number text).
                if let integer = Int64(json.text), let range = type.integerRange, range.contains(integer) { return .integer(integer) }
                number = try numberText(json.text, type: type)
            case .string(let text): number = try numberText(text, type: type)
            default: throw fail("expected an integer, got \(value.kindName)")
            }
            guard number.isIntegral else { throw fail("\(describe(value)) is not an integer") }
            guard let integer = number.int64Value, let range = type.integerRange, range.contains(integer) else {
                throw fail("\(describe(value)) is out of range for \(type)")
            }
            return .integer(integer)
        case .decimal:
            let number: NumberText
            switch value {
            case .bool(let flag): return .decimal(flag ? 1 : 0)
            case .number(let json): number = try numberText(json.text, type: type)
            case .string(let text): number = try numberText(text, type: type)
            default: throw fail("expected a decimal, got \(value.kindName)")
            }
            guard let decimal = number.decimalValue else {
                throw fail("\(describe(value)) has more than \(NumberText.maximumDecimalDigits) significant digits or is out of range")
            }
            return .decimal(decimal)
        case .double, .float:
            let number: NumberText
            switch value {
            case .bool(let flag): return .double(flag ? 1 : 0)
            case .number(let json): number = try numberText(json.text, type: type)
            case .string(let text): number = try numberText(text, type: type)
            default: throw fail("expected a number, got \(value.kindName)")
            }
            guard let double = number.doubleValue,
                type == .double || abs(double) <= Double(Float.greatestFiniteMagnitude)
            else { throw fail("\(describe(value)) is out of range for \(type)") }
            return .double(double)
        case .string:
            switch value {
            case .string(let text): return .string(text)
            case .number(let json): return .string(json.text)
            case .bool(let flag): return .string(flag ? "true" : "false")
            default: throw fail("expected a string, got \(value.kindName)")
            }
        case .boolean:
            switch value {
            case .bool(let flag): return .boolean(flag)
            case .number(let json):
                guard let number = NumberText(json.text) else { throw fail("\(json.text) is not a number") }
                return .boolean(!number.isZero)
            case .string(let text):
                switch text.lowercased() {
                case "true", "yes", "1": return .boolean(true)
                case "false", "no", "0": return .boolean(false)
                default: throw fail("\(describe(value)) is not a boolean (true, false, yes, no, 1 or 0)")
                }
            default: throw fail("expected a boolean, got \(value.kindName)")
            }
        case .date:
            switch value {
            case .string(let text):
                guard let milliseconds = ISO8601Instant.milliseconds(from: text) else {
                    throw fail("\(describe(value)) is not an ISO 8601 date-time")
                }
                return .date(millisecondsSince1970: milliseconds)
            case .number(let json):
                guard let seconds = NumberText(json.text), let milliseconds = seconds.floorScaled(by: 3) else {
                    throw fail("\(json.text) is out of range for a date")
                }
                return .date(millisecondsSince1970: milliseconds)
            default: throw fail("expected an ISO 8601 string or seconds since 1970, got \(value.kindName)")
            }
        case .binary:
            guard case .string(let text) = value else { throw fail("expected a base64 string, got \(value.kindName)") }
            guard let data = Data(base64Encoded: text) else { throw fail("the string is not valid base64") }
            return .binary(Array(data))
        case .uuid:
            guard case .string(let text) = value else { throw fail("expected a UUID string, got \(value.kindName)") }
            guard let uuid = UUID(uuidString: text) else { throw fail("\(describe(value)) is not a UUID") }
            return .uuid(uuid.uuidString.lowercased())
        case .uri:
            guard case .string(let text) = value else { throw fail("expected a URI string, got \(value.kindName)") }
            guard !text.isEmpty, URL(string: text) != nil else { throw fail("\(describe(value)) is not a URI") }
            return .uri(text)
        case .transformable:
            return .json(value)
        }
    }

    private static func numberText(_ text: String, type: AttributeType) throws(ValueCoercionError) -> NumberText {
        guard let number = NumberText(text) else {
            throw ValueCoercionError(type: type, message: "\(describe(.string(text))) is not a number")
        }
        return number
    }

    /// A value quoted for a message, shortened so that a huge payload string stays readable.
    private static func describe(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): "\"\(text.count > 64 ? text.prefix(61) + "..." : Substring(text))\""
        case .number(let json): json.text
        default: value.kindName
        }
    }
}
