// RFC 6901 JSON Pointers, used by every validation error to say where the problem is.

/// A JSON Pointer such as `/entities/0/attributes/1/type`.
public struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    /// The escaped reference tokens.
    public private(set) var tokens: [String]

    public static let root = JSONPointer(tokens: [])

    public init(tokens: [String] = []) { self.tokens = tokens }

    /// The pointer one level down, at an object member.
    public func appending(_ key: String) -> JSONPointer {
        JSONPointer(tokens: tokens + [key.replacingAll("~", with: "~0").replacingAll("/", with: "~1")])
    }

    /// The pointer one level down, at an array index.
    public func appending(_ index: Int) -> JSONPointer { JSONPointer(tokens: tokens + [String(index)]) }

    public var description: String { tokens.isEmpty ? "" : "/" + tokens.joined(separator: "/") }
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        guard contains(target) else { return self }
        var result = ""
        for character in self { if character == target { result += replacement } else { result.append(character) } }
        return result
    }
}
