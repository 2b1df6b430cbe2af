// A value transformer (docs/mapping.md#value-transformers, Groot's JSONTransformerName): a named JSONValue -> JSONValue
// function applied to a payload value before it is coerced to its attribute's type (R-P3), with
// the reverse that exports a stored value back to the payload's form (R-Q4 `shape=json`).
// `null` always passes through unchanged in both directions, so that JSON null keeps meaning
// "set nil" (R-P4) whatever transformer an attribute has.
public import CartographCore

/// A value that a transformer cannot transform.
public struct ValueTransformError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The transformer that failed (for a chain, the step that failed).
    public let transformer: String
    /// What is wrong, for a person (`'12x' is not an integer`).
    public let message: String

    /// The failure of `transformer`, explained by `message`.
    public init(transformer: String, message: String) {
        self.transformer = transformer
        self.message = message
    }

    /// `Transformer: message`.
    public var description: String { "\(transformer): \(message)" }
}

/// A resolved value transformer: built in, or declared in a model and validated by `ValueTransformerRegistry`.
public struct JSONValueTransformer: Sendable {
    /// What a transformer does.
    enum Kind: Sendable {
        case builtIn(BuiltInValueTransformer)
        /// A lookup table; `defaultValue` answers keys the table lacks.
        case map(entries: JSONObject, defaultValue: JSONValue?)
        case dateFormat(DateFormatTransformer)
        /// A string split into an array of strings (reverse: joined).
        case split(separator: String)
        /// An array of scalars joined into a string (reverse: split).
        case join(separator: String)
        /// Steps applied in order (reverse: each step's reverse, last step first).
        case chain([JSONValueTransformer])
    }

    /// The name mappings and annotations use.
    public let name: String
    let kind: Kind

    init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// Transforms a payload value for mapping.
    public func transform(_ value: JSONValue) throws(ValueTransformError) -> JSONValue {
        if value.isNull { return value }
        switch kind {
        case .builtIn(let builtIn): return try builtIn.transform(value)
        case .map(let entries, let defaultValue): return try lookUp(value, in: entries, defaultValue: defaultValue)
        case .dateFormat(let formatter): return try formatter.parse(value, transformer: name)
        case .split(let separator): return try split(value, separator: separator)
        case .join(let separator): return try join(value, separator: separator)
        case .chain(let steps):
            var result = value
            for step in steps { result = try step.transform(result) }
            return result
        }
    }

    /// A built-in date transformer's instant (milliseconds since 1970), for a date attribute: the value
    /// `transform` would render as text for coercion to parse again. Nil for any other transformer, and
    /// for an instant whose text coercion refuses (a year past 9999), so that `transform` reports it.
    public func instant(_ value: JSONValue) throws(ValueTransformError) -> Int64? {
        guard !value.isNull, case .builtIn(let builtIn) = kind, let instant = try builtIn.instant(value),
              ISO8601Instant.fourDigitYears.contains(instant) else { return nil }
        return instant
    }

    /// Transforms a stored value (in its API JSON form) back to the payload's form, for export.
    public func reverseTransform(_ value: JSONValue) throws(ValueTransformError) -> JSONValue {
        if value.isNull { return value }
        switch kind {
        case .builtIn(let builtIn): return try builtIn.reverseTransform(value)
        case .map(let entries, let defaultValue): return try reverseLookUp(value, in: entries, defaultValue: defaultValue)
        case .dateFormat(let formatter): return try formatter.format(value, transformer: name)
        case .split(let separator): return try join(value, separator: separator)
        case .join(let separator): return try split(value, separator: separator)
        case .chain(let steps):
            var result = value
            for step in steps.reversed() { result = try step.reverseTransform(result) }
            return result
        }
    }

    private func failure(_ message: String) -> ValueTransformError { ValueTransformError(transformer: name, message: message) }

    // MARK: Declared kinds

    /// Strings look themselves up, numbers by their text, booleans as `true`/`false`.
    private func lookUp(_ value: JSONValue, in entries: JSONObject, defaultValue: JSONValue?) throws(ValueTransformError) -> JSONValue {
        guard let key = Self.lookUpKey(value) else {
            throw failure("expected a string, number or boolean to look up, got \(value.kindName)")
        }
        if let mapped = entries[key] ?? defaultValue { return mapped }
        throw failure("no entry for \(described(value)) and no default")
    }

    /// The key a value looks itself up by; nil for arrays and objects.
    private static func lookUpKey(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): text
        case .number(let number): number.text
        case .bool(let flag): flag ? "true" : "false"
        default: nil
        }
    }

    /// A payload value that `lookUp` maps to `value`: the key of the first entry equal to it (exactly,
    /// else as the same number, instant or boolean, since the stored value comes back in its API form:
    /// an entry `1.5` for a decimal attribute exports as `"1.5"`); else, when `value` is the default and
    /// has no entry of its own, `value` itself, which the forward lookup maps to the default again.
    private func reverseLookUp(_ value: JSONValue, in entries: JSONObject, defaultValue: JSONValue?) throws(ValueTransformError) -> JSONValue {
        if let index = entries.values.firstIndex(of: value) ?? entries.values.firstIndex(where: { Self.sameValue($0, value) }) {
            return .string(entries.keys[index])
        }
        if let defaultValue, defaultValue == value || Self.sameValue(defaultValue, value),
           let key = Self.lookUpKey(value), entries[key] == nil {
            return value
        }
        throw failure("no entry maps to \(described(value))")
    }

    /// True when a declared value and a stored value (in its API form) denote the same attribute
    /// value: numbers (or numeric strings) of equal value, ISO 8601 strings of the same instant, or a
    /// boolean and a value that coerces to it.
    private static func sameValue(_ declared: JSONValue, _ stored: JSONValue) -> Bool {
        if case .bool(let flag) = stored { return (try? AttributeValue.coerce(declared, to: .boolean)) == .boolean(flag) }
        if case .bool(let flag) = declared { return (try? AttributeValue.coerce(stored, to: .boolean)) == .boolean(flag) }
        guard let a = scalarText(declared), let b = scalarText(stored) else { return false }
        if let x = NumberText(a), let y = NumberText(b) { return x == y }
        guard case .string = declared, case .string = stored,
              let x = ISO8601Instant.milliseconds(from: a), let y = ISO8601Instant.milliseconds(from: b) else { return false }
        return x == y
    }

    private static func scalarText(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): text
        case .number(let number): number.text
        default: nil
        }
    }

    /// `"a,b"` -> `["a", "b"]`; the empty string is the empty array. Elements are not trimmed.
    private func split(_ value: JSONValue, separator: String) throws(ValueTransformError) -> JSONValue {
        guard case .string(let text) = value else { throw failure("expected a string to split, got \(value.kindName)") }
        if text.isEmpty { return .array([]) }
        return .array(text.split(separator: separator, omittingEmptySubsequences: false).map { .string(String($0)) })
    }

    /// `["a", 1, true]` -> `"a,1,true"`: strings as they are, numbers by their text, booleans as words.
    private func join(_ value: JSONValue, separator: String) throws(ValueTransformError) -> JSONValue {
        guard case .array(let items) = value else { throw failure("expected an array to join, got \(value.kindName)") }
        var parts: [String] = []
        parts.reserveCapacity(items.count)
        for item in items {
            switch item {
            case .string(let text): parts.append(text)
            case .number(let number): parts.append(number.text)
            case .bool(let flag): parts.append(flag ? "true" : "false")
            default: throw failure("can join strings, numbers and booleans, not \(item.kindName)")
            }
        }
        return .string(parts.joined(separator: separator))
    }
}
