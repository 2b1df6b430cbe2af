// The value transformers a model offers (docs/mapping.md#value-transformers): the built-in ones and those declared in its
// `valueTransformers` section. Building the registry validates every declaration with a pointer
// (`/valueTransformers/GenderCode/map`) — kinds, members, time zones, chain steps and chain
// cycles — so the server can refuse a malformed declaration when the model is registered.
public import CartographCore

/// Resolves value transformer names for one model.
public struct ValueTransformerRegistry: Sendable {
    /// The names of the built-in transformers (the same set as `ModelDocument.builtInValueTransformers`).
    public static let builtInNames = Set(BuiltInValueTransformer.allCases.map(\.rawValue))

    /// Every transformer by name: built-in and declared.
    private let transformers: [String: JSONValueTransformer]

    /// The registry of `model`'s transformers.
    ///
    /// - Throws: 422 `.unprocessable` listing each malformed declaration with its JSON Pointer:
    ///   an unknown `type`, unknown or missing members, a `map` that is not an object, an empty
    ///   `separator` or `format`, an unknown `timeZone`, a chain naming an unknown transformer or
    ///   forming a cycle, a name that shadows a built-in transformer.
    public init(model: Model) throws(CartographError) {
        var transformers = Dictionary(uniqueKeysWithValues: BuiltInValueTransformer.allCases.map {
            ($0.rawValue, JSONValueTransformer(name: $0.rawValue, kind: .builtIn($0)))
        })
        var reader = DeclarationReader(section: model.valueTransformers)
        reader.readDeclarations()
        // In document order, so that a cycle is reported at the same step every time.
        for name in model.valueTransformers.keys {
            if let transformer = reader.resolve(name) { transformers[name] = transformer }
        }
        try reader.checker.throwIfAny(summary: "The model's valueTransformers are invalid")
        self.transformers = transformers
    }

    /// The names of every transformer of the model, built-in and declared, sorted.
    public var names: [String] { transformers.keys.sorted() }

    /// True when `name` is built in or declared.
    public func contains(_ name: String) -> Bool { transformers[name] != nil }

    /// The transformer called `name`.
    ///
    /// - Throws: a `ValueTransformError` naming it when it is neither built in nor declared (an
    ///   annotation may name one that the model lacks, docs/model.md#validation).
    public func transformer(named name: String) throws(ValueTransformError) -> JSONValueTransformer {
        guard let transformer = transformers[name] else {
            throw ValueTransformError(transformer: name, message: "unknown value transformer: it is neither built in nor declared in the model's valueTransformers")
        }
        return transformer
    }
}

/// Reads the `valueTransformers` section, then resolves chains depth-first.
private struct DeclarationReader {
    /// A declaration read and checked on its own; chains still name their steps.
    enum Declaration {
        case resolved(JSONValueTransformer.Kind)
        case chain(steps: [String])
    }

    /// The members each declared kind has, `type` included.
    static let membersByKind: [(kind: String, members: [String])] = [
        ("map", ["type", "map", "default"]),
        ("dateFormat", ["type", "format", "timeZone"]),
        ("split", ["type", "separator"]),
        ("join", ["type", "separator"]),
        ("chain", ["type", "transformers"]),
    ]

    let section: JSONObject
    var checker = DocumentChecker()
    private(set) var declarations: [String: Declaration] = [:]
    /// Chain resolution state: on the current path (a cycle when met again), or finished.
    private var resolving: [String] = []
    private var resolved: [String: JSONValueTransformer?] = [:]

    init(section: JSONObject) { self.section = section }

    private static func pointer(_ name: String) -> JSONPointer { JSONPointer.root.appending("valueTransformers").appending(name) }

    mutating func readDeclarations() {
        var seen = Set<String>()
        for (name, value) in section {
            let pointer = Self.pointer(name)
            if !seen.insert(name).inserted {
                checker.report(pointer, "is declared more than once")
            } else if name.isEmpty {
                checker.report(pointer, "a value transformer needs a non-empty name")
            } else if ValueTransformerRegistry.builtInNames.contains(name) {
                checker.report(pointer, "\(quoted(name)) is the name of a built-in value transformer; choose another name")
            } else if let declaration = readDeclaration(value, at: pointer) {
                declarations[name] = declaration
            }
        }
    }

    private mutating func readDeclaration(_ value: JSONValue, at pointer: JSONPointer) -> Declaration? {
        // An alias (`"GrootTests.Transformer": "StringToInteger"`) is a chain of one step: resolved, and
        // checked for unknown names and cycles, as chains are.
        if let target = value.stringValue { return .chain(steps: [target]) }
        guard value.objectValue != nil else {
            checker.report(pointer, "expected a value transformer object or the name of a transformer, got \(described(value))")
            return nil
        }
        guard let (object, kind) = checker.taggedObject(value, tag: "type", kinds: Self.membersByKind.map { ($0.kind, $0.members) },
                                                        object: "a value transformer", kindNoun: "value transformer type", at: pointer) else { return nil }
        switch kind {
        case "map":
            guard let entries = checker.member(object, "map", at: pointer, expecting: "an object of values -> replacements", { $0.objectValue }) else {
                if object["map"] == nil || object["map"] == .null { checker.report(pointer.appending("map"), "is required") }
                return nil
            }
            var keys = Set<String>()
            for key in entries.keys where !keys.insert(key).inserted {
                checker.report(pointer.appending("map").appending(key), "is given more than once")
            }
            // `default` may itself be null: values without an entry then become nil.
            return .resolved(.map(entries: entries, defaultValue: object["default"]))
        case "dateFormat":
            guard let format = checker.requiredString(object, "format", at: pointer) else { return nil }
            let timeZone = checker.string(object, "timeZone", at: pointer) ?? "UTC"
            guard let formatter = DateFormatTransformer(format: format, timeZone: timeZone) else {
                checker.report(pointer.appending("timeZone"), "unknown time zone \(quoted(timeZone)); use an identifier such as 'Europe/Paris' or 'UTC'")
                return nil
            }
            return .resolved(.dateFormat(formatter))
        case "split", "join":
            guard let separator = checker.requiredString(object, "separator", at: pointer) else { return nil }
            return .resolved(kind == "split" ? .split(separator: separator) : .join(separator: separator))
        default:
            guard let steps = checker.requiredNames(object, "transformers", at: pointer) else { return nil }
            if steps.isEmpty { checker.report(pointer.appending("transformers"), "has no steps") }
            return .chain(steps: steps)
        }
    }

    /// The transformer declared as `name`, resolving a chain's steps first; nil (reported) when a
    /// step is unknown or the chain reaches itself.
    mutating func resolve(_ name: String) -> JSONValueTransformer? {
        if let done = resolved[name] { return done }
        guard let declaration = declarations[name] else { return nil }
        switch declaration {
        case .resolved(let kind):
            let transformer = JSONValueTransformer(name: name, kind: kind)
            resolved[name] = transformer
            return transformer
        case .chain(let steps):
            resolving.append(name)
            defer { resolving.removeLast() }
            var resolvedSteps: [JSONValueTransformer] = []
            for (index, step) in steps.enumerated() {
                // An alias is its own one step.
                let stepPointer = section[name]?.stringValue == nil ? Self.pointer(name).appending("transformers").appending(index) : Self.pointer(name)
                if let builtIn = BuiltInValueTransformer(rawValue: step) {
                    resolvedSteps.append(JSONValueTransformer(name: step, kind: .builtIn(builtIn)))
                } else if let start = resolving.firstIndex(of: step) {
                    let cycle = resolving[start...] + [step]
                    checker.report(stepPointer, "chain cycle: \(cycle.joined(separator: " -> "))")
                } else if section[step] == nil {
                    checker.report(stepPointer, "unknown value transformer \(quoted(step)); it is neither built in nor declared in valueTransformers")
                } else if let transformer = resolve(step) {
                    resolvedSteps.append(transformer)
                }
            }
            let transformer = resolvedSteps.count == steps.count ? JSONValueTransformer(name: name, kind: .chain(resolvedSteps)) : nil
            resolved[name] = .some(transformer)
            return transformer
        }
    }
}
