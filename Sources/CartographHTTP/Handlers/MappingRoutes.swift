// Mapping documents (DESIGN §5): registered per model, validated against it with a JSON Pointer per
// problem, stored normalized in the model's store.
import Foundation
import Metrics
import CartographCore
import CartographMapping
import CartographStore

enum MappingRoutes {
    static let mappings = "/v1/tenants/{tenant}/models/{model}/mappings"
    static let mapping = mappings + "/{mapping}"
    static let entity = "/v1/tenants/{tenant}/models/{model}/entities/{entity}"

    static let all: [Route] = [
        Route("GET", mappings, access: .tenant(.read)) { context in
            let store = try ModelRoutes.existingModel(context)
            let items: [JSONValue] = try store.mappings().map { entry in
                ["name": .string(entry.name), "entity": entry.document["entity"] ?? .null]
            }
            return .json(["items": .array(items)])
        },
        Route("PUT", mapping, access: .tenant(.admin), body: .json) { context in
            let (store, model) = try ModelRoutes.existingSchema(context)
            let parsed = try EntityMapping.parse(try context.jsonBody(), model: model)
            let created = try store.putMapping(name: context.parameter("mapping"), document: parsed.json)
            return .json(parsed.json, status: created ? 201 : 200)
        },
        Route("GET", mapping, access: .tenant(.read)) { context in
            let store = try ModelRoutes.existingModel(context)
            let name = context.parameter("mapping")
            guard let document = try store.mappings(named: name).first?.document else {
                throw CartographError(.notFound, "Model '\(store.name)' has no mapping '\(name)'.")
            }
            return .json(document)
        },
        Route("POST", mapping + "/payloads", access: .tenant(.write), body: .json) { context in
            let (store, model) = try ModelRoutes.existingSchema(context)
            let name = context.parameter("mapping")
            guard let document = try store.mappings(named: name).first?.document else {
                throw CartographError(.notFound, "Model '\(store.name)' has no mapping '\(name)'.")
            }
            // Re-validated against the current model: a migration may have changed it since registration.
            return try ingest(context, into: store, model: model) { (model) throws(CartographError) in try EntityMapping.parse(document, model: model) }
        },
        // R-P10: the mapping a model's annotations define for an entity, and ingestion through it.
        Route("GET", entity + "/mapping", access: .tenant(.read)) { context in
            let (store, model) = try ModelRoutes.existingSchema(context)
            return .json(try annotationMapping(of: context.parameter("entity"), in: model, store: store).json)
        },
        Route("POST", entity + "/payloads", access: .tenant(.write), body: .json) { context in
            let (store, model) = try ModelRoutes.existingSchema(context)
            let entity = context.parameter("entity")
            return try ingest(context, into: store, model: model) { (model) throws(CartographError) in
                try annotationMapping(of: entity, in: model, store: store)
            }
        },
        Route("DELETE", mapping, access: .tenant(.admin)) { context in
            let store = try ModelRoutes.existingModel(context)
            let name = context.parameter("mapping")
            guard try store.deleteMapping(name: name) else {
                throw CartographError(.notFound, "Model '\(store.name)' has no mapping '\(name)'.")
            }
            return .noContent
        },
    ]

    /// Maps the request's payload into the store in one transaction (R-P11), with `dryRun`,
    /// `explain` (R-P13) and `Idempotency-Key`.
    /// `mapping` builds the mapping for a model: the one read before the transaction, or the one the
    /// transaction writes under when a migration committed in between.
    static func ingest(_ context: RequestContext, into store: ModelStore, model: Model,
                       mapping makeMapping: (Model) throws(CartographError) -> EntityMapping) throws(CartographError) -> HTTPResponse {
        let mapping = try makeMapping(model)
        let engine = try MappingEngine(model: model, maximumObjects: context.application.configuration.maxObjectsPerPayload)
        // R-P13: explain traces every object and implies a dry run.
        let explain = try ModelRoutes.booleanQuery(context, "explain") ?? false
        let dryRun = try ModelRoutes.booleanQuery(context, "dryRun") ?? false || explain
        let idempotencyKey = context.request.headers["idempotency-key"]
        if let idempotencyKey, !(1...255).contains(idempotencyKey.utf8.count) {
            throw CartographError(.badRequest, "Idempotency-Key must be 1 to 255 characters.")
        }
        // Read before the write transaction: a large array of flat objects is planned for mapping in
        // chunks from the body's bytes (bounded memory), any other payload is parsed whole.
        let payload = try engine.prepare(body: try context.nonEmptyBody(), reader: context.application.jsonReader, mapping: mapping,
                                         explain: explain)
        let metadata = requestMetadata(context.request)
        // The request is hashed only when a key will be stored with it: hashing a large body costs.
        let idempotency = idempotencyKey.map { key in
            (key, SecretHash.sha256(bytes: Array(context.request.path.utf8) + [0x0A] + context.request.body))
        }
        // The payload is read into nodes before the write lock, R-P7's read-ahead looking in a read
        // snapshot: another request's write runs meanwhile (docs/mapping.md "Posting a payload").
        let read = try store.read { (snapshot) throws(CartographError) -> ReadPayload? in
            try engine.read(payload, mapping: mapping, metadata: metadata, explain: explain,
                            snapshot: snapshot.model.version == model.version ? snapshot : nil)
        }
        var body = try store.applyPayload(idempotency: idempotency, dryRun: dryRun, checkBytes: storeQuota(context, store: store)) {
            (transaction) throws(CartographError) -> MappingResult in
            let result: MappingResult
            if transaction.model.version != model.version {
                // A migration committed since `model` was read: map with the model this transaction writes
                // under, or new objects would miss the defaults of attributes it added (R-P4, R-M6).
                let engine = try MappingEngine(model: transaction.model, maximumObjects: context.application.configuration.maxObjectsPerPayload)
                result = try engine.map(payload, mapping: try makeMapping(transaction.model), metadata: metadata, explain: explain, into: transaction)
            } else if let read {
                result = try engine.map(read, into: transaction)
            } else {
                result = try engine.map(payload, mapping: mapping, metadata: metadata, explain: explain, into: transaction)
            }
            Counter(label: "cartograph_objects_mapped_total").increment(by: result.inserted + result.updated + result.unchanged)
            return result
        }
        body.append(0x0A)
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: body)
    }

    /// R-S2: with a `maxStoreBytes` in force, the check that runs inside the payload's transaction,
    /// just before COMMIT: a write that grows the store so that the tenant's stores together would hold
    /// more than the limit is rolled back — nothing is stored. The store's own size is measured there,
    /// exactly; the tenant's other stores count with their last known sizes (`StoreRegistry.storeBytes`).
    /// A write that does not grow the store passes even over the limit (deletions; updates and small
    /// inserts that fit in pages already in use — sizes are counted in SQLite pages).
    static func storeQuota(_ context: RequestContext, store: ModelStore) -> ((Int64, Int64) throws(CartographError) -> Void)? {
        let tenant = context.parameter("tenant")
        guard let maxBytes = context.application.effectiveLimits(tenant: tenant).maxStoreBytes else { return nil }
        let others = context.application.stores.storeBytes(tenant: tenant).reduce(Int64(0)) { $0 + ($1.key == store.name ? 0 : $1.value) }
        return { (before, after) throws(CartographError) in
            guard after > before, others + after > maxBytes else { return }
            throw CartographError(
                .quotaExceeded, "This payload would bring tenant '\(tenant)' to \(others + after) bytes of storage, over its limit of "
                    + "\(maxBytes) bytes; nothing was stored. Delete objects or models, or ask the operator to raise maxStoreBytes.")
        }
    }

    /// The mapping `model`'s annotations define for `entity` (R-P10); 404 when the model has no such entity.
    static func annotationMapping(of entity: String, in model: Model, store: ModelStore) throws(CartographError) -> EntityMapping {
        guard model.entity(named: entity) != nil else { throw CartographError(.notFound, "Model '\(store.name)' has no entity '\(entity)'.") }
        return EntityMapping.annotationMapping(of: entity, model: model)
    }

    /// `@metadata` for key paths (R-P1): when the payload arrived, its query parameters and headers
    /// (header names lowercased; the Authorization header is never exposed).
    static func requestMetadata(_ request: HTTPRequest) -> JSONValue {
        var query = JSONObject()
        for (name, value) in request.query { query[name] = .string(value) }
        var headers = JSONObject()
        for (name, value) in request.headers where name != "authorization" { headers[name] = .string(value) }
        return .object(JSONObject([
            ("receivedAt", .string(Timestamp.render(Date()))), ("query", .object(query)), ("header", .object(headers)),
        ]))
    }
}
