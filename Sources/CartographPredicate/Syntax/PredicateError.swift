// The one error of the predicate language: where (a Character offset) and what. The HTTP layer
// turns it into a 400 problem with `offset` (docs/errors.md).

/// A predicate that cannot be parsed, or that does not fit the model it is checked against.
public struct PredicateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Syntax errors come from the parser, semantic errors from checking against a model or from
    /// compiling to SQL.
    public enum Kind: String, Sendable, Equatable {
        case syntax, semantic
    }

    public let kind: Kind
    /// 0-based offset in Characters of the predicate string where the problem is.
    public let offset: Int
    /// A sentence for a person, including what was expected or which key path is wrong.
    public let message: String
    /// For syntax errors: what the parser expected at `offset` (`"an operator"`).
    public let expected: String?
    /// For semantic errors about a key path: the key path as written (`publisher.nmae`).
    public let keyPath: String?

    public init(kind: Kind, offset: Int, message: String, expected: String? = nil, keyPath: String? = nil) {
        self.kind = kind
        self.offset = offset
        self.message = message
        self.expected = expected
        self.keyPath = keyPath
    }

    static func syntax(at offset: Int, expected: String, found: String) -> PredicateError {
        PredicateError(kind: .syntax, offset: offset, message: "expected \(expected), found \(found)", expected: expected)
    }

    static func semantic(at offset: SourceOffset, _ message: String, keyPath: [String]? = nil) -> PredicateError {
        PredicateError(kind: .semantic, offset: offset.value, message: message, keyPath: keyPath.map { $0.joined(separator: ".") })
    }

    public var description: String { "\(message) (at offset \(offset))" }
}
