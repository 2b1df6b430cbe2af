// Mapping documents (docs/mapping.md): registered per model, validated against it with a JSON Pointer per
// problem, stored normalized in the model's store.
import CartographCore
import CartographMapping
import CartographStore

struct MappingRoutes: Sendable {
    static let mappings = "/v1/tenants/{tenant}/models/{model}/mappings"
    static let mapping = mappings + "/{mapping}"
    static let entity = ModelRoutes.entity
    static let snapshot = mapping + "/snapshots/{token}"

    let stores: StoreRegistry
    let lookup: ModelStoreLookup
    let limits: TenantLimitsInForce
    /// Most objects one payload may hold (`--max-objects-per-payload`).
    let maxObjectsPerPayload: Int
    let jsonReader: JSONReader
    let metrics: ServerMetrics
    /// The time of day a payload is `@metadata.receivedAt`.
    let clock: WallClock

    var routes: [Route] { [
        Route("GET", Self.mappings, access: .tenant(.read)) { context in
            let store = try lookup.existingModel(context)
            let items: [JSONValue] = try store.mappings().map { entry in
                ["name": .string(entry.name), "entity": entry.document["entity"] ?? .null]
            }
            return .json(["items": .array(items)])
        },
        Route("PUT", Self.mapping, access: .tenant(.admin), body: .json) { context in
            let (store, model) = try lookup.existingSchema(context)
            let name = context.parameter("mapping")
            let parsed = try store.parseMapping(try context.jsonBody(jsonReader), name: name, model: model)
            let created = try store.putMapping(name: name, document: parsed.json)
            return .json(parsed.json, status: created ? 201 : 200)
        },
        Route("GET", Self.mapping, access: .tenant(.read)) { context in
            let store = try lookup.existingModel(context)
            return .json(try Self.registeredMapping(context.parameter("mapping"), in: store))
        },
        Route("POST", Self.mapping + "/payloads", access: .tenant(.write), body: .payload, query: ["dryRun", "explain", "snapshot"],
              takesMappingQuery: true) { context in
            let (store, model) = try lookup.existingSchema(context)
            let name = context.parameter("mapping")
            // Re-validated against the current model: a migration may have changed it since registration.
            let mapping = MappingSource.document(try Self.registeredMapping(name, in: store), name: name)
            try context.refuseQueryParameters { () throws(CartographError) in try store.queryParameters(readBy: mapping, model: model, maximumObjects: maxObjectsPerPayload) }
            let snapshot = try context.request.queryValue("snapshot").map { (token) throws(CartographError) in
                try SnapshotSession(mapping: name, token: token, pointer: "/snapshot")
            }
            return try ingest(context, into: store, model: model, mapping: mapping, snapshot: snapshot)
        },
        // R-P16: where a fetcher resumes — the greatest cursor value committed, per scope.
        Route("GET", Self.mapping + "/cursor", access: .tenant(.read), takesMappingQuery: true) { context in
            let (store, model) = try lookup.existingSchema(context)
            let name = context.parameter("mapping")
            let mapping = try store.parseMapping(try Self.registeredMapping(name, in: store), name: name, model: model)
            guard let cursor = mapping.cursor else {
                throw CartographError(.notFound, "Mapping '\(name)' keeps no cursor; declare one with \"cursor\": \"<attribute>\" (docs/mapping.md).")
            }
            try context.refuseQueryParameters { Set(cursor.scope) }
            let matching = Dictionary(context.request.query.map { ($0.name, $0.value) }) { _, last in last }
            let cursors = try store.cursors(mapping: name, entity: mapping.entity, cursor: cursor, matching: matching)
            return .json(Self.cursorDocument(name, cursor, cursors))
        },
        // R-P17: each path at which the mapping's committed payloads drifted from it.
        Route("GET", Self.mapping + "/drift", access: .tenant(.read)) { context in
            let (store, _) = try lookup.existingSchema(context)
            let name = context.parameter("mapping")
            _ = try Self.registeredMapping(name, in: store)
            return .json(Self.driftDocument(name, try store.drift(mapping: name)))
        },
        // R-D5 across pages: a snapshot session's completion, and its abandonment.
        Route("POST", Self.snapshot + "/complete", access: .tenant(.write), query: ["dryRun"]) { context in
            let (store, session) = try snapshotSession(context)
            let document = try Self.registeredMapping(session.mapping, in: store)
            let dryRun = try ModelRoutes.booleanQuery(context, "dryRun") ?? false
            let result: IngestResult
            do throws(CartographError) {
                result = try store.completeSnapshot(session, mapping: .document(document, name: session.mapping), dryRun: dryRun,
                                                    answer: ResultDocument.bytes)
            } catch { throw Self.phrasingOptions(error) }
            return answer(result, context)
        },
        Route("DELETE", Self.snapshot, access: .tenant(.write)) { context in
            let (store, session) = try snapshotSession(context)
            _ = try Self.registeredMapping(session.mapping, in: store)
            try store.abandonSnapshot(session)
            return .noContent
        },
        // R-P10: the mapping a model's annotations define for an entity, and ingestion through it.
        Route("GET", Self.entity + "/mapping", access: .tenant(.read)) { context in
            let (_, model) = try lookup.existingSchema(context)
            return .json(try Self.annotationMapping(of: context.parameter("entity"), in: model).json)
        },
        // `discardInvalid` (R-P8): what `discardsInvalidObjectsOnInsert` is to a mapping document.
        Route("POST", Self.entity + "/payloads", access: .tenant(.write), body: .payload, query: ["dryRun", "explain", "discardInvalid"],
              takesMappingQuery: true) { context in
            let (store, model) = try lookup.existingSchema(context)
            let entity = context.parameter("entity")
            try Self.requireEntity(entity, in: model)
            let discardInvalid = try ModelRoutes.booleanQuery(context, "discardInvalid") ?? false
            let mapping = MappingSource.annotations(entity: entity, discardsInvalidObjectsOnInsert: discardInvalid)
            try context.refuseQueryParameters { () throws(CartographError) in try store.queryParameters(readBy: mapping, model: model, maximumObjects: maxObjectsPerPayload) }
            return try ingest(context, into: store, model: model, mapping: mapping)
        },
        Route("DELETE", Self.mapping, access: .tenant(.admin)) { context in
            let (store, model) = try lookup.existingSchema(context)
            let name = context.parameter("mapping")
            // A mapping another one refers to (`{"ref": …}`) stays until that one changes: its payloads would fail.
            let referrers = try store.mappings().filter { other in
                other.name != name && (try? store.parseMapping(other.document, name: other.name, model: model))?.referencedNames.contains(name) == true
            }.map(\.name)
            if !referrers.isEmpty {
                throw CartographError(.conflict, "Mapping '\(name)' is referred to by \(referrers.map { "'\($0)'" }.joined(separator: ", ")) ({\"ref\": \"\(name)\"}); change or delete those first.")
            }
            guard try store.deleteMapping(name: name) else {
                throw store.unknownMapping(name)
            }
            return .noContent
        },
    ] }

    /// `GET …/cursor`'s answer: the cursor's declaration and each scope's greatest value (R-P16).
    static func cursorDocument(_ name: String, _ cursor: MappingCursor, _ cursors: [StoredCursor]) -> JSONValue {
        let items: [JSONValue] = cursors.map { stored in
            let scope = JSONObject(zip(cursor.scope, stored.scope).map { ($0, $1.map(JSONValue.string) ?? .null) })
            return ["scope": .object(scope), "value": stored.value.jsonValue,
                    "updatedAt": .string(ISO8601Instant.render(milliseconds: stored.updatedAt))]
        }
        return ["mapping": .string(name), "attribute": .string(cursor.attribute), "scope": .array(cursor.scope.map(JSONValue.string)),
                "cursors": .array(items)]
    }

    /// `{"mapping", "drift": [{"path", "kind", ["expected", "found",] "firstSeen", "lastSeen", "count", "example"}]}`.
    static func driftDocument(_ name: String, _ drift: [StoredDrift]) -> JSONValue {
        let items: [JSONValue] = drift.map { stored in
            var entry = JSONObject([("path", .string(stored.drift.path))])
            ResultDocument.appendDriftKind(stored.drift.kind, to: &entry)
            entry.append("firstSeen", .string(ISO8601Instant.render(milliseconds: stored.firstSeen)))
            entry.append("lastSeen", .string(ISO8601Instant.render(milliseconds: stored.lastSeen)))
            entry.append("count", .number(JSONNumber(stored.drift.count)))
            entry.append("example", .string(stored.drift.example))
            return .object(entry)
        }
        return ["mapping": .string(name), "drift": .array(items)]
    }

    /// The registered mapping document `name`; 404 when the model has none.
    static func registeredMapping(_ name: String, in store: ModelStore) throws(CartographError) -> JSONValue {
        guard let document = try store.mappings(named: name).first?.document else { throw store.unknownMapping(name) }
        return document
    }

    /// The model's store and the snapshot session the route's `{mapping}` and `{token}` name (a 400 for a malformed token).
    private func snapshotSession(_ context: RequestContext) throws(CartographError) -> (store: ModelStore, session: SnapshotSession) {
        let store = try lookup.existingModel(context)
        return (store, try SnapshotSession(mapping: context.parameter("mapping"), token: context.parameter("token"), pointer: "/token"))
    }

    /// Maps the request's payload into the store in one transaction (R-P11), with `dryRun`,
    /// `explain` (R-P13), `Idempotency-Key`, the tenant's storage quota (R-S2) and, for a page of a
    /// snapshot session, the session (R-D5): `ModelStore.ingest`.
    private func ingest(_ context: RequestContext, into store: ModelStore, model: Model, mapping: MappingSource,
                        snapshot: SnapshotSession? = nil) throws(CartographError) -> HTTPResponse {
        // R-P13: explain traces every object and implies a dry run.
        let explain = try ModelRoutes.booleanQuery(context, "explain") ?? false
        let dryRun = try ModelRoutes.booleanQuery(context, "dryRun") ?? false
        let idempotencyKey = context.request.headers["idempotency-key"]
        if let idempotencyKey, !(1...255).contains(idempotencyKey.utf8.count) {
            throw CartographError(.badRequest, "Idempotency-Key must be 1 to 255 characters.")
        }
        // The request is hashed only when a key will be stored with it: hashing a large body costs.
        let idempotency = idempotencyKey.map { key in
            (key, SecretHash.sha256(bytes: Array(context.request.path.utf8) + [0x0A] + context.request.body))
        }
        var options = IngestOptions(metadata: requestMetadata(context.request), explain: explain, dryRun: dryRun, idempotency: idempotency,
                                    maximumObjects: maxObjectsPerPayload, quota: storageQuota(context, store: store), snapshot: snapshot)
        if Application.mediaType(of: context.request) == "application/x-ndjson" { options.format = .ndjson }
        let body = try context.nonEmptyBody()
        let result: IngestResult
        do throws(CartographError) {
            result = try store.ingest(body, mapping: mapping, model: model, reader: jsonReader, options: options, answer: ResultDocument.bytes)
        } catch {
            throw Self.phrasingOptions(error)
        }
        return answer(result, context)
    }

    /// `error` saying the ingestion options it speaks of as a payload's request sets them.
    static func phrasingOptions(_ error: CartographError) -> CartographError {
        error.phrasingOption("idempotency", as: "Idempotency-Key").phrasingOption("snapshot", as: "post the payload without ?snapshot=")
    }

    /// The 200 of a payload or a snapshot's completion; what it committed is counted (R-S9).
    private func answer(_ result: consuming IngestResult, _ context: RequestContext) -> HTTPResponse {
        if let committed = result.committed {
            metrics.objectsMapped(committed, tenant: context.parameter("tenant"), model: context.parameter("model"))
        }
        // Appended in place: the answer of a large payload lists a key per object, megabytes not to copy.
        result.body.append(0x0A)
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: result.body)
    }

    /// R-S2: with a `maxStoreBytes` in force, the quota the payload's transaction checks just before
    /// COMMIT: the store's own size is measured there, exactly; the tenant's other stores count with
    /// their last known sizes (`StoreRegistry.storeBytes`). Sizes are counted in SQLite pages.
    func storageQuota(_ context: RequestContext, store: ModelStore) -> StorageQuota? {
        let tenant = context.parameter("tenant")
        guard let maxBytes = limits.effective(tenant: tenant).maxStoreBytes else { return nil }
        let others = stores.storeBytes(tenant: tenant).reduce(Int64(0)) { $0 + ($1.key == store.name ? 0 : $1.value) }
        return StorageQuota(tenant: tenant, maxBytes: maxBytes, otherStoresBytes: others)
    }

    /// The mapping `model`'s annotations define for `entity` (R-P10); 404 when the model has no such entity.
    static func annotationMapping(of entity: String, in model: Model) throws(CartographError) -> EntityMapping {
        try requireEntity(entity, in: model)
        return EntityMapping.annotationMapping(of: entity, model: model)
    }

    /// 404 when the model has no entity `entity`.
    static func requireEntity(_ entity: String, in model: Model) throws(CartographError) {
        guard model.entity(named: entity) != nil else { throw model.unknownEntity(entity) }
    }

    /// `@metadata` for key paths (R-P1): when the payload arrived (by the clock), its query parameters and
    /// headers (header names lowercased; the Authorization header is never exposed).
    private func requestMetadata(_ request: HTTPRequest) -> JSONValue {
        var query = JSONObject()
        for (name, value) in request.query { query[name] = .string(value) }
        var headers = JSONObject()
        for (name, value) in request.headers where name != "authorization" { headers[name] = .string(value) }
        return .object(JSONObject([
            ("receivedAt", .string(Timestamp.render(clock.now()))), ("query", .object(query)), ("header", .object(headers)),
        ]))
    }
}
