// Dictionary transformers (docs/mapping.md#dictionary-transformers, Groot's JSONDictionaryTransformerName): a declared list of
// operations that reshapes each representation before it is mapped — the usual fix for an API
// that renamed or nested its keys. Operations run in order, each on the previous one's result:
//
//   {"op": "copy",     "from": "legacy_id", "to": "id"}            copy a value (when `from` exists)
//   {"op": "move",     "from": "user.id",   "to": "userID"}        copy, then remove `from`
//   {"op": "remove",   "key":  "debug"}                            remove a key
//   {"op": "set",      "key":  "kind",      "value": "text"}       set a value, always
//   {"op": "default",  "key":  "tags",      "value": []}           set a value where missing or null
//   {"op": "coalesce", "from": ["nick", "name"], "to": "display"}  the first non-null of `from`
//
// Keys are dotted key paths into the representation (`user.id`); writing through a missing or
// null intermediate creates an object there.
public import CartographCore

/// A value a dictionary transformer cannot write.
public struct DictionaryTransformError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The dictionary transformer's name.
    public let transformer: String
    /// The index of the failing operation.
    public let step: Int
    /// What is wrong, for a person.
    public let message: String

    /// The failure of operation `step` of `transformer`.
    public init(transformer: String, step: Int, message: String) {
        self.transformer = transformer
        self.step = step
        self.message = message
    }

    /// `Name operation 1: message`.
    public var description: String { "\(transformer) operation \(step): \(message)" }
}

/// A declared dictionary transformer: operations applied in order to each representation.
public struct DictionaryTransformer: Sendable, Equatable {
    /// One operation; key paths start at the representation.
    public enum Operation: Sendable, Equatable {
        /// The value at `from`, when present (null included), is written at `to`.
        case copy(from: SourceKeyPath, to: SourceKeyPath)
        /// As `copy`, and `from` is removed.
        case move(from: SourceKeyPath, to: SourceKeyPath)
        /// The key is removed (nothing happens when it is missing).
        case remove(SourceKeyPath)
        /// `value` is written at the key.
        case set(SourceKeyPath, value: JSONValue)
        /// `value` is written at the key when the key is missing or null.
        case `default`(SourceKeyPath, value: JSONValue)
        /// The first value among `from` that is present and not null is written at `to`; nothing
        /// happens when there is none.
        case coalesce(from: [SourceKeyPath], to: SourceKeyPath)
    }

    /// The members each operation has, `op` included.
    static let membersByOperation: [(op: String, members: [String])] = [
        ("copy", ["op", "from", "to"]),
        ("move", ["op", "from", "to"]),
        ("remove", ["op", "key"]),
        ("set", ["op", "key", "value"]),
        ("default", ["op", "key", "value"]),
        ("coalesce", ["op", "from", "to"]),
    ]

    /// The name the model declares it under.
    public var name: String
    /// The operations, applied in order.
    public var operations: [Operation]

    /// A dictionary transformer called `name` applying `operations`.
    public init(name: String, operations: [Operation]) {
        self.name = name
        self.operations = operations
    }

    /// The representation after every operation.
    ///
    /// - Throws: when an operation would write through a value that is not an object
    ///   (`to: "user.id"` where `user` is a string).
    public func apply(to representation: JSONObject) throws(DictionaryTransformError) -> JSONObject {
        var result = representation
        for (step, operation) in operations.enumerated() {
            func write(_ value: JSONValue, at keyPath: SourceKeyPath, into object: inout JSONObject) throws(DictionaryTransformError) {
                if let blocked = object.setValue(value, at: keyPath.components[...]) {
                    throw DictionaryTransformError(
                        transformer: name, step: step,
                        message: "cannot write \(quoted(keyPath.description)): \(quoted(blocked)) holds a value that is not an object"
                    )
                }
            }
            switch operation {
            case .copy(let from, let to):
                if let value = result.value(at: from) { try write(value, at: to, into: &result) }
            case .move(let from, let to):
                if let value = result.value(at: from) {
                    result.removeValue(at: from.components[...])
                    try write(value, at: to, into: &result)
                }
            case .remove(let key):
                result.removeValue(at: key.components[...])
            case .set(let key, let value):
                try write(value, at: key, into: &result)
            case .default(let key, let value):
                if result.value(at: key).map(\.isNull) ?? true { try write(value, at: key, into: &result) }
            case .coalesce(let sources, let to):
                if let value = sources.lazy.compactMap({ result.value(at: $0) }).first(where: { !$0.isNull }) {
                    try write(value, at: to, into: &result)
                }
            }
        }
        return result
    }
}

/// The dictionary transformers a model declares.
public struct DictionaryTransformerRegistry: Sendable {
    private let transformers: [String: DictionaryTransformer]

    /// Reads and validates `model`'s `dictionaryTransformers` section.
    ///
    /// - Throws: 422 `.unprocessable` listing each problem with its JSON Pointer
    ///   (`/dictionaryTransformers/LegacyIds/0/from`): a declaration that is not an array, an
    ///   operation that is not an object, an unknown `op`, unknown or missing members, key paths
    ///   that are empty or start with `@`.
    public init(model: Model) throws(CartographError) {
        var checker = DocumentChecker()
        var transformers: [String: DictionaryTransformer] = [:]
        let sectionPointer = JSONPointer.root.appending("dictionaryTransformers")
        var seen = Set<String>()
        for (name, declaration) in model.dictionaryTransformers {
            let pointer = sectionPointer.appending(name)
            guard seen.insert(name).inserted else {
                checker.report(pointer, "is declared more than once")
                continue
            }
            guard !name.isEmpty else {
                checker.report(pointer, "a dictionary transformer needs a non-empty name")
                continue
            }
            guard case .array(let steps) = declaration else {
                checker.report(pointer, "expected an array of operations, got \(described(declaration))")
                continue
            }
            let operations = steps.enumerated().compactMap { index, step in
                Self.readOperation(step, at: pointer.appending(index), checker: &checker)
            }
            if operations.count == steps.count { transformers[name] = DictionaryTransformer(name: name, operations: operations) }
        }
        try checker.throwIfAny(summary: "The model's dictionaryTransformers are invalid")
        self.transformers = transformers
    }

    /// The names of the declared dictionary transformers, sorted.
    public var names: [String] { transformers.keys.sorted() }

    /// The dictionary transformer called `name`; nil when the model declares none by that name.
    public func transformer(named name: String) -> DictionaryTransformer? { transformers[name] }

    private static func readOperation(_ value: JSONValue, at pointer: JSONPointer, checker: inout DocumentChecker) -> DictionaryTransformer.Operation? {
        guard let (object, op) = checker.taggedObject(value, tag: "op", kinds: DictionaryTransformer.membersByOperation.map { ($0.op, $0.members) },
                                                      object: "an operation", kindNoun: "operation", at: pointer) else { return nil }
        func keyPath(_ key: String) -> SourceKeyPath? {
            representationKeyPath(checker.keyPath(object, key, at: pointer, required: true), at: pointer.appending(key), checker: &checker)
        }
        func requiredValue() -> JSONValue? {
            if let value = object["value"] { return value }
            checker.report(pointer.appending("value"), "is required (null is allowed)")
            return nil
        }
        switch op {
        case "copy", "move":
            guard let from = keyPath("from"), let to = keyPath("to") else { return nil }
            return op == "copy" ? .copy(from: from, to: to) : .move(from: from, to: to)
        case "remove":
            return keyPath("key").map { .remove($0) }
        case "set", "default":
            guard let key = keyPath("key"), let value = requiredValue() else { return nil }
            return op == "set" ? .set(key, value: value) : .default(key, value: value)
        default:
            let to = keyPath("to")
            guard let texts = checker.requiredNames(object, "from", at: pointer) else { return nil }
            if texts.isEmpty { checker.report(pointer.appending("from"), "names no keys") }
            let sources = texts.enumerated().compactMap { index, text in
                representationKeyPath(checker.keyPath(text, at: pointer.appending("from").appending(index)),
                                      at: pointer.appending("from").appending(index), checker: &checker)
            }
            guard let to, !sources.isEmpty, sources.count == texts.count else { return nil }
            return .coalesce(from: sources, to: to)
        }
    }

    /// Operations see only the representation: `@parent`, `@root` and `@metadata` are not theirs.
    private static func representationKeyPath(_ keyPath: SourceKeyPath?, at pointer: JSONPointer, checker: inout DocumentChecker) -> SourceKeyPath? {
        guard let keyPath else { return nil }
        guard keyPath.root == .representation, !keyPath.components.isEmpty else {
            checker.report(pointer, "a dictionary transformer reads and writes the representation's own keys; \(keyPath.root.rawValue) is not one")
            return nil
        }
        return keyPath
    }
}

extension JSONObject {
    /// The value at a representation key path; nil when missing.
    fileprivate func value(at keyPath: SourceKeyPath) -> JSONValue? { JSONValue.object(self).value(at: keyPath.components) }

    /// Writes `value` at `path`, creating objects for missing or null intermediates; returns the
    /// key (as a path) of an intermediate that is not an object, in which case nothing is written.
    fileprivate mutating func setValue(_ value: JSONValue, at path: ArraySlice<String>) -> String? {
        guard let key = path.first else { return nil }
        if path.count == 1 {
            self[key] = value
            return nil
        }
        var child: JSONObject
        switch self[key] {
        case nil, .null?: child = JSONObject()
        case .object(let object)?: child = object
        default: return key
        }
        if let blocked = child.setValue(value, at: path.dropFirst()) { return key + "." + blocked }
        self[key] = .object(child)
        return nil
    }

    /// Removes the value at `path` (every occurrence of a repeated key); nothing happens when missing.
    fileprivate mutating func removeValue(at path: ArraySlice<String>) {
        guard let key = path.first else { return }
        if path.count == 1 {
            while self[key] != nil { self[key] = nil }
            return
        }
        guard case .object(var child)? = self[key] else { return }
        child.removeValue(at: path.dropFirst())
        self[key] = .object(child)
    }
}
