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

    /// The value `pointer` (RFC 6901 text, such as `/items/3`) names in `document`; nil when it names
    /// nothing there or is not a pointer. R-P18 finds a discarded object's representation with it.
    public static func resolve(_ pointer: String, in document: JSONValue) -> JSONValue? {
        guard !pointer.isEmpty else { return document }
        guard pointer.hasPrefix("/") else { return nil }
        var value = document
        for escaped in pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let token = unescape(escaped)
            switch value {
            case .object(let object):
                guard let member = object[token] else { return nil }
                value = member
            case .array(let array):
                guard let index = Int(token), array.indices.contains(index), String(index) == token else { return nil }
                value = array[index]
            case .string, .number, .bool, .null:
                return nil
            }
        }
        return value
    }

    /// `~1` as `/` and `~0` as `~` (RFC 6901: in that order, so `~01` is `~1`).
    static func unescape(_ token: Substring) -> String {
        guard token.utf8.contains(UInt8(ascii: "~")) else { return String(token) }
        var unescaped = String.UnicodeScalarView()
        var scalars = token.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            guard scalar == "~" else { unescaped.append(scalar); continue }
            switch scalars.next() {
            case "0": unescaped.append("~")
            case "1": unescaped.append("/")
            case let other?: unescaped.append(scalar); unescaped.append(other)
            case nil: unescaped.append(scalar)
            }
        }
        return String(unescaped)
    }
}
