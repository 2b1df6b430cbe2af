// The mapping engine (docs/mapping.md): turns one payload into store writes with RestKit's semantics.
//
// Phases, each over the whole payload: (1) read every representation into a node — values read at
// their key paths, transformed and coerced to the attribute types; nodes with the same identity
// are merged, later values winning (R-I5); (2) identify: one batched lookup per mapping (R-I1…R-I3);
// (3) validate the final state of each object before anything is written (R-P8); (4) write objects,
// then relationships with their assignment policies (R-P5, R-P6); (5) connect relationships by foreign
// key and key path, and complete connections waiting for arriving objects (R-C1…R-C5); (6) deletion
// predicates and snapshots (R-D1, R-D5). The caller runs it inside one store transaction (R-P11), so
// a thrown error stores nothing.
import Foundation
public import CartographCore
import CartographPredicate

/// The outcome of mapping one payload (R-P12, without `changeSeq`, which the store assigns).
public struct MappingResult: Sendable, Equatable {
    public var inserted = 0
    public var updated = 0
    public var unchanged = 0
    public var deleted = 0
    /// `{"pointer", "entity", "key", "errors"}` for each dropped invalid new object (R-P8).
    public var discarded: [JSONValue] = []
    /// `{"entity", "key"}` per top-level representation, in payload order, kept compact until the
    /// response is written: a payload of many small objects would otherwise hold a JSON value (two
    /// arrays) per object, or its rendered entry (several times the key's size). Keys are compact
    /// JSON texts, each followed by `objectKeyEnd`; entities and the `discarded` flag are runs over the keys.
    public private(set) var objectKeys: [UInt8] = []
    public private(set) var objectRuns: [(entity: String, discarded: Bool, count: Int)] = []
    /// How many top-level representations are listed.
    private var objectCount = 0
    /// `{"pointer", "message"}` for what was mapped without error but may not be what the client meant
    /// (R-P2: no value at the mapping's keyPath); rendered only when there is one.
    public var warnings: [JSONValue] = []
    /// R-P17: the paths at which the payload drifted from its mapping, in the order met (at most
    /// `MappingRun.maximumDriftPaths`); rendered only when there is one.
    public internal(set) var drift: [Drift] = []
    /// R-P17: occurrences of drift at paths past the listed ones.
    public internal(set) var driftNotListed = 0
    /// R-P13: `{"pointer", "entity", "key", "action", "reason"}` per object, when asked for.
    public var explain: [JSONValue]?
    /// R-P13: milliseconds per phase, when asked for.
    public var timings: [(phase: String, milliseconds: Double)] = []
    /// The `_id`s a snapshot session's page mentioned (R-D5 across pages), when the engine
    /// `defersDeleteMissing`: what the page's deleteMissing would have kept. Not part of the response.
    public internal(set) var mentionedIDs: Set<Int64>?
    /// The greatest value of the mapping's `cursor` attribute among the top-level objects mapped (R-P16);
    /// nil without a cursor or a value. Not part of the response.
    public internal(set) var cursorValue: AttributeValue?
    /// R-P18: the id the store archived the payload's body under (a mapping with `archive`, committed);
    /// set by the store, rendered as `"archive": {"id": …}`.
    public var archiveID: Int64?

    public init() {}

    public static func == (a: MappingResult, b: MappingResult) -> Bool {
        a.inserted == b.inserted && a.updated == b.updated && a.unchanged == b.unchanged && a.deleted == b.deleted && a.cursorValue == b.cursorValue
            && a.discarded == b.discarded && a.objectKeys == b.objectKeys && a.explain == b.explain && a.warnings == b.warnings
            && a.drift == b.drift && a.driftNotListed == b.driftNotListed
            && a.objectRuns.elementsEqual(b.objectRuns) { $0 == $1 }
    }

    /// Reserves room for the keys of `count` more entries like those listed so far.
    mutating func reserveObjects(_ count: Int) {
        guard objectCount > 0 else { return }
        objectKeys.reserveCapacity(objectKeys.count + objectKeys.count / objectCount * count * 9 / 8)
    }

    /// Appends a top-level representation's entry to `objects`.
    mutating func appendObject(entity: String, key: JSONValue, discarded: Bool) {
        JSONWriter.write(key, into: &objectKeys)
        objectKeys.append(Self.objectKeyEnd)
        objectCount += 1
        if let last = objectRuns.last, last.discarded == discarded, last.entity == entity {
            objectRuns[objectRuns.count - 1].count += 1
        } else {
            objectRuns.append((entity, discarded, 1))
        }
    }

    /// What ends each key in `objectKeys`: a newline, a byte compact JSON never holds.
    public static let objectKeyEnd = UInt8(ascii: "\n")

    /// The number of top-level representations listed so far: the next one's index in `objects`.
    var listedObjects: Int { objectCount }

    /// Replaces the keys of the listed entries at the indices given (the rest as they are).
    mutating func replaceObjectKeys(_ replacements: [Int: JSONValue]) {
        guard !replacements.isEmpty else { return }
        var keys: [UInt8] = []
        keys.reserveCapacity(objectKeys.count)
        var start = 0
        for index in 0..<objectCount {
            var end = start
            while objectKeys[end] != Self.objectKeyEnd { end += 1 }
            if let key = replacements[index] { JSONWriter.write(key, into: &keys) } else { keys.append(contentsOf: objectKeys[start..<end]) }
            keys.append(Self.objectKeyEnd)
            start = end + 1
        }
        objectKeys = keys
    }
}

/// Maps payloads for one model. Cheap to build; holds no state between payloads.
public struct MappingEngine: Sendable {
    public let model: Model
    let transformers: ValueTransformerRegistry
    let dictionaryTransformers: DictionaryTransformerRegistry
    /// Most representations one payload may hold (R-S2; default 1,000,000, docs/configuration.md): beyond, a 413.
    public let maximumObjects: Int
    /// Top-level representations per chunk of a streamed payload (`map(_ streamed:)`).
    public let chunkSize: Int
    /// The registered mappings that `{"ref": …}` references reach, by name (the caller loads every one
    /// a payload's mapping reaches, transitively).
    let namedMappings: [String: EntityMapping]
    /// Maps the pages of a snapshot session (R-D5 across pages): a `deleteMissing` mapping deletes
    /// nothing and lists what it would keep in `MappingResult.mentionedIDs` instead.
    public var defersDeleteMissing = false

    /// Most representations one payload may hold (`--max-objects-per-payload`'s default).
    public static let defaultMaximumObjects = 1_000_000

    public init(model: Model, maximumObjects: Int = MappingEngine.defaultMaximumObjects, chunkSize: Int = MappingEngine.defaultChunkSize,
                namedMappings: [String: EntityMapping] = [:]) throws(CartographError) {
        self.model = model
        self.maximumObjects = maximumObjects
        self.chunkSize = max(1, chunkSize)
        self.namedMappings = namedMappings
        self.transformers = try ValueTransformerRegistry(model: model)
        self.dictionaryTransformers = try DictionaryTransformerRegistry(model: model)
    }

    /// Maps `payload` with `mapping` into `store` (already inside a transaction): `read` and
    /// `map(_ read:)` in one go, R-P7's read-ahead looking in the transaction itself.
    /// - Parameter metadata: `{"receivedAt", "query": {…}, "header": {…}}` for `@metadata.` key paths.
    /// - Parameters:
    ///   - explain: record a per-object trace and phase timings (R-P13).
    ///   - progress: called with (phase, done, total) as objects are read and written, for long payloads.
    public func map(_ payload: JSONValue, mapping: EntityMapping, metadata: JSONValue = .object(JSONObject()),
                    explain: Bool = false, progress: ((String, Int, Int) -> Void)? = nil,
                    into store: some MappingStore) throws(CartographError) -> MappingResult {
        let read = try read(payload, mapping: mapping, metadata: metadata, explain: explain, lookup: store)
        return try map(read, progress: progress, into: store)
    }

    /// Phase 1: reads every representation of `payload` into a node, with R-P7's read-ahead looking
    /// current objects up in `lookup`. Pure but for that lookup, so it can run before the write
    /// transaction, against a read snapshot (whose change-feed head the caller sets in the result's
    /// `snapshotHead`): another payload's write then runs beside it, and `map(_ read:)` checks that what
    /// the snapshot showed still holds.
    /// A payload whose mapping's key path is missing fails here when the mapping deletes missing objects (R-D5).
    func read(_ payload: JSONValue, mapping: EntityMapping, metadata: JSONValue, explain: Bool,
              lookup: (any MappingLookup)?) throws(CartographError) -> ReadPayload {
        var timer = PhaseTimer()
        var run = MappingRun(engine: self, root: payload, metadata: metadata, explain: explain)
        var (topLevel, keyPathPresent) = try run.readTopLevel(payload, mapping: mapping, lookup: lookup)
        if mapping.deleteMissing != nil, !keyPathPresent {
            throw CartographError(.unprocessable, "The payload has no '\(mapping.keyPath?.description ?? "")': a deleteMissing mapping needs the complete set of objects, so nothing was stored or deleted.",
                                  errors: [.init(pointer: "", message: "the key path '\(mapping.keyPath?.description ?? "")' is missing")])
        }
        if run.readAheadMet {
            // An object found current before the read (R-P7) is represented again in the payload, so its
            // representations must be merged first (R-I5): read it all again without reading ahead.
            run = MappingRun(engine: self, root: payload, metadata: metadata, explain: explain, readsAhead: false)
            topLevel = try run.readTopLevel(payload, mapping: mapping, lookup: nil).representations
        }
        if !keyPathPresent {
            // R-P2: nothing to map is not an error, but a client that sent the wrong shape should hear of it.
            run.result.warnings.append(["pointer": "", "message": .string("no value at keyPath '\(mapping.keyPath?.description ?? "")'")])
        }
        timer.lap("read")
        return ReadPayload(run: run, topLevel: topLevel, source: .whole(payload), mapping: mapping, timer: timer)
    }

    /// `read` for a payload read shallowly (`shallowPlan`): the same nodes, with only the elements the
    /// read-ahead does not find current parsed whole.
    func read(_ shallow: ShallowPayload, metadata: JSONValue, explain: Bool,
              lookup: (any MappingLookup)?) throws(CartographError) -> ReadPayload {
        var timer = PhaseTimer()
        var run = MappingRun(engine: self, root: .null, metadata: metadata, explain: explain)
        let topLevel = try run.readTopLevel(shallow, lookup: lookup)
        if run.readAheadMet {
            // As in `read`: an object found current is represented again; read the whole document without reading ahead.
            return try read(try PreparedPayload.shallow(shallow).document(), mapping: shallow.mapping, metadata: metadata, explain: explain, lookup: nil)
        }
        timer.lap("read")
        return ReadPayload(run: run, topLevel: topLevel, source: .shallow(shallow), mapping: shallow.mapping, timer: timer)
    }

    /// Phases 2 to 6 of a payload `read` read, into `store` (inside a transaction). When lookups before
    /// the write looked in snapshots another write has since moved past, what they found is checked against
    /// the change feed and what the commits since wrote (`MappingRun.mustReadAgain`): the payload is read
    /// again here, or what may no longer hold is looked up again (`MappingRun.forgetChangedSince`).
    public func map(_ read: ReadPayload, progress: ((String, Int, Int) -> Void)? = nil,
                    into store: some MappingStore) throws(CartographError) -> MappingResult {
        var read = read
        // The oldest snapshot a lookup read: checking from it covers the later ones.
        if let since = [read.snapshotHead, read.run.identifiedAheadAt].compactMap({ $0 }).min(),
           case let head = try store.changeFeedHead(), head != since {
            let written = store.identitiesWritten(since: since, head: head)
            let changed = try store.changedObjects(among: read.run.foundAheadIDs, since: since, head: head)
            if read.run.mustReadAgain(read.topLevel.map(\.node), mapping: resolve(read.mapping), changed: changed, written: written) {
                let timer = read.timer
                read = try self.read(read.source, mapping: read.mapping, metadata: read.run.metadata, explain: read.run.trace != nil,
                                     lookup: store)
                read.timer = timer
            } else {
                read.run.forgetChangedSince(changed: changed, written: written)
            }
        }
        var (run, topLevel, timer) = (read.run, read.topLevel, read.timer)
        // Identification re-reads some representations (R-P9), which can meet a node read ahead too.
        try run.identify(in: store)
        if run.readAheadMet {
            let payload = try read.source.document()
            run = MappingRun(engine: self, root: payload, metadata: run.metadata, explain: run.trace != nil, readsAhead: false)
            topLevel = try run.readTopLevel(payload, mapping: read.mapping, lookup: nil).representations
            try run.identify(in: store)
        }
        timer.lap("identify")
        try run.validate(topLevel: topLevel.map(\.node), in: store)
        timer.lap("validate")
        try run.preconnect(in: store)
        timer.lap("preconnect")
        try run.write(progress: progress, into: store)
        try run.deleteDroppedDestinations(in: store)
        timer.lap("write")
        try run.connect(in: store)
        timer.lap("connect")
        try run.applyDeletions(of: read.mapping, in: store)
        timer.lap("delete")
        var result = try run.summarize(topLevel: topLevel, cursor: read.mapping.cursor?.attribute, in: store)
        if run.trace != nil { result.timings = timer.timings }
        return result
    }
}

extension MappingEngine {
    /// The mapping that applies where `mapping` stands: an annotation reference becomes the entity's
    /// annotation mapping (R-P10), a named reference the registered mapping, nested (its top-level-only
    /// members do not apply inside a representation).
    func resolve(_ mapping: EntityMapping) -> EntityMapping {
        guard let name = mapping.reference else { return mapping.resolved(in: model) }
        // The caller loads every mapping a reference reaches; one missing maps nothing rather than crash.
        var named = namedMappings[name] ?? EntityMapping(entity: mapping.entity)
        named.keyPath = nil
        named.deleteMissing = nil
        named.identityReferences = false
        return named
    }

    /// `base` and every mapping it reaches through relationship mappings and `dynamic` cases, resolved,
    /// each reference once (models and mappings have cycles: a reference may reach its own mapping again).
    func reachableMappings(from base: EntityMapping) -> [EntityMapping] {
        var seen = Set<MappingRun.ResolvedReference>()
        var reached: [EntityMapping] = []
        var pending = [base]
        while let next = pending.popLast() {
            let key: MappingRun.ResolvedReference? = next.reference.map { .named($0) } ?? (next.isAnnotationReference ? .annotations(next.entity) : nil)
            if let key, !seen.insert(key).inserted { continue }
            let mapping = resolve(next)
            reached.append(mapping)
            pending += mapping.relationships.map(\.mapping) + (mapping.dynamic?.cases.map(\.mapping) ?? [])
        }
        return reached
    }
}

/// A payload read into nodes (phase 1), waiting for `MappingEngine.map(_ read:)`. Not Sendable: its
/// nodes are classes, used by the thread that read them.
public struct ReadPayload {
    var run: MappingRun
    var topLevel: [(node: MappedNode, pointer: String)]
    /// The payload the nodes were read from.
    let source: PreparedPayload
    let mapping: EntityMapping
    /// The change-feed head of the read snapshot the read-ahead looked in; nil when it looked in the
    /// transaction that maps the payload (or nowhere).
    var snapshotHead: Int64? = nil
    var timer: PhaseTimer

    /// Whether fewer than a quarter of the top-level objects were found current before the read (R-P7): a
    /// first load rather than a re-load. Reading the next payload of such a load shallowly would only add a
    /// pass over the bytes of objects that are then read whole (4% of a first load's CPU, issue 29).
    public var mostlyNew: Bool { run.readAheadIDs.count * 4 < topLevel.count }
}

/// Milliseconds per phase (R-P13).
struct PhaseTimer {
    private(set) var timings: [(phase: String, milliseconds: Double)] = []
    private var clock = ContinuousClock.now

    mutating func lap(_ phase: String) {
        let now = ContinuousClock.now
        let elapsed = now - clock
        timings.append((phase, Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15))
        clock = now
    }
}

/// What a payload needs per entity, computed the first time an object of the entity needs it rather
/// than once per object (or, at start-up, for every entity of a large model): the defaults of its
/// attributes (R-P4), coerced; its attributes and relationships, inherited ones included; and the
/// attributes that make its API key; its hierarchy's root; and the attributes' compiled `regex` constraints.
/// A class: one payload's phases share it, on one thread.
final class EntityTables {
    private let model: Model
    private var regexes: [String: WholeStringRegex?] = [:]
    private var defaults: [String: [String: AttributeValue]] = [:]
    private var attributes: [String: [Attribute]] = [:]
    private var checkedAttributes: [String: [Attribute]] = [:]
    private var relationships: [String: [Relationship]] = [:]
    private var keys: [String: [String]] = [:]
    private var roots: [String: String] = [:]
    private var abstract: [String: Bool] = [:]
    /// An entity's attribute, as a cache key (no string built per lookup).
    private struct PropertyKey: Hashable {
        let entity: String, name: String
    }
    private var attributeTypes: [PropertyKey: AttributeType?] = [:]

    init(model: Model) { self.model = model }

    func defaults(of entity: String) -> [String: AttributeValue] {
        cached(\.defaults, entity) {
            var values: [String: AttributeValue] = [:]
            for attribute in attributes(of: entity) {
                if let json = attribute.defaultValue, let value = try? AttributeValue.coerce(json, to: attribute.type) { values[attribute.name] = value }
            }
            return values
        }
    }

    func attributes(of entity: String) -> [Attribute] { cached(\.attributes, entity) { model.allAttributes(of: entity) } }
    /// The attributes R-P8 checks a final state against: required ones and those with a constraint.
    func checkedAttributes(of entity: String) -> [Attribute] {
        cached(\.checkedAttributes, entity) {
            attributes(of: entity).filter { !$0.optional || $0.minValue != nil || $0.maxValue != nil || $0.minLength != nil || $0.maxLength != nil || $0.regex != nil }
        }
    }
    func relationships(of entity: String) -> [Relationship] { cached(\.relationships, entity) { model.allRelationships(of: entity) } }
    func keyAttributes(of entity: String) -> [String] { cached(\.keys, entity) { model.identificationAttributes(of: entity) } }
    func root(of entity: String) -> String { cached(\.roots, entity) { model.rootEntity(of: entity) } }
    func isAbstract(_ entity: String) -> Bool { cached(\.abstract, entity) { model.entity(named: entity)?.abstract == true } }

    /// The type of `entity`'s attribute `name` (declared on it or inherited); nil when it has none.
    /// Asked for every mapped value: a lookup here copies nothing, `Model.attribute` copies the attribute.
    func attributeType(_ name: String, of entity: String) -> AttributeType? {
        let key = PropertyKey(entity: entity, name: name)
        if let type = attributeTypes[key] { return type }
        let type = model.attribute(name, of: entity)?.type
        attributeTypes[key] = type
        return type
    }
    /// An attribute's compiled `regex` (nil for one ICU rejects: model validation refuses those).
    func regex(_ pattern: String) -> WholeStringRegex? { cached(\.regexes, pattern) { try? WholeStringRegex(pattern) } }

    private func cached<T>(_ table: ReferenceWritableKeyPath<EntityTables, [String: T]>, _ entity: String, _ compute: () -> T) -> T {
        if let value = self[keyPath: table][entity] { return value }
        let value = compute()
        self[keyPath: table][entity] = value
        return value
    }
}

/// One representation's mapped state. A class: nodes are shared by identity and referenced by
/// relationships of other nodes.
final class MappedNode {
    /// The mapping, shared by every node read with it: an `EntityMapping` is several hundred bytes,
    /// which a payload of many small objects would otherwise hold once per node.
    let mappingReference: MappingReference
    /// Borrowed, not copied: a copy would retain each of the mapping's parts on every access.
    var mapping: EntityMapping { _read { yield mappingReference.mapping } }
    let pointer: String
    /// The entity the object is inserted as.
    let entity: String
    /// The entity whose hierarchy identification searches: a dynamic mapping's base, so that an
    /// existing object is found whatever the discriminator says (R-P9).
    var identificationEntity: String
    /// The identification values; nil when the mapping has no identification attributes (R-I4).
    let identity: [AttributeValue]?
    /// Mapped attribute values: a key present with nil is an explicit JSON null (R-P4).
    var values: [String: AttributeValue?] = [:]
    /// Relationship assignments in mapping order: nil destinations means JSON null.
    var relationships: [(mapping: RelationshipMapping, destinations: [MappedNode]?)] = []
    /// Only an identity was given (R-P5): find it, or insert a stub.
    var isReference: Bool
    var errors: [CartographError.Detail] = []
    var existing: ExistingObject?
    var id: Int64?
    var discarded = false
    /// `modificationAttribute` says the stored object is current (R-P7).
    var skipped = false
    /// Written values or relationships changed (an update, not `unchanged`).
    var changed = false
    /// Why this representation cannot insert (an abstract entity, an unknown discriminator: R-P9);
    /// it may still update an existing object.
    var insertionProblem: CartographError.Detail?
    /// The representation as read through a dynamic mapping, kept to read it again by the stored
    /// object's entity (R-P9).
    var dynamicSource: (representation: JSONValue, parent: JSONValue, base: MappingReference)?
    /// Looked up in the store already (phase 2).
    var identified = false
    /// Read ahead of the payload, identity and modification value only: R-P7 found the stored object
    /// current, so nothing else of the representation is mapped.
    var readAhead = false
    /// Foreign-key connections resolved before the write (to-one: the insert writes their destination).
    var preconnected: [MappingRun.ForeignKeyResolution] = []
    /// Reached from a top-level representation through objects that are not skipped: only these are
    /// mapped (a skipped object's nested representations are skipped with it, as in RestKit).
    var reachable = false
    /// R-P17: how its representations drifted from a mapping whose contract is not `evolve`.
    var driftProblems: [CartographError.Detail] = []

    init(mapping: MappingReference, pointer: String, identity: [AttributeValue]?, isReference: Bool) {
        self.mappingReference = mapping
        self.pointer = pointer
        self.entity = mapping.mapping.entity
        self.identificationEntity = mapping.mapping.entity
        self.identity = identity
        self.isReference = isReference
    }

    var isNew: Bool { existing == nil }
}

/// An `EntityMapping` held once for the nodes that share it (see `MappingRun.reference(to:)`).
/// It also holds what reading a representation with the mapping needs from the model, found once for
/// the payload rather than looked up by name for every object.
final class MappingReference {
    let mapping: EntityMapping
    /// The keys `mapping` reads (R-P17), found when a representation is first checked for drift.
    private var keys: RepresentationKeys?
    /// The type of each attribute mapping's attribute, by the mapping's index (nil: not in the model).
    let attributeTypes: [AttributeType?]
    /// Whether each relationship mapping's relationship is to-many, by index (nil: not in the model).
    let relationshipIsToMany: [Bool?]
    /// The root of the mapping's entity's hierarchy: nodes are interned by it (R-I5).
    let rootEntity: String
    let isAbstract: Bool
    /// The references of the relationship mappings' own mappings, by index, as first met.
    var destinations: [Destination]
    /// The lookup group (`MappingRun.identificationGroup`) of objects identified in the mapping's own
    /// entity's hierarchy: built once, not for every object identified.
    private(set) lazy var identificationGroup = MappingRun.identificationGroup(entity: mapping.entity, mapping: mapping)

    /// What reading a relationship mapping's destinations starts from.
    enum Destination {
        case unknown
        /// The destinations' mapping reads them as it is: its shared reference.
        case plain(MappingReference)
        /// The mapping is a reference, dynamic or transformed: each representation chooses (`MappingRun.choose`).
        case chosenPerRepresentation
    }

    init(_ mapping: EntityMapping, model: Model, tables: EntityTables) {
        self.mapping = mapping
        attributeTypes = mapping.attributes.map { tables.attributeType($0.attribute, of: mapping.entity) }
        relationshipIsToMany = mapping.relationships.map { model.relationship($0.relationship, of: mapping.entity)?.toMany }
        rootEntity = tables.root(of: mapping.entity)
        isAbstract = tables.isAbstract(mapping.entity)
        destinations = Array(repeating: .unknown, count: mapping.relationships.count)
    }

    /// Whether a representation is read with `mapping` as it is: no reference to resolve, no
    /// dictionary transformer, no dynamic choice.
    static func readsAsItIs(_ mapping: EntityMapping) -> Bool {
        mapping.reference == nil && !mapping.isAnnotationReference && mapping.dynamic == nil && mapping.dictionaryTransformer == nil
    }

    /// The keys the mapping reads from a representation, with `discriminator`, the key path of the
    /// dynamic mapping that chose it (read whenever it chooses this mapping).
    func representationKeys(discriminator: SourceKeyPath?) -> RepresentationKeys {
        if let keys { return keys }
        let found = RepresentationKeys(readBy: mapping, discriminator: discriminator)
        keys = found
        return found
    }
}

extension MappingEngine {
    /// The request's query parameters `mapping` reads (`@metadata.query.<name>`, R-P1), in itself and
    /// every mapping it reaches, and those its cursor is kept per (R-P16): the payload routes accept these
    /// beside their own parameters. Reading `@metadata.query` whole names none: a misspelt parameter must
    /// not pass for one the mapping reads.
    public func queryParameters(readBy mapping: EntityMapping) -> Set<String> {
        var names = Set(mapping.cursor?.scope ?? [])
        func add(_ path: SourceKeyPath?) {
            guard let path, path.root == .metadata, path.components.count > 1, path.components[0] == "query" else { return }
            names.insert(path.components[1])
        }
        for reached in reachableMappings(from: mapping) {
            add(reached.keyPath)
            add(reached.dynamic?.keyPath)
            reached.attributes.forEach { add($0.source) }
            reached.relationships.forEach { add($0.source) }
        }
        return names
    }
}
