// The attribute types of a model (R-M1), with the canonical names of model documents and the
// Core Data names that `contents` files and older documents use.

/// The type of an attribute (R-M1).
public enum AttributeType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case integer16, integer32, integer64, decimal, double, float, string, boolean, date, binary, uuid, uri, transformable

    /// Parses a canonical name (`integer64`) or a Core Data name (`Integer 64`); nil for anything else.
    public init?(parsing name: String) {
        if let canonical = AttributeType(rawValue: name) {
            self = canonical
            return
        }
        switch name {
        case "Integer 16": self = .integer16
        case "Integer 32": self = .integer32
        case "Integer 64": self = .integer64
        case "Decimal": self = .decimal
        case "Double": self = .double
        case "Float": self = .float
        case "String": self = .string
        case "Boolean": self = .boolean
        case "Date": self = .date
        case "Binary": self = .binary
        case "UUID": self = .uuid
        case "URI": self = .uri
        case "Transformable": self = .transformable
        default: return nil
        }
    }

    /// The canonical name, as the normalized model writes it.
    public var description: String { rawValue }

    /// The name with its indefinite article, for messages: `an integer64`, `a string`.
    public var withArticle: String {
        switch self {
        case .integer16, .integer32, .integer64: "an \(rawValue)"
        case .decimal, .double, .float, .string, .boolean, .date, .binary, .uuid, .uri, .transformable: "a \(rawValue)"
        }
    }

    /// True for the three integer widths.
    public var isInteger: Bool { self == .integer16 || self == .integer32 || self == .integer64 }

    /// True for every type whose values are numbers (integers, decimal, double, float).
    public var isNumeric: Bool { isInteger || self == .decimal || self == .double || self == .float }

    /// The inclusive range of an integer type; nil for the other types.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        case .integer64: Int64.min...Int64.max
        case .decimal, .double, .float, .string, .boolean, .date, .binary, .uuid, .uri, .transformable: nil
        }
    }
}
