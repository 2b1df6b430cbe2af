// The JSON value model shared by every layer. Numbers keep their source text so that a
// decimal sent as a JSON number keeps every digit until its target type is known (docs/api.md#json).

/// A JSON number exactly as written in the document (`-12.50e3`), validated against RFC 8259.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number's text, as it appeared in the source or as produced by an initializer.
    public let text: String

    /// Wraps text that is already known to be a valid JSON number.
    public init(validatedText text: String) { self.text = text }

    public init(_ value: Int64) { self.text = String(value) }
    public init(_ value: Int) { self.text = String(value) }

    /// A finite double rendered in its shortest round-tripping form; nil for NaN or infinity.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        if value == value.rounded(), abs(value) < 1e15 { self.text = String(Int64(value)) } else { self.text = "\(value)" }
    }

    /// True when the text has no fraction and no exponent.
    public var isInteger: Bool { !text.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") } }

    /// The value as a 64-bit integer when it is an integer in range (`1e3` and `2.0` are not).
    public var int64Value: Int64? { Int64(text) }

    /// The value as the nearest double.
    public var doubleValue: Double? { Double(text) }

    public var description: String { text }
}

/// An object's members in document order. Lookups scan from the end, so a repeated key
/// resolves to its last occurrence, as JavaScript and JSONSerialization do.
public struct JSONObject: Sendable, Hashable, Sequence {
    public private(set) var keys: [String]
    public private(set) var values: [JSONValue]

    public init() { keys = []; values = [] }

    public init(_ members: [(String, JSONValue)]) {
        keys = members.map(\.0)
        values = members.map(\.1)
    }

    /// Members as parallel arrays of equal length, taken as they are (the reader's fast path).
    init(keys: [String], values: [JSONValue]) {
        self.keys = keys
        self.values = values
    }

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    public subscript(key: String) -> JSONValue? {
        get {
            guard let index = keys.lastIndex(of: key) else { return nil }
            return values[index]
        }
        set {
            if let index = keys.lastIndex(of: key) {
                if let newValue { values[index] = newValue } else { keys.remove(at: index); values.remove(at: index) }
            } else if let newValue {
                keys.append(key); values.append(newValue)
            }
        }
    }

    /// Appends a member without looking for an existing one (the reader's fast path).
    public mutating func append(_ key: String, _ value: JSONValue) {
        keys.append(key); values.append(value)
    }

    public func makeIterator() -> some IteratorProtocol<(key: String, value: JSONValue)> {
        zip(keys, values).lazy.map { (key: $0.0, value: $0.1) }.makeIterator()
    }
}

/// A parsed JSON document or fragment.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public var objectValue: JSONObject? { if case .object(let o) = self { o } else { nil } }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var numberValue: JSONNumber? { if case .number(let n) = self { n } else { nil } }
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// Member lookup on an object; nil for other kinds and missing keys.
    public subscript(key: String) -> JSONValue? { objectValue?[key] }

    /// The JSON type name used in error messages ("object", "array", "string", ...).
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
    public init(nilLiteral: ()) { self = .null }
}
