// A typed attribute value as the mapping engine, the predicate language and the store see it.
public import Foundation

/// A non-nil value of one of the model's attribute types (nil is `Optional.none` around it).
public enum AttributeValue: Sendable, Hashable {
    /// integer16, integer32 and integer64, range-checked when coerced.
    case integer(Int64)
    /// An exact decimal (up to 38 significant digits).
    case decimal(Decimal)
    /// double and float.
    case double(Double)
    case string(String)
    case boolean(Bool)
    /// An instant as milliseconds since 1970-01-01T00:00:00Z.
    case date(millisecondsSince1970: Int64)
    case binary([UInt8])
    /// A UUID in canonical lowercase form (`0f8fad5b-d9cb-469f-a165-70867728950e`).
    case uuid(String)
    /// A URI as written (validated by coercion).
    case uri(String)
    /// The JSON value of a transformable attribute.
    case json(JSONValue)

    /// The value in its API JSON form: integers and doubles as numbers, decimals as strings with every
    /// digit, dates as `YYYY-MM-DDTHH:MM:SS.sssZ`, binary as base64, transformable as itself.
    public var jsonValue: JSONValue {
        switch self {
        case .integer(let value): .number(JSONNumber(value))
        case .decimal(let value): .string(value.canonicalText)
        case .double(let value): JSONNumber(value).map { .number($0) } ?? .null
        case .string(let value), .uuid(let value), .uri(let value): .string(value)
        case .boolean(let value): .bool(value)
        case .date(let milliseconds): .string(ISO8601Instant.render(milliseconds: milliseconds))
        case .binary(let bytes): .string(Data(bytes).base64EncodedString())
        case .json(let value): value
        }
    }
}

extension Decimal {
    /// Plain notation without trailing zeros (`1.5`, `-0.001`, `1000`): one text per value, the form
    /// the store keeps decimals in.
    public var canonicalText: String { description }
}

extension AttributeValue {
    /// Whether the value already is `type`'s representation, so coercing it (R-P3) would return it unchanged.
    public func fits(_ type: AttributeType) -> Bool {
        switch (self, type) {
        case (.integer, .integer64), (.decimal, .decimal), (.double, .double), (.double, .float), (.string, .string),
             (.boolean, .boolean), (.date, .date), (.binary, .binary), (.uuid, .uuid), (.uri, .uri): true
        case (.integer(let value), .integer32): Int32(exactly: value) != nil
        case (.integer(let value), .integer16): Int16(exactly: value) != nil
        default: false
        }
    }
}
