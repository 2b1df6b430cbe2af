// Streamed payloads (issue 14, bounded memory): a large array of flat representations is mapped in
// chunks inside the one transaction (R-P11) — each chunk read from the request's bytes, identified,
// validated, written and summarized before the next is parsed — so that neither the payload's JSON
// values nor its nodes are held whole. The result is the one `map` gives the whole payload; payloads
// and mappings for which chunks could differ from it take the whole-payload path instead.
public import CartographCore

/// A payload the engine can map in chunks, found by `MappingEngine.streamingPlan`.
public struct StreamedPayload: Sendable {
    /// The request body (a valid JSON document).
    public let body: [UInt8]
    let reader: JSONReader
    /// The top-level array: the value at the mapping's key path, or the root.
    let array: JSONArrayLocation
    /// The pointer of the array (`/items`); an element's is this plus `/<index>`.
    let pointer: String
    /// The mapping the plan was made for: a transaction under another model maps the whole payload.
    public let mapping: EntityMapping
    /// The request's metadata the plan read identities with (`@metadata` key paths): mapped with other
    /// metadata, the payload is mapped whole.
    let metadata: JSONValue
    /// Nested objects met in several chunks, every copy alike, by identity hash (`MappingRun.identityHash(of:)`):
    /// each chunk writes them, the first to map them counts and lists them.
    let shared: Set<Int>
    /// The document with an empty array in place of the top-level one: what `@root.` key paths, and
    /// `@parent.` ones of top-level representations, read (none reads into the array). Null when no
    /// mapping reads outside its representations.
    let container: JSONValue
    /// Set when `body` is NDJSON: its lines are the array (`JSONArrayLocation.lines`), and the document
    /// they stand for is `{"k1": {"k2": [line, …]}}` for this key path `k1.k2`.
    let ndjsonKeyPath: [String]?
    /// A flat mapping's top-level objects met again in a later chunk, in document order. R-I5 merges
    /// every copy of an object before anything is validated, so the copies are read with the chunk of the
    /// first one, and left out of the chunks they stand in; each is still listed in `objects` where it stands.
    let laterCopies: [ElementCopy]
    /// By identity hash (`MappingRun.identityHash(of:sources:)`), an object's first copy in `laterCopies`.
    let firstLaterCopy: [Int: Int32]

    /// Flat, with a link to the object's next copy: a payload of a million objects each posted twice holds
    /// no array per object.
    struct ElementCopy: Sendable {
        let index: Int
        let offset: Int
        /// The position in `laterCopies` of the object's next copy; -1 for its last.
        var next: Int32 = -1
    }

    /// `{"k1": {"k2": value}}` for a key path `k1.k2`; `value` itself without one.
    static func document(holding value: JSONValue, at keyPath: [String]) -> JSONValue {
        keyPath.reversed().reduce(value) { .object(JSONObject([($1, $0)])) }
    }
}

/// A request body ready to map: parsed whole, planned for mapping in chunks, or read shallowly.
public enum PreparedPayload: Sendable {
    case whole(JSONValue)
    case streamed(StreamedPayload)
    case shallow(ShallowPayload)

    /// The whole document (parsed from the body when it was not kept).
    func document() throws(CartographError) -> JSONValue {
        let (body, reader): ([UInt8], JSONReader)
        switch self {
        case .whole(let json): return json
        case .streamed(let streamed) where streamed.ndjsonKeyPath != nil:
            var lines: [JSONValue] = []
            lines.reserveCapacity(streamed.array.count)
            streamed.reader.forEachElement(in: streamed.body, of: streamed.array) { _, _, line in lines.append(line) }
            return StreamedPayload.document(holding: .array(lines), at: streamed.ndjsonKeyPath ?? [])
        case .streamed(let streamed): (body, reader) = (streamed.body, streamed.reader)
        case .shallow(let shallow): (body, reader) = (shallow.body, shallow.reader)
        }
        do { return try reader.parse(body) } catch { throw CartographError(error) }
    }
}

extension MappingEngine {
    /// Top-level representations mapped per chunk.
    public static let defaultChunkSize = 2048

    /// Reads `body` for `mapping` before the write transaction: planned for chunks when `streamingPlan`
    /// accepts it, read shallowly when `shallowPlan` does, parsed whole otherwise. A syntax error is a
    /// 400 with its offset.
    /// - Parameter shallow: whether a payload that can be read shallowly is (see `ReadPayload.mostlyNew`).
    public func prepare(body: [UInt8], reader: JSONReader, mapping: EntityMapping, metadata: JSONValue,
                        explain: Bool, shallow: Bool = true) throws(CartographError) -> PreparedPayload {
        do {
            if let streamed = try streamingPlan(body: body, reader: reader, mapping: mapping, metadata: metadata, explain: explain) {
                return .streamed(streamed)
            }
            if shallow, let shallow = try shallowPlan(body: body, reader: reader, mapping: mapping) { return .shallow(shallow) }
            return .whole(try reader.parse(body))
        } catch { throw CartographError(error) }
    }

    /// Maps a prepared payload with `mapping` into `store` (inside a transaction): in chunks when it was
    /// planned for this very mapping, whole otherwise (a migration committed since may have changed it).
    public func map(_ payload: PreparedPayload, mapping: EntityMapping, metadata: JSONValue = .object(JSONObject()), explain: Bool = false,
                    progress: ((String, Int, Int) -> Void)? = nil, into store: some MappingStore) throws(CartographError) -> MappingResult {
        if case .streamed(let streamed) = payload, streamed.mapping == mapping, streamed.metadata == metadata {
            return try map(streamed, progress: progress, into: store)
        }
        let read = try read(payload, mapping: mapping, metadata: metadata, explain: explain, lookup: store)
        return try map(read, progress: progress, into: store)
    }

    /// Phase 1 of a prepared payload before the write transaction (see `read(_:mapping:…)`): its
    /// representations read into nodes, R-P7's read-ahead looking in `snapshot`, a read snapshot of the
    /// store, in which the objects they stand for are then identified (`MappingRun.identifyAhead`).
    /// Nil for a payload planned for chunks: each chunk is read inside the transaction.
    public func read(_ payload: PreparedPayload, mapping: EntityMapping, metadata: JSONValue = .object(JSONObject()), explain: Bool = false,
                     snapshot: (any SnapshotLookup)?) throws(CartographError) -> ReadPayload? {
        if case .streamed(let streamed) = payload, streamed.mapping == mapping, streamed.metadata == metadata { return nil }
        // The head is asked after the read: the lookups read it with their objects.
        var read = try read(payload, mapping: mapping, metadata: metadata, explain: explain, lookup: snapshot)
        read.snapshotHead = snapshot?.snapshotHead
        if let snapshot { try read.run.identifyAhead(in: snapshot) }
        return read
    }

    /// Phase 1 of a prepared payload (not one to map in chunks): shallowly when it was read so for this
    /// very mapping, from the whole document otherwise.
    func read(_ payload: PreparedPayload, mapping: EntityMapping, metadata: JSONValue, explain: Bool,
              lookup: (any MappingLookup)?) throws(CartographError) -> ReadPayload {
        if case .shallow(let shallow) = payload, shallow.mapping == mapping {
            return try read(shallow, metadata: metadata, explain: explain, lookup: lookup)
        }
        return try read(try payload.document(), mapping: mapping, metadata: metadata, explain: explain, lookup: lookup)
    }

    /// Whether `body` can be mapped in chunks with `mapping`, checked before the transaction:
    /// - no mapping it reaches has key-path connections (R-P6 `replace` deletes what chunks dropped, and R-D5 `deleteMissing` what
    ///   no chunk mentioned, once the last chunk is written);
    /// - no key path reading `@root`, nor a top-level mapping's reading `@parent` (the document holding the
    ///   array), reaches into the array or a container of it: those read the rest of the document, parsed
    ///   once without the array (`StreamedPayload.container`);
    /// - the payload is a JSON object whose key path is an array (or a root array, with no key path)
    ///   of more than one chunk of objects (or nulls);
    /// - no object is met in two chunks (R-I5 merges the copies of one object before anything is
    ///   validated; the run merges those of one chunk as it merges a whole payload's), except a nested
    ///   one whose copies are all alike (`MappingRun.contentHash`), never at the top level, reached only
    ///   through relationships whose inverse is to-many (so no copy moves it from one object to
    ///   another): an author or a tag many objects name, written by each chunk, counted by the first;
    ///   and except a top-level object of a flat mapping (no relationship mappings, `dynamic`, dictionary
    ///   transformer or foreign-key connection), whose later copies are read with its first copy's chunk
    ///   (`StreamedPayload.laterCopies`): an event log naming one object at several versions;
    /// - no foreign-key connection names an object a later chunk writes (R-C1 connects once every object
    ///   is written: a chunk's connections run once it is written), by attributes that are the identity of
    ///   every object of the destination's hierarchy the payload holds (so no later chunk changes them);
    ///   its values are read from the representation;
    /// - and no explain trace is asked for.
    /// Otherwise nil, and the payload is mapped whole. Checking the document costs one pass over it
    /// (after one to find the array), building one element at a time: a flat mapping hashes its
    /// identity, one with relationship mappings, `dynamic` or a dictionary transformer reads the element
    /// as the chunk will. A syntax error is thrown as parsing would throw it.
    /// Identities read from `@metadata` are read from `metadata`, the request's.
    public func streamingPlan(body: [UInt8], reader: JSONReader, mapping base: EntityMapping, metadata: JSONValue = .object(JSONObject()),
                              explain: Bool) throws(JSONSyntaxError) -> StreamedPayload? {
        guard !explain, body.count > 0, let chunkable = chunkableMapping(base),
              let array = reader.locateArray(in: body, at: chunkable.path), array.count > chunkSize else { return nil }
        try reader.validate(body)
        let container = chunkable.readsOutside
            ? try reader.parse(Array(body[..<array.offset]) + Array("[]".utf8) + Array(body[array.end...])) : .null
        return try plan(body: body, reader: reader, array: array, ndjsonKeyPath: nil, container: container, chunkable: chunkable, base: base,
                        metadata: metadata)
    }

    /// `streamingPlan` for an NDJSON body whose `values` lines are the array at the mapping's key path (as
    /// `NDJSONDocument` reads them): its lines are mapped where they stand, without a JSON copy of the body.
    /// A syntax error's offset is the body's.
    public func streamingPlan(ndjson body: [UInt8], values: Int, reader: JSONReader, mapping base: EntityMapping,
                              metadata: JSONValue = .object(JSONObject()), explain: Bool) throws(JSONSyntaxError) -> StreamedPayload? {
        guard !explain, values > chunkSize, let chunkable = chunkableMapping(base) else { return nil }
        try reader.validateValues(body)
        // The document the lines stand for holds nothing but them: `{"k1": {"k2": []}}` outside the array.
        let container = chunkable.readsOutside ? StreamedPayload.document(holding: .array([]), at: chunkable.path) : .null
        return try plan(body: body, reader: reader, array: .lines(count: values, in: body), ndjsonKeyPath: chunkable.path,
                        container: container, chunkable: chunkable, base: base, metadata: metadata)
    }

    /// What `streamingPlan` knows of a mapping every chunk of which maps as the whole payload.
    private struct ChunkableMapping {
        /// The resolved top-level mapping, and every mapping it reaches.
        let mapping: EntityMapping, reachable: [EntityMapping]
        /// The top-level mapping's key path.
        let path: [String]
        /// Whether a key path reads outside the representations (`@root.`, a top-level `@parent.`).
        let readsOutside: Bool
    }

    /// The mapping `base` is, when every mapping it reaches maps a chunk as the whole payload (see
    /// `streamingPlan`); nil otherwise.
    private func chunkableMapping(_ base: EntityMapping) -> ChunkableMapping? {
        let mapping = resolve(base)
        let reachable = reachableMappings(from: base)
        guard reachable.allSatisfy(mapsInChunks) else { return nil }
        let path = mapping.keyPath?.components ?? []
        let outside = keyPathsOutsideRepresentations(of: mapping, reachable: reachable)
        // Without a key path the array is the document: anything read from outside reads it.
        guard outside.isEmpty || (!path.isEmpty && !outside.contains { $0.starts(with: path) || path.starts(with: $0) }) else { return nil }
        return ChunkableMapping(mapping: mapping, reachable: reachable, path: path, readsOutside: !outside.isEmpty)
    }

    /// The rest of `streamingPlan` once the array is found and the body checked: one pass over the array's
    /// elements deciding whether each chunk maps as the whole payload.
    private func plan(body: [UInt8], reader: JSONReader, array: JSONArrayLocation, ndjsonKeyPath: [String]?, container: JSONValue,
                      chunkable: ChunkableMapping, base: EntityMapping, metadata: JSONValue) throws(JSONSyntaxError) -> StreamedPayload? {
        let (mapping, reachable, path) = (chunkable.mapping, chunkable.reachable, chunkable.path)
        // A mapping that reads more than a flat representation's identity — nested objects, a case chosen
        // per representation (R-P9), a representation reshaped first (R-P14) — has its elements read.
        let targets = Set(reachable.flatMap { reached in
            reached.connections.compactMap { connection -> MappingRun.ForeignKeyTarget? in
                guard case .foreignKey(let pairs) = connection.kind,
                      let relationship = model.relationship(connection.relationship, of: reached.entity) else { return nil }
                return MappingRun.ForeignKeyTarget(root: model.rootEntity(of: relationship.destination), attributes: pairs.map(\.destination))
            }
        })
        let nested = !mapping.relationships.isEmpty || mapping.dynamic != nil || mapping.dictionaryTransformer != nil || !targets.isEmpty
        var run = MappingRun(engine: self, root: container, metadata: metadata)
        let identitySources = run.identitySources(of: mapping)
        // The identities of top-level objects met in earlier chunks and in this one (copies within a chunk
        // are merged by its run); with relationship mappings, the nested objects with their content
        // (`unshareable` when no copy may stand for another), and those named alike in several chunks.
        var topLevel = Set<Int>()
        var topHere = Set<Int>()
        var laterCopies: [StreamedPayload.ElementCopy] = []
        var firstLaterCopy: [Int: Int32] = [:]
        var lastLaterCopy: [Int: Int32] = [:]
        var representations = 0
        var nestedMet: [Int: Int] = [:]
        let unshareable = Int.min
        var shared = Set<Int>()
        var movesByRelationship: [String: Bool] = [:]
        var inChunk = 0
        var chunkable = true
        // Foreign keys: the destinations the chunks so far hold, and the values connections looked for that
        // no chunk so far held (a later chunk must not hold them), each as a hash of target and values.
        var destinationsMet = Set<Int>()
        var lookedForBefore = Set<Int>()
        func key(_ target: MappingRun.ForeignKeyTarget, _ values: [AttributeValue]) -> Int {
            var hasher = Hasher()
            hasher.combine(target)
            hasher.combine(values)
            return hasher.finalize()
        }
        // Whether a mapping identifies its objects by exactly a target's attributes, by mapping and target:
        // asked of every object the plan reads, answered once.
        var identifiesByTarget: [ObjectIdentifier: [MappingRun.ForeignKeyTarget: Bool]] = [:]
        func identifies(_ node: MappedNode, by target: MappingRun.ForeignKeyTarget) -> Bool {
            let reference = ObjectIdentifier(node.mappingReference)
            if let known = identifiesByTarget[reference]?[target] { return known }
            let answer = Set(node.mapping.resolvedIdentificationAttributes) == Set(target.attributes)
            identifiesByTarget[reference, default: [:]][target] = answer
            return answer
        }
        /// Meets the connections of this chunk's objects and the destinations it holds; false when a chunk's
        /// connections would not run as the whole payload's (see above).
        func meetConnections() -> Bool {
            for node in run.nodes {
                for target in targets where target.root == run.tables.root(of: node.entity) {
                    guard identifies(node, by: target) else { return false }
                    var values: [AttributeValue] = []
                    for attribute in target.attributes {
                        guard case .some(.some(let value)) = node.values[attribute] else { break }
                        values.append(value)
                    }
                    guard values.count == target.attributes.count else { continue }
                    let met = key(target, values)
                    if lookedForBefore.contains(met) { return false }
                    destinationsMet.insert(met)
                }
            }
            for node in run.nodes where !node.mapping.connections.isEmpty {
                guard let lookups = run.foreignKeyLookups(of: node) else { return false }
                for (target, tuples) in lookups {
                    for tuple in tuples {
                        let lookedFor = key(target, tuple)
                        if !destinationsMet.contains(lookedFor) { lookedForBefore.insert(lookedFor) }
                    }
                }
            }
            return true
        }
        /// The nested objects the run read in this chunk, against those of earlier chunks.
        func meetNestedObjects() {
            // Objects named here through a relationship whose inverse is to-one: another copy would move them.
            var moving = Set<Int>()
            for node in run.nodes {
                for (relationshipMapping, destinations) in node.relationships {
                    let key = node.entity + "\u{0}" + relationshipMapping.relationship
                    let moves = movesByRelationship[key] ?? movesDestinations(of: relationshipMapping.relationship, entity: node.entity)
                    movesByRelationship[key] = moves
                    if moves { moving.formUnion((destinations ?? []).compactMap(run.identityHash(of:))) }
                }
            }
            for node in run.nodes {
                guard let hash = run.identityHash(of: node) else { continue }
                if topHere.contains(hash) {
                    if nestedMet[hash] != nil { chunkable = false }
                    continue
                }
                let content = moving.contains(hash) ? unshareable : run.contentHash(of: node) ?? unshareable
                if topLevel.contains(hash) {
                    chunkable = false
                } else if let first = nestedMet[hash] {
                    if first != unshareable, first == content { shared.insert(hash) } else { chunkable = false }
                } else {
                    nestedMet[hash] = content
                }
            }
            run.startChunk()
        }
        func endChunk() {
            // A flat mapping's copies of earlier chunks' objects never enter `topHere` (they are `laterCopies`).
            if nested, !topLevel.isDisjoint(with: topHere) { chunkable = false }
            if !targets.isEmpty, !meetConnections() { chunkable = false }
            if nested { meetNestedObjects() }
            topLevel.formUnion(topHere)
            topHere.removeAll(keepingCapacity: true)
            inChunk = 0
        }
        reader.forEachElement(in: body, of: array) { (index, offset, element) in
            guard chunkable else { return }
            switch element {
            case .null: return
            case .object:
                representations += 1
                if nested {
                    // Past the engine's maximumObjects: the whole payload's read reports it.
                    do {
                        let node = try run.read(element, mapping: base, parent: container, pointer: "")
                        if let hash = run.identityHash(of: node) { topHere.insert(hash) }
                    } catch {
                        chunkable = false
                    }
                } else if let hash = run.identityHash(of: element, sources: identitySources) {
                    guard !topLevel.contains(hash) else {
                        // A copy of an object an earlier chunk holds: read with that chunk, not counted in this one.
                        let position = Int32(laterCopies.count)
                        laterCopies.append(.init(index: index, offset: offset))
                        if let last = lastLaterCopy.updateValue(position, forKey: hash) {
                            laterCopies[Int(last)].next = position
                        } else {
                            firstLaterCopy[hash] = position
                        }
                        return
                    }
                    topHere.insert(hash)
                }
            default: chunkable = false  // a bare identity value (R-P5)
            }
            inChunk += 1
            if inChunk == chunkSize { endChunk() }
        }
        endChunk()
        // Over the object limit, the whole payload's read names the representation past it in document order;
        // chunks reading copies early would name another.
        guard chunkable, laterCopies.isEmpty || representations <= maximumObjects else { return nil }
        return StreamedPayload(body: body, reader: reader, array: array,
                               pointer: path.map { "/" + MappingRun.escape($0) }.joined(), mapping: base, metadata: metadata, shared: shared,
                               container: container, ndjsonKeyPath: ndjsonKeyPath, laterCopies: laterCopies,
                               firstLaterCopy: firstLaterCopy)
    }

    /// The key paths, from the document's root, that mappings read outside the representations they map:
    /// every `@root.` one, and the `@parent.` ones of the top-level mapping and its dynamic cases (whose
    /// parent is the document holding the array).
    private func keyPathsOutsideRepresentations(of topLevel: EntityMapping, reachable: [EntityMapping]) -> [[String]] {
        func sources(_ mapping: EntityMapping) -> [SourceKeyPath] {
            mapping.attributes.map(\.source) + mapping.relationships.compactMap(\.source) + (mapping.dynamic.map { [$0.keyPath] } ?? [])
        }
        let topLevelMappings = [topLevel] + (topLevel.dynamic?.cases.map { resolve($0.mapping) } ?? [])
        return reachable.flatMap(sources).filter { $0.root == .root }.map(\.components)
            + topLevelMappings.flatMap(sources).filter { $0.root == .parent }.map(\.components)
    }

    /// Whether a relationship moves a destination another object names: its inverse is to-one (a
    /// to-many with one moves the destination to its last parent, R-I5; a one-to-one steals it).
    private func movesDestinations(of name: String, entity: String) -> Bool {
        guard let relationship = model.relationship(name, of: entity) else { return true }
        guard let inverse = relationship.inverse else { return false }
        return !(model.relationship(inverse, of: relationship.destination)?.toMany ?? false)
    }

    /// Whether `mapping` (resolved) maps a chunk as it maps the whole payload: see `streamingPlan`.
    private func mapsInChunks(_ mapping: EntityMapping) -> Bool {
        mapping.connections.allSatisfy { if case .foreignKey = $0.kind { true } else { false } }
    }

    /// Maps a payload `streamingPlan` accepted, in chunks, into `store` (already inside a transaction);
    /// the result and the error are those `map` gives the whole payload. A store with connections
    /// waiting for arriving objects (R-C5) maps the whole payload.
    func map(_ streamed: StreamedPayload, progress: ((String, Int, Int) -> Void)? = nil,
             into store: some MappingStore) throws(CartographError) -> MappingResult {
        let mapping = streamed.mapping
        if try store.hasPendingConnections() {
            return try map(try PreparedPayload.streamed(streamed).document(), mapping: mapping, metadata: streamed.metadata, progress: progress, into: store)
        }
        var run = MappingRun(engine: self, root: streamed.container, metadata: streamed.metadata)
        // R-D1 deletes once every chunk is listed; the whole payload's list is written after it.
        if reachableMappings(from: mapping).contains(where: { $0.deletionPredicate != nil }) { run.listedByStoredKey = [] }
        // Problems found so far: once there is one, nothing more is written, but every later chunk is
        // still read and validated, so that the error lists what the whole payload's would.
        var failures: [CartographError.Detail] = []
        var chunk: [MappingRun.Selected] = []
        chunk.reserveCapacity(chunkSize)
        var done = 0
        let total = streamed.array.count
        // Later copies of top-level objects (`StreamedPayload.laterCopies`): the next one the elements reach,
        // the copies to read with this chunk (and the objects they are copies of, whose first copies this chunk
        // may hold twice), and the entries of copies read already, by index, listed where each copy stands.
        var nextCopy = 0
        let identitySources = streamed.laterCopies.isEmpty ? nil : run.identitySources(of: resolve(mapping))
        var copiesHere: [StreamedPayload.ElementCopy] = []
        var copiedHere = Set<Int>()
        var copiesRead: [Int: MappingRun.ListedObject] = [:]
        // The chunk's `objects` entries in document order: nil for its next own representation, an index
        // for a copy read with an earlier chunk.
        var listing: [Int?] = []
        func flush() throws(CartographError) {
            guard !chunk.isEmpty || !listing.isEmpty else { return }
            run.startChunk()
            // The copies read with this chunk follow its own representations, in document order.
            let own = chunk.count
            copiesHere.sort { $0.index < $1.index }
            for copy in copiesHere {
                let value: JSONValue
                do { value = try streamed.reader.value(in: streamed.body, at: copy.offset) } catch { throw CartographError(error) }
                chunk.append((value, streamed.container, streamed.pointer + "/\(copy.index)"))
            }
            var topLevel = try run.readSelected(chunk, mapping: mapping, lookup: store)
            if !run.readAheadMet { try run.identify(in: store) }
            if run.readAheadMet {
                // As in `map`: a representation met an object read ahead; read the chunk again without reading ahead.
                run.startChunk(readsAhead: false)
                topLevel = try run.readSelected(chunk, mapping: mapping, lookup: store)
                try run.identify(in: store)
            }
            run.markRepeatedShared(streamed.shared)
            failures += try run.validationFailures(topLevel: topLevel.map(\.node), in: store)
            if failures.isEmpty {
                try run.preconnect(in: store)
                let offset = done
                try run.write(progress: progress.map { report in { phase, count, _ in report(phase, offset + count, total) } }, into: store)
                try run.connect(in: store)
                if mapping.deleteMissing != nil { run.rememberMentioned() }
                run.rememberDeletionPredicates()
                // Counted here; listed below, each copy where it stands.
                _ = try run.summarize(topLevel: [], cursor: nil, in: store)
                let cursor = mapping.cursor?.attribute
                for (copy, entry) in zip(copiesHere, topLevel[own...]) { copiesRead[copy.index] = try run.listedObject(of: entry.node, cursor: cursor, in: store) }
                var nextOwn = 0
                for copy in listing {
                    if let copy {
                        if let entry = copiesRead.removeValue(forKey: copy) { run.list(entry) }
                    } else {
                        run.list(try run.listedObject(of: topLevel[nextOwn].node, cursor: cursor, in: store))
                        nextOwn += 1
                    }
                }
                if done == 0 {
                    // The objects list is as long as the first chunk's entries say: reserved once, not doubled.
                    run.result.reserveObjects(total - chunk.count)
                }
            }
            done += chunk.count
            chunk.removeAll(keepingCapacity: true)
            copiesHere.removeAll()
            copiedHere.removeAll()
            listing.removeAll(keepingCapacity: true)
        }
        try streamed.reader.forEachElement(in: streamed.body, of: streamed.array) { (index, _, element) throws(CartographError) in
            guard !element.isNull else { return }
            guard nextCopy == streamed.laterCopies.count || streamed.laterCopies[nextCopy].index != index else {
                listing.append(index)
                nextCopy += 1
                return
            }
            if let identitySources, let hash = run.identityHash(of: element, sources: identitySources),
               var position = streamed.firstLaterCopy[hash], copiedHere.insert(hash).inserted {
                while position >= 0 {
                    copiesHere.append(streamed.laterCopies[Int(position)])
                    position = streamed.laterCopies[Int(position)].next
                }
            }
            chunk.append((element, streamed.container, streamed.pointer + "/\(index)"))
            listing.append(nil)
            if chunk.count == chunkSize { try flush() }
        }
        try flush()
        guard failures.isEmpty else { throw MappingRun.invalidPayload(failures) }
        run.startChunk()
        try run.deleteDroppedDestinations(in: store)
        try run.applyDeletions(of: mapping, in: store)
        try run.relistDeleted(in: store)
        return run.result
    }
}
