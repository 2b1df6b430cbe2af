// Where a mapped value comes from (R-P1): a dotted key path into the representation, or into the
// enclosing representation (`@parent.`), the whole payload (`@root.`) or the request's metadata
// (`@metadata.`). Paths are split only on `.` (docs/mapping.md#source-key-paths), so `@metadata.header.X-Source` keeps
// its `-`, and a key such as JSON-LD's `@id` is an ordinary key.
import CartographCore

/// A parsed source key path: where it starts and the keys followed from there.
public struct SourceKeyPath: Sendable, Hashable, CustomStringConvertible {
    /// The value a key path starts from.
    public enum Root: String, Sendable, Hashable, CaseIterable {
        /// The representation being mapped (no prefix).
        case representation
        /// The representation that encloses it (`@parent.`).
        case parent = "@parent"
        /// The whole payload (`@root.`).
        case root = "@root"
        /// The request's metadata (`@metadata.`): `receivedAt`, `query.<param>`, `header.<name>`.
        case metadata = "@metadata"
    }

    /// A key path that does not parse, with the reason.
    public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Why the text is not a key path.
        public let message: String
        /// The message.
        public var description: String { message }
    }

    /// The keys under `@metadata.` (docs/mapping.md#source-key-paths) and whether each names a group whose members follow.
    static let metadataKeys: [String: Bool] = ["receivedAt": false, "query": true, "header": true]

    /// Where the key path starts.
    public var root: Root
    /// The keys followed from `root`, in order; never empty for `.representation`.
    public var components: [String]

    /// A key path from `root` through `components`; the components must not contain `.`.
    public init(root: Root = .representation, components: [String]) {
        self.root = root
        self.components = components
    }

    /// Parses `publisher.name`, `@parent.id`, `@root.meta.page`, `@metadata.header.X-Source`.
    ///
    /// `@parent`, `@root` and `@metadata` alone name the whole value. Under `@metadata` the first
    /// key is `receivedAt`, `query` or `header`. Empty keys (`a..b`, a trailing `.`) are rejected.
    public init(parsing text: String) throws(SyntaxError) {
        guard !text.isEmpty else { throw SyntaxError(message: "a key path must not be empty") }
        var parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let root = parts.first.flatMap { Root(rawValue: $0) }.flatMap { $0 == .representation ? nil : $0 } ?? .representation
        if root != .representation { parts.removeFirst() }
        guard !parts.contains(where: \.isEmpty) else {
            throw SyntaxError(message: "\(quoted(text)) is not a key path: it has an empty key (keys are separated by single dots)")
        }
        if root == .metadata, let first = parts.first {
            guard let hasMembers = Self.metadataKeys[first] else {
                let known = Self.metadataKeys.keys.sorted().map { "@metadata.\($0)" }.joined(separator: ", ")
                throw SyntaxError(message: "unknown metadata \(quoted(first)); expected one of \(known)")
            }
            if !hasMembers, parts.count > 1 {
                throw SyntaxError(message: "@metadata.\(first) is a single value; it has no members")
            }
        }
        self.init(root: root, components: parts)
    }

    /// The key path as written in documents.
    public var description: String {
        root == .representation ? components.joined(separator: ".") : ([root.rawValue] + components).joined(separator: ".")
    }
}

extension JSONValue {
    /// The value reached by following `components` through nested objects; nil when a key is
    /// missing or a value on the way is not an object.
    func value(at components: [String]) -> JSONValue? {
        var current = self
        for key in components {
            guard let next = current[key] else { return nil }
            current = next
        }
        return current
    }
}
