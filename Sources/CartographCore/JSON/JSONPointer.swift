// RFC 6901 JSON Pointers, used by every validation error to say where the problem is.

/// A JSON Pointer such as `/entities/0/attributes/1/type`.
public struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    /// The escaped reference tokens.
    public private(set) var tokens: [String]

    public static let root = JSONPointer(tokens: [])

    public init(tokens: [String] = []) { self.tokens = tokens }

    /// The pointer one level down, at an object member.
    public func appending(_ key: String) -> JSONPointer {
        JSONPointer(tokens: tokens + [Self.escape(key)])
    }

    /// `~` as `~0` and `/` as `~1` (RFC 6901), scalar by scalar: as Characters, a `~` or `/` followed by
    /// a combining mark is one Character that equals neither, and stayed unescaped.
    static func escape(_ key: String) -> String {
        guard key.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return key }
        var escaped = String.UnicodeScalarView()
        for scalar in key.unicodeScalars {
            switch scalar {
            case "~": escaped.append(contentsOf: "~0".unicodeScalars)
            case "/": escaped.append(contentsOf: "~1".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    /// The pointer one level down, at an array index.
    public func appending(_ index: Int) -> JSONPointer { JSONPointer(tokens: tokens + [String(index)]) }

    public var description: String { tokens.isEmpty ? "" : "/" + tokens.joined(separator: "/") }
}
