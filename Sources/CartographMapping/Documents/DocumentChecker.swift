// Collects the located problems of a mapping document or of a model's transformer sections, so that
// one 422 lists them all (with a predicate's offset where there is one), and reads members strictly:
// unknown members, repeated members and members of the wrong kind are each reported with a pointer.
import CartographCore

/// The problems found in a document, each at the JSON Pointer of its location, and the strict
/// member readers that report them.
struct DocumentChecker {
    private(set) var problems = DocumentProblems()

    var isEmpty: Bool { problems.isEmpty }
    var count: Int { problems.count }
    var details: [CartographError.Detail] { problems.details }

    mutating func report(_ pointer: JSONPointer, _ message: String, offset: Int? = nil) {
        problems.report(pointer, message, offset: offset)
    }

    func error(summary: String) -> CartographError { problems.error(summary: summary) }

    /// Throws the 422 when anything was reported.
    func throwIfAny(summary: String) throws(CartographError) {
        if !isEmpty { throw error(summary: summary) }
    }

    // MARK: Members

    /// Reports members not in `allowed` (strict documents catch typos) and members given twice.
    mutating func checkMembers(of object: JSONObject, allowed: [String], at pointer: JSONPointer) {
        var seen = Set<String>()
        for key in object.keys {
            if !allowed.contains(key) {
                report(pointer.appending(key), "unknown member \(quoted(key)); expected one of \(allowed.joined(separator: ", "))")
            } else if !seen.insert(key).inserted {
                report(pointer.appending(key), "is given more than once")
            }
        }
    }

    /// The member `key` extracted by `extract`; nil when absent or null, reported when of the wrong kind.
    mutating func member<T>(
        _ object: JSONObject, _ key: String, at pointer: JSONPointer, expecting expected: String, _ extract: (JSONValue) -> T?
    ) -> T? {
        guard let value = object[key], !value.isNull else { return nil }
        if let result = extract(value) { return result }
        report(pointer.appending(key), "expected \(expected), got \(described(value))")
        return nil
    }

    mutating func string(_ object: JSONObject, _ key: String, at pointer: JSONPointer) -> String? {
        member(object, key, at: pointer, expecting: "a string") { $0.stringValue }
    }

    mutating func bool(_ object: JSONObject, _ key: String, at pointer: JSONPointer) -> Bool? {
        member(object, key, at: pointer, expecting: "true or false") { $0.boolValue }
    }

    /// A string that must be present and non-empty; nil (after reporting) when it is not.
    mutating func requiredString(_ object: JSONObject, _ key: String, at pointer: JSONPointer) -> String? {
        if let value = string(object, key, at: pointer) {
            if value.isEmpty { report(pointer.appending(key), "must not be empty") }
            return value.isEmpty ? nil : value
        }
        if object[key] == nil || object[key] == .null { report(pointer.appending(key), "is required") }
        return nil
    }

    /// A required array of non-empty strings (names), each reported at its own index when it is not one.
    mutating func requiredNames(_ object: JSONObject, _ key: String, at pointer: JSONPointer) -> [String]? {
        guard let items = member(object, key, at: pointer, expecting: "an array of names", { $0.arrayValue }) else {
            if object[key] == nil || object[key] == .null { report(pointer.appending(key), "is required") }
            return nil
        }
        var names: [String] = []
        for (index, item) in items.enumerated() {
            if let name = item.stringValue, !name.isEmpty {
                names.append(name)
            } else {
                report(pointer.appending(key).appending(index), "expected a name, got \(described(item))")
            }
        }
        return names.count == items.count ? names : nil
    }

    /// An object whose `tag` member chooses its kind, and the kind's allowed members (`{"type": "map", …}`,
    /// `{"op": "copy", …}`): nil, after reporting, when it is not an object, has no known tag, or
    /// (reported only) has members its kind does not allow.
    /// - Parameters: `object` names the whole ("a value transformer"), `kindNoun` the tag's values ("value transformer type").
    mutating func taggedObject(_ value: JSONValue, tag: String, kinds: [(name: String, members: [String])], object noun: String,
                               kindNoun: String, at pointer: JSONPointer) -> (object: JSONObject, kind: String)? {
        guard case .object(let object) = value else {
            report(pointer, "expected \(noun) object, got \(described(value))")
            return nil
        }
        guard let kind = requiredString(object, tag, at: pointer) else { return nil }
        guard let members = kinds.first(where: { $0.name == kind })?.members else {
            let known = kinds.map(\.name).joined(separator: ", ")
            report(pointer.appending(tag), "unknown \(kindNoun) \(quoted(kind)); expected one of \(known)")
            return nil
        }
        checkMembers(of: object, allowed: members, at: pointer)
        return (object, kind)
    }

    /// A dotted key path member, reported at the member when it does not parse.
    mutating func keyPath(_ object: JSONObject, _ key: String, at pointer: JSONPointer, required: Bool = false) -> SourceKeyPath? {
        guard let text = required ? requiredString(object, key, at: pointer) : string(object, key, at: pointer) else { return nil }
        return keyPath(text, at: pointer.appending(key))
    }

    /// `text` parsed as a key path, reported at `pointer` when it does not parse.
    mutating func keyPath(_ text: String, at pointer: JSONPointer) -> SourceKeyPath? {
        do {
            return try SourceKeyPath(parsing: text)
        } catch {
            report(pointer, error.message)
            return nil
        }
    }
}

func quoted(_ text: String) -> String { DocumentProblems.quote(text) }
func described(_ value: JSONValue) -> String { DocumentProblems.describe(value) }
