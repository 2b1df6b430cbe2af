// Ingestion (R-P11, docs/mapping.md "Posting a payload"): one operation that the HTTP route and
// `cartograph map` both call. It reads the payload before the write lock, then maps it inside one write
// transaction under the model that transaction writes with, with the idempotency key and the storage
// quota checked in that same transaction, and answers the document its caller writes of the result.
public import CartographCore
public import CartographMapping
import Synchronization

/// Where a payload's mapping comes from.
public enum MappingSource: Sendable {
    /// A mapping document (as registered: it is parsed against the model the payload is mapped with),
    /// and the name it is registered under (nil for one that is not), which its `{"ref": …}` may name.
    case document(JSONValue, name: String?)
    /// The mapping an entity's annotations define (R-P10); with `discardsInvalidObjectsOnInsert` (R-P8)
    /// on it and every annotation mapping it nests.
    case annotations(entity: String, discardsInvalidObjectsOnInsert: Bool = false)

    /// The mapping for `model` (a migration may have committed since the document was registered), and
    /// the registered mappings its references reach, by name, looked up in `store`.
    func mappings(for model: Model, in store: ModelStore) throws(CartographError) -> (mapping: EntityMapping, named: [String: EntityMapping]) {
        switch self {
        case .document(let document, let name):
            return try EntityMapping.parse(document, model: model, name: name) { other in try? store.mappings(named: other).first?.document }
        case .annotations(let entity, let discards):
            var mapping = EntityMapping.annotationMapping(of: entity, model: model, discardsInvalidObjectsOnInsert: discards)
            // The entity payload route takes an array of identity values as well as of objects.
            mapping.identityReferences = true
            return (mapping, [:])
        }
    }
}

/// A mapping document parsed against a model, and the engine that maps with it (`ModelStore.preparedMapping`).
struct PreparedMapping: Sendable {
    let modelVersion: Int
    let document: JSONValue
    let name: String?
    let maximumObjects: Int
    let mapping: EntityMapping
    let engine: MappingEngine
}

extension ModelStore {
    /// How many parsed mappings a store keeps (a load posts many payloads with one or two).
    static let preparedMappingLimit = 8

    /// The mapping from `source` parsed for `model`, and an engine for it (with the registered mappings
    /// its references reach). A load posts many payloads with one registered mapping: a document without
    /// references to other mappings is parsed and its engine built (the model's value transformers
    /// resolved) once per model version, not per payload. One that refers to another is parsed every
    /// time, as the mapping it names may have been registered again since.
    func preparedMapping(_ source: MappingSource, model: Model, maximumObjects: Int) throws(CartographError)
        -> (mapping: EntityMapping, engine: MappingEngine) {
        if case .document(let document, let name) = source, let kept = preparedMappings.withLock({ (prepared) in
            prepared.first { $0.modelVersion == model.version && $0.maximumObjects == maximumObjects && $0.name == name && $0.document == document }
        }) {
            return (kept.mapping, kept.engine)
        }
        let (mapping, named) = try source.mappings(for: model, in: self)
        let engine = try MappingEngine(model: model, maximumObjects: maximumObjects, namedMappings: named)
        // `named` holds the mapping itself under its name: kept only when it reaches no other.
        if case .document(let document, let name) = source, named.keys.allSatisfy({ $0 == name }) {
            let parsed = PreparedMapping(modelVersion: model.version, document: document, name: name, maximumObjects: maximumObjects,
                                         mapping: mapping, engine: engine)
            preparedMappings.withLock { (prepared) in
                prepared.removeAll { $0.modelVersion != model.version }
                if prepared.count >= Self.preparedMappingLimit { prepared.removeFirst() }
                prepared.append(parsed)
            }
        }
        return (mapping, engine)
    }

    /// Parses a mapping document registered (or to be registered) as `name` against `model`, its
    /// `{"ref": …}` references checked against the mappings registered in this store.
    public func parseMapping(_ document: JSONValue, name: String?, model: Model) throws(CartographError) -> EntityMapping {
        try EntityMapping.parse(document, model: model, name: name) { [self] other in try? mappings(named: other).first?.document }.mapping
    }

    /// The query parameters a payload mapped through `source` reads (`@metadata.query.<name>`, R-P1),
    /// through every mapping it reaches. `maximumObjects` is the payload's, so that the mapping prepared
    /// here is the one its ingestion finds kept (`preparedMapping` keeps one per limit).
    public func queryParameters(readBy source: MappingSource, model: Model, maximumObjects: Int) throws(CartographError) -> Set<String> {
        let (mapping, engine) = try preparedMapping(source, model: model, maximumObjects: maximumObjects)
        return engine.queryParameters(readBy: mapping)
    }
}

/// R-S2's storage limit for a payload's write: the tenant's limit and what its other stores hold.
public struct StorageQuota: Sendable {
    public var tenant: String
    public var maxBytes: Int64
    /// The last known sizes of the tenant's other stores, summed.
    public var otherStoresBytes: Int64

    public init(tenant: String, maxBytes: Int64, otherStoresBytes: Int64) {
        self.tenant = tenant
        self.maxBytes = maxBytes
        self.otherStoresBytes = otherStoresBytes
    }

    /// Refuses a write that grows the store to over the limit; a write that does not grow it passes
    /// even over the limit (deletions, and writes that fit in pages already in use).
    func check(before: Int64, after: Int64) throws(CartographError) {
        guard after > before, otherStoresBytes + after > maxBytes else { return }
        throw CartographError(
            .quotaExceeded, "This payload would bring tenant '\(tenant)' to \(otherStoresBytes + after) bytes of storage, over its limit of "
                + "\(maxBytes) bytes; nothing was stored. Delete objects or models, or ask the operator to raise maxStoreBytes.")
    }
}

/// How one payload is ingested.
public struct IngestOptions: Sendable {
    /// `{"receivedAt", "query", "header"}` for `@metadata.` key paths (R-P1).
    public var metadata: JSONValue
    /// R-P13: a per-object trace and phase timings; implies a dry run.
    public var explain: Bool
    /// Map everything and roll it back (R-P11).
    public var dryRun: Bool
    /// The idempotency key and the hash of the request it came with (R-P11).
    public var idempotency: (key: String, requestHash: [UInt8])?
    /// Most representations a payload may hold (R-S2).
    public var maximumObjects: Int
    public var quota: StorageQuota?
    /// The snapshot session the payload is a page of (R-D5 across pages): its deleteMissing waits for
    /// the session's completion, and what it mentioned is recorded with the page.
    public var snapshot: SnapshotSession?
    /// R-P18: the payload is an archived one mapped again. It is not archived again, its drift is not
    /// counted again, and its mapping's deleteMissing waits as a snapshot session's page's does (a payload
    /// replayed alone is not the snapshot it was part of).
    public var replaying = false
    /// How the body is written: JSON, or newline-delimited JSON whose lines are the representations
    /// (mapped as the array at the mapping's key path; see `NDJSONDocument`).
    public var format = PayloadFormat.json

    public enum PayloadFormat: Sendable { case json, ndjson }

    public init(metadata: JSONValue = .object(JSONObject()), explain: Bool = false, dryRun: Bool = false,
                idempotency: (key: String, requestHash: [UInt8])? = nil, maximumObjects: Int = MappingEngine.defaultMaximumObjects, quota: StorageQuota? = nil,
                snapshot: SnapshotSession? = nil) {
        self.metadata = metadata
        self.explain = explain
        self.dryRun = dryRun || explain
        self.idempotency = idempotency
        self.maximumObjects = maximumObjects
        self.quota = quota
        self.snapshot = snapshot
    }
}

/// Writes the document that answers a payload from its mapping result and the sequence number it
/// committed at (nil for a dry run): its caller's words (CartographHTTP's `ResultDocument`, R-P12). The
/// store keeps what it wrote with an idempotency key, to answer a retry with the same bytes.
public typealias ResultWriter = (_ result: MappingResult, _ changeSeq: Int64?) -> [UInt8]

/// What ingesting a payload answers.
public struct IngestResult: Sendable {
    /// The document `ResultWriter` wrote of the mapping result with its `changeSeq`, or the one stored
    /// with the idempotency key.
    public var body: [UInt8]
    /// What this request committed (its counts feed the metrics); nil for a dry run, or when the result
    /// stored with the idempotency key was answered. Counts only: the mapping result itself (a key per
    /// object) is freed once the body is written.
    public var committed: MappedCounts?
}

/// How many objects a committed payload inserted, updated, left unchanged and deleted.
public struct MappedCounts: Sendable {
    public let inserted: Int, updated: Int, unchanged: Int, deleted: Int
    /// How many times the payload drifted from its mapping (R-P17).
    public let drifted: Int

    init(_ result: MappingResult) {
        (inserted, updated, unchanged, deleted) = (result.inserted, result.updated, result.unchanged, result.deleted)
        drifted = result.drift.reduce(result.driftNotListed) { $0 + $1.count }
    }
}

extension ModelStore {
    /// Ingests one payload `body` with the mapping from `source`, read for `model` (the store's published
    /// model): parsed and read into objects before the write transaction, R-P7's read-ahead looking objects
    /// up on the writer connection (`ReadAheadLookup`); then mapped inside one write transaction (`applyPayload`: idempotency key, quota). A
    /// migration committed in between is met there: the payload is mapped with the model the transaction
    /// writes under. A syntax error is a bad request with its offset; nothing is stored on any error. `answer`
    /// writes the result's document.
    public func ingest(_ body: [UInt8], mapping source: MappingSource, model: Model, reader: JSONReader = JSONReader(),
                       options: IngestOptions, answer: ResultWriter,
                       progress: ((String, Int, Int) -> Void)? = nil) throws(CartographError) -> IngestResult {
        /// The mapping for `model` and its engine, which defers deleteMissing to a snapshot session's end.
        func prepared(for model: Model) throws(CartographError) -> (mapping: EntityMapping, engine: MappingEngine) {
            var (mapping, engine) = try preparedMapping(source, model: model, maximumObjects: options.maximumObjects)
            engine.defersDeleteMissing = options.snapshot != nil || options.replaying
            return (mapping, engine)
        }
        let (mapping, engine) = try prepared(for: model)
        if let session = options.snapshot, mapping.deleteMissing == nil { throw SnapshotSessionTables.needsDeleteMissing(session) }
        switch options.format {
        case .json:
            return try ingest(body, planned: nil, mapping: mapping, engine: engine, source: source, model: model, reader: reader, options: options,
                              answer: answer, progress: progress, prepared: prepared)
        case .ndjson:
            // Mapped as the JSON document its lines make; what goes wrong is told by line. A payload of several
            // chunks maps its lines where they stand, without that document's copy of the body, unless its
            // mapping keeps an archive (which stores the document).
            let document = try NDJSONDocument(ndjson: body, keyPath: mapping.resolved(in: model).keyPath?.components ?? [])
            var streamed: StreamedPayload?
            if mapping.archive == nil {
                do {
                    streamed = try engine.streamingPlan(ndjson: body, values: document.count, reader: reader, mapping: mapping,
                                                        metadata: options.metadata, explain: options.explain)
                } catch {
                    throw document.locating(CartographError(error), offsets: .body)
                }
            }
            do {
                return try ingest(streamed.map { _ in body } ?? document.json, planned: streamed.map { .streamed($0) }, mapping: mapping,
                                  engine: engine, source: source, model: model, reader: reader, options: options, answer: answer,
                                  progress: progress, prepared: prepared)
            } catch {
                throw document.locating(error, offsets: streamed == nil ? .json : .body)
            }
        }
    }

    /// `planned`: the payload as already prepared (an NDJSON body's lines planned for chunks); nil to prepare `body`.
    private func ingest(_ body: [UInt8], planned: PreparedPayload?, mapping: EntityMapping, engine: MappingEngine, source: MappingSource,
                        model: Model, reader: JSONReader,
                        options: IngestOptions, answer: ResultWriter, progress: ((String, Int, Int) -> Void)?,
                        prepared: (Model) throws(CartographError) -> (mapping: EntityMapping, engine: MappingEngine)) throws(CartographError) -> IngestResult {
        // R-P18: deflated here, before the write lock; recorded just before COMMIT, with the changeSeq.
        let archiving = try PayloadArchiving(body, source: source, mapping: mapping, options: options)
        // A large array of flat objects is planned for mapping in chunks from the body's bytes (bounded
        // memory); a re-load's is read shallowly (not when the mapping's last payload was mostly new objects:
        // a first load's); any other payload is parsed whole.
        let loadKey = ReadAheadHistory.key(source, mapping: mapping)
        let payload: PreparedPayload
        if let planned { payload = planned } else {
            payload = try engine.prepare(body: body, reader: reader, mapping: mapping, metadata: options.metadata, explain: options.explain,
                                         shallow: !readAheadHistory.wasMostlyNew(loadKey))
        }
        // R-P7's read-ahead and the identification of the payload's objects look in a read snapshot.
        let snapshot = readAheadLookup(for: model)
        let read = try engine.read(payload, mapping: mapping, metadata: options.metadata, explain: options.explain, snapshot: snapshot)
        if let read { readAheadHistory.record(loadKey, mostlyNew: read.mostlyNew) }
        var checkBytes: ((_ before: Int64, _ after: Int64) throws(CartographError) -> Void)?
        if let quota = options.quota { checkBytes = quota.check(before:after:) }
        return try applyPayload(idempotency: options.idempotency, dryRun: options.dryRun, checkBytes: checkBytes, archiving: archiving, answer: answer) {
            (transaction) throws(CartographError) -> MappingResult in
            let result: MappingResult
            var mappedWith = mapping
            if transaction.model.version != model.version {
                // New objects must get the defaults of attributes a migration added (R-P4, R-M6).
                let migrated = try prepared(transaction.model)
                mappedWith = migrated.mapping
                result = try migrated.engine.map(payload, mapping: mappedWith, metadata: options.metadata, explain: options.explain,
                                                 progress: progress, into: transaction)
            } else if let read {
                result = try engine.map(read, progress: progress, into: transaction)
            } else {
                result = try engine.map(payload, mapping: mapping, metadata: options.metadata, explain: options.explain,
                                        progress: progress, into: transaction)
            }
            if case .document(_, let name?) = source {
                if let cursor = mappedWith.cursor, let value = result.cursorValue {
                    try transaction.advanceCursor(mapping: name, entity: mappedWith.entity, cursor: cursor, value: value, metadata: options.metadata)
                }
                if !result.drift.isEmpty, !options.replaying { try transaction.recordDrift(mapping: name, result.drift) }
            }
            if let session = options.snapshot {
                // In the page's own transaction: a page is never committed without its mentions.
                try transaction.recordSnapshotPage(session, mapping: mappedWith, mentioned: result.mentionedIDs ?? [])
            }
            return result
        }
    }
}
