// Schema drift (R-P17, docs/mapping.md "Drift and contracts"): a representation holding a key its mapping
// does not read, or a value of another JSON type than its attribute takes. Every payload's answer lists
// the drift it met, one entry per path (a pointer whose array indices are `*`), with the first pointer
// that showed it and how often; the mapping's `contract` decides what drifting objects do to the payload.
import CartographCore

/// The keys a mapping reads from a representation: those read whole (an attribute, a nested
/// representation, a discriminator), and those a longer key path reads inside (`user.login`).
struct RepresentationKeys {
    private var whole: Set<String> = []
    private var inner: [String: RepresentationKeys] = [:]
    /// The mapping reads what nothing here names (a relationship of the representation itself, a
    /// representation a dictionary transformer reshaped first): no key is reported.
    private(set) var readsEverything = false
    /// The last object checked here: its keys, and the positions of those not read whole. An API's
    /// objects of one page mostly share their keys, so comparing one array spares hashing each key
    /// (hashing every key was 4% of a first load whose every issue drifted).
    private let last = LastKeys()

    private final class LastKeys {
        var keys: [String] = []
        var positions: [Int] = []
    }

    init(readBy mapping: EntityMapping, discriminator: SourceKeyPath?) {
        for attribute in mapping.attributes where attribute.source.root == .representation { add(attribute.source.components[...]) }
        for relationship in mapping.relationships {
            if let source = relationship.source {
                if source.root == .representation { add(source.components[...]) }
            } else {
                readsEverything = true
            }
            // A nested mapping's `@parent.` key paths read this representation.
            for attribute in relationship.mapping.attributes where attribute.source.root == .parent { add(attribute.source.components[...]) }
        }
        if let discriminator, discriminator.root == .representation { add(discriminator.components[...]) }
        if mapping.dictionaryTransformer != nil { readsEverything = true }
    }

    private init() {}

    private mutating func add(_ components: ArraySlice<String>) {
        guard let first = components.first else { return }
        if components.count == 1 {
            whole.insert(first)
            inner[first] = nil
        } else if !whole.contains(first) {
            inner[first, default: RepresentationKeys()].add(components.dropFirst())
        }
    }

    /// Calls `unread` with each key of `object` (and of the objects inside it that a key path reads
    /// into) that is not read: its path below the object's (`user/avatar`, array indices as `*`) and its
    /// pointer below the object's (`/user/avatar`), built only when `unread` asks for it.
    func forEachUnread(in object: JSONObject, _ unread: (_ relativePath: String, _ relativePointer: () -> String) -> Void) {
        forEachUnread(in: object, pointer: "", path: "", unread)
    }

    private func forEachUnread(in object: JSONObject, pointer: String, path: String,
                               _ unread: (_ relativePath: String, _ relativePointer: () -> String) -> Void) {
        guard !readsEverything else { return }
        if object.keys != last.keys {
            last.keys = object.keys
            last.positions = object.keys.indices.filter { !whole.contains(object.keys[$0]) }
        }
        for position in last.positions {
            let (key, value) = (object.keys[position], object.values[position])
            let escaped = MappingRun.escape(key)
            guard let keys = inner[key] else {
                // At the top of a representation (most drift) the path is the key itself: nothing is built.
                unread(path.isEmpty ? escaped : path + "/" + escaped) { pointer + "/" + escaped }
                continue
            }
            switch value {
            case .object(let nested):
                keys.forEachUnread(in: nested, pointer: pointer + "/" + escaped, path: path.isEmpty ? escaped : path + "/" + escaped, unread)
            case .array(let elements):
                for (index, element) in elements.enumerated() {
                    guard case .object(let nested) = element else { continue }
                    keys.forEachUnread(in: nested, pointer: pointer + "/\(escaped)/\(index)", path: (path.isEmpty ? escaped : path + "/" + escaped) + "/*", unread)
                }
            case .null, .bool, .number, .string:
                continue
            }
        }
    }
}

/// A value of another JSON type than its attribute takes, found as the attribute is mapped (R-P17).
struct ValueTypeDrift {
    let pointer: String
    let attribute: String
    /// The JSON types the attribute takes and the representation held.
    let expected: String
    let found: String
}

extension MappingResult {
    /// One path at which a payload drifted from its mapping (R-P17).
    public struct Drift: Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            /// A key the mapping does not read.
            case unread
            /// A value of JSON type `found` where the attribute takes `expected`.
            case type(expected: String, found: String)
        }
        /// The pointer with its array indices written `*`.
        public let path: String
        public let kind: Kind
        /// The first pointer at which the payload showed it.
        public let example: String
        /// How many times the payload showed it.
        public internal(set) var count: Int

        public init(path: String, kind: Kind, example: String, count: Int) {
            (self.path, self.kind, self.example, self.count) = (path, kind, example, count)
        }
    }
}

extension MappingRun {
    /// The paths of drift an answer lists; the occurrences at further paths are only counted.
    static let maximumDriftPaths = 100

    /// The JSON type an attribute of `type` takes from a representation without a value transformer, when
    /// `value` is of another (R-P17); nil when it takes it: a date takes a string or a number, a
    /// transformable anything, and `null` never drifts. Asked of every mapped value: no text is compared.
    static func expectedJSONType(of type: AttributeType, for value: JSONValue) -> String? {
        let (expected, takes): (String, Bool)
        switch type {
        case .string, .uuid, .uri, .binary: (expected, takes) = ("string", value.stringValue != nil)
        case .integer16, .integer32, .integer64, .decimal, .double, .float: (expected, takes) = ("number", value.numberValue != nil)
        case .boolean: (expected, takes) = ("boolean", value.boolValue != nil)
        case .date, .transformable: return nil
        }
        return takes || value.isNull ? nil : expected
    }

    /// `pointer` with every array index written `*`: the path drift is counted by. One pass over its
    /// bytes: a representation that drifts asks for it once, and most of a drifting payload's do.
    static func driftPath(_ pointer: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(pointer.utf8.count)
        var segment: [UInt8] = []
        func flush() {
            let isIndex = !segment.isEmpty && segment.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            if isIndex { out.append(UInt8(ascii: "*")) } else { out.append(contentsOf: segment) }
            segment.removeAll(keepingCapacity: true)
        }
        for byte in pointer.utf8 {
            if byte == UInt8(ascii: "/") {
                flush()
                out.append(byte)
            } else {
                segment.append(byte)
            }
        }
        flush()
        return String(decoding: out, as: UTF8.self)
    }

    /// Records the drift of an object representation read into `node` with `mapping`: its unread keys,
    /// and `typeDrift`, the values of another JSON type than their attributes take.
    mutating func noteDrift(of object: JSONObject, node: MappedNode, mapping: EntityMapping, reference: MappingReference,
                            discriminator: SourceKeyPath?, pointer: String,
                            typeDrift: [ValueTypeDrift]) {
        let keys = reference.representationKeys(discriminator: discriminator)
        guard !keys.readsEverything || !typeDrift.isEmpty else { return }
        // The representation's own path, found once it has drifted.
        var found: String?
        func representationPath() -> String {
            if let found { return found }
            let path = Self.driftPath(pointer)
            found = path
            return path
        }
        let collects = mapping.contract != .evolve
        keys.forEachUnread(in: object) { relativePath, relativePointer in
            record(under: representationPath(), relativePath, kind: .unread) { pointer + relativePointer() }
            if collects {
                node.driftProblems.append(.init(pointer: pointer + relativePointer(),
                                                message: "a key the mapping does not read (contract \(mapping.contract.rawValue))"))
            }
        }
        for drift in typeDrift {
            let path = Self.driftPath(drift.pointer)
            record(under: "", path, kind: .type(expected: drift.expected, found: drift.found)) { drift.pointer }
            if collects {
                node.driftProblems.append(.init(pointer: drift.pointer,
                                                message: "a \(drift.found) where '\(drift.attribute)' takes a \(drift.expected) (contract \(mapping.contract.rawValue))"))
            }
        }
    }

    /// Counts one occurrence of drift at `prefix` + `/` + `relative` (`relative` alone when `prefix` is
    /// empty); a path met for the first time is listed with `example()`, its pointer.
    private mutating func record(under prefix: String, _ relative: String, kind: MappingResult.Drift.Kind, example: () -> String) {
        let key: String
        switch kind {
        case .unread: key = relative
        case .type(let expected, let found): key = relative + "\u{0}" + expected + "\u{0}" + found
        }
        if let index = driftIndex[prefix]?[key] {
            result.drift[index].count += 1
        } else if result.drift.count < Self.maximumDriftPaths {
            driftIndex[prefix, default: [:]][key] = result.drift.count
            let path = prefix.isEmpty ? relative : prefix + "/" + relative
            result.drift.append(MappingResult.Drift(path: path, kind: kind, example: example(), count: 1))
        } else {
            result.driftNotListed += 1
        }
    }
}
