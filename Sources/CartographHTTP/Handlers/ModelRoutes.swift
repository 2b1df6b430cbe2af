// Models, objects, queries, deletions and the change feed (docs/api.md, model.md, change-feed.md, queries.md).
import Foundation
import CartographCore
import CartographStore
import CartographMapping

struct ModelRoutes: Sendable {
    static let models = "/v1/tenants/{tenant}/models"
    static let model = "/v1/tenants/{tenant}/models/{model}"
    static let entity = "/v1/tenants/{tenant}/models/{model}/entities/{entity}"
    static let changes = model + "/changes"

    let control: ControlStore
    let stores: StoreRegistry
    let lookup: ModelStoreLookup
    let limits: TenantLimitsInForce
    let storeFaults: StoreFaults
    let indexAdvisor: IndexAdvisor
    let jsonReader: JSONReader
    /// Answers a long poll whose read failed, as the request would have been answered at once.
    let problems: ProblemResponder

    var routes: [Route] { [
        Route("GET", Self.models, access: .tenant(.read)) { context in
            let tenant = try control.existingTenant(context.parameter("tenant"))
            let items = try stores.modelNames(tenant: tenant).compactMap { (name) throws(CartographError) in
                try listedModel(tenant: tenant, name: name, requestID: context.requestID)
            }
            return .json(["items": .array(items)])
        },
        Route("PUT", Self.model, access: .tenant(.admin), body: .modelDocument, query: ["allowDestructive"]) { context in
            let tenant = try control.existingTenant(context.parameter("tenant"))
            let name = context.parameter("model")
            let proposed = try ModelIntake.checked(try parseModelDocument(context, name: name))
            // Every client mistake is found before the store is created: a refused request leaves no file.
            let allowDestructive = try Self.booleanQuery(context, "allowDestructive") ?? false
            let store = try storeForRegistration(tenant: tenant, model: name)
            let (model, outcome): (Model, ModelRegistration)
            do throws(CartographError) { (model, outcome) = try store.register(proposed, allowDestructive: allowDestructive) } catch {
                throw error.phrasingOption("allowDestructive", as: "repeat the PUT with ?allowDestructive=true to apply it")
            }
            return .json(model.normalizedJSON, status: outcome == .created ? 201 : 200)
        },
        Route("GET", Self.model, access: .tenant(.read)) { context in
            let (_, model) = try lookup.existingSchema(context)
            return .json(model.normalizedJSON)
        },
        Route("DELETE", Self.model, access: .tenant(.admin)) { context in
            let tenant = try control.existingTenant(context.parameter("tenant"))
            try stores.deleteModel(tenant: tenant, model: context.parameter("model"))
            return .noContent
        },
        Route("GET", Self.entity + "/objects", access: .tenant(.read),
              query: ["where", "search", "orderBy", "limit", "cursor", "include", "shape", "fields", "count", "explain", "mapping", "facets",
                      "facetLimit"]) { context in
            let request = context.request
            let format = try ResponseFormat.negotiated(request.headers["accept"])
            var query = ObjectQuery(entity: context.parameter("entity"))
            query.predicate = request.queryValue("where")
            query.search = request.queryValue("search")
            query.orderBy = try Self.orderBy(request.queryValue("orderBy").map { $0.split(separator: ",").map(String.init) } ?? [])
            query.limit = try Self.integerQuery(context, "limit") ?? 50
            query.cursor = request.queryValue("cursor")
            query.include = Self.includePaths(request.queryValue("include").map { $0.split(separator: ",").map(String.init) } ?? [])
            query.count = try Self.booleanQuery(context, "count") ?? false
            query.shape = try Self.shape(request.queryValue("shape"))
            query.explain = try Self.booleanQuery(context, "explain") ?? false
            query.fields = try Self.fieldList(request.queryValue("fields"))
            query.mapping = request.queryValue("mapping")
            query.facets = request.queryValue("facets").map { $0.split(separator: ",").map(String.init) } ?? []
            query.facetLimit = try Self.integerQuery(context, "facetLimit") ?? query.facetLimit
            return try page(context, query, format: format)
        },
        Route("POST", Self.entity + "/query", access: .tenant(.read), body: .json) { context in
            let format = try ResponseFormat.negotiated(context.request.headers["accept"])
            guard case .object(let body) = try context.jsonBody(jsonReader) else {
                throw CartographError(.badRequest, "The query body must be a JSON object.")
            }
            var query = ObjectQuery(entity: context.parameter("entity"))
            query.predicate = try Self.optionalString(body, "where")
            query.search = try Self.optionalString(body, "search")
            query.arguments = try Self.arguments(body)
            query.orderBy = try Self.orderBy(try Self.stringList(body, "orderBy"))
            // A query's limit must be an integer even when null (docs/queries.md "Parameters").
            query.limit = try Self.optionalInteger(body, "limit", nullIsDefault: false) ?? query.limit
            query.cursor = try Self.optionalString(body, "cursor")
            query.include = Self.includePaths(try Self.stringList(body, "include"))
            query.count = try Self.optionalBool(body, "count") ?? false
            query.shape = try Self.shape(try Self.optionalString(body, "shape"))
            query.explain = try Self.optionalBool(body, "explain") ?? false
            if body["fields"] != nil { query.fields = try Self.fieldList(try Self.stringList(body, "fields")) }
            query.mapping = try Self.optionalString(body, "mapping")
            query.facets = try Self.stringList(body, "facets")
            query.facetLimit = try Self.optionalInteger(body, "facetLimit") ?? query.facetLimit
            return try page(context, query, format: format)
        },
        Route("POST", Self.entity + "/aggregate", access: .tenant(.read), body: .json) { context in
            let query = try Self.aggregateQuery(try context.jsonBody(jsonReader), entity: context.parameter("entity"))
            let store = try lookup.existingModel(context)
            let result = try store.read { (reader) throws(CartographError) in try reader.aggregate(query) }
            return .json(["groups": .array(result.groups), "more": .bool(result.more)])
        },
        Route("GET", Self.entity + "/objects/{key}", access: .tenant(.read), query: ["include", "shape", "fields", "mapping"]) { context in
            let store = try lookup.existingModel(context)
            let entity = context.parameter("entity"), key = context.parameter("key")
            let include = Self.includePaths(context.request.queryValue("include").map { $0.split(separator: ",").map(String.init) } ?? [])
            let objectShape = try Self.shape(context.request.queryValue("shape"))
            let fields = try Self.fieldList(context.request.queryValue("fields"))
            let mapping = context.request.queryValue("mapping")
            guard let object = try store.read({ (reader) throws(CartographError) in
                try reader.object(entity: entity, key: key, include: include, shape: objectShape, fields: fields, mapping: mapping,
                                  renderer: ModelShapeRenderer())
            }) else {
                throw CartographError(.notFound, "No \(entity) object with key '\(key)'.").quotingRequestValues()
            }
            return .json(object)
        },
        Route("DELETE", Self.entity + "/objects/{key}", access: .tenant(.write)) { context in
            let store = try lookup.existingModel(context)
            let entity = context.parameter("entity"), key = context.parameter("key")
            let (found, _) = try store.write { (transaction) throws(CartographError) -> Bool in
                guard let object = try transaction.object(entity: entity, key: key) else { return false }
                try transaction.delete(id: object.id, entity: object.entity)
                return true
            }
            guard found else { throw CartographError(.notFound, "No \(entity) object with key '\(key)'.").quotingRequestValues() }
            return .noContent
        },
        Route("DELETE", Self.entity + "/objects", access: .tenant(.write), query: ["where"]) { context in
            let store = try lookup.existingModel(context)
            let entity = context.parameter("entity")
            guard let format = context.request.queryValue("where"), !format.isEmpty else {
                throw CartographError(.badRequest, "Bulk delete needs a 'where' predicate (TRUEPREDICATE deletes every object).",
                                      errors: [.init(pointer: "/where", message: "required")])
            }
            let (deleted, _) = try store.write { (transaction) throws(CartographError) -> Int in
                guard transaction.model.entity(named: entity) != nil else {
                    throw transaction.model.unknownEntity(entity)
                }
                let predicate = try StoreReader.check(format, entity: entity, model: transaction.model, pointer: "/where")
                var count = 0
                for match in try transaction.objects(matching: predicate) {
                    count += try transaction.delete(id: match.id, entity: match.entity)
                }
                return count
            }
            return .json(["deleted": .number(JSONNumber(deleted))])
        },
        Route("GET", Self.changes, access: .tenant(.read), query: ["since", "limit", "wait"]) { context in
            let format = try ResponseFormat.negotiated(context.request.headers["accept"])
            let store = try lookup.existingModel(context)
            let since = try Self.integerQuery(context, "since") ?? 0
            let limit = try Self.integerQuery(context, "limit") ?? 100
            guard since >= 0 else { throw Self.invalid("/since", "must not be negative") }
            guard (1...1000).contains(limit) else { throw CartographError(.badRequest, "limit must be between 1 and 1000.") }
            let wait = try Self.integerQuery(context, "wait") ?? 0
            guard (0...60).contains(wait) else { throw Self.invalid("/wait", "must be between 0 and 60 seconds") }
            @Sendable func page() throws(CartographError) -> (isEmpty: Bool, response: HTTPResponse) {
                let page = try store.read { (reader) throws(CartographError) in try reader.changes(since: Int64(since), limit: limit) }
                return (page.entries.isEmpty, Self.changes(page, epoch: store.epoch, format: format, request: context.request))
            }
            guard wait > 0 else { return try page().response }
            // R-D8: answered when the store is next woken (at once unless it was woken within the last
            // `ChangeWaiters.defaultWakeInterval`) if entries follow `since` by then, else after a commit, or with the
            // empty page at the deadline. The requests at one position of the feed share one read.
            return PendingResponse.waiting(for: "\(context.parameter("tenant"))/\(store.name)", pollKey: "\(store.epoch) \(since) \(limit) \(format)",
                                           until: .now + .seconds(wait)) { final in
                do throws(CartographError) {
                    let next = try page()
                    return next.isEmpty && !final ? nil : next.response
                } catch {
                    return problems.response(for: error, to: context.request, requestID: context.requestID, route: Self.changes)
                }
            }
        },
    ] }

    // MARK: Helpers

    /// A model's entry in its tenant's list, nil for a store without a model. A store with a fault is
    /// listed with its problem type, and does not keep the tenant's other models from being listed (R-S12).
    private func listedModel(tenant: String, name: String, requestID: String) throws(CartographError) -> JSONValue? {
        func faulty(_ error: CartographError) -> JSONValue { ["name": .string(name), "problem": .string(error.code.problemType)] }
        if let refusal = storeFaults.refusal(tenant: tenant, model: name) { return faulty(refusal) }
        do throws(CartographError) {
            guard let model = try stores.store(tenant: tenant, model: name)?.model else { return nil }
            return ["name": .string(name), "version": .number(JSONNumber(model.version)), "entities": .number(JSONNumber(model.entities.count))]
        } catch where error.code.isStorageFault {
            storeFaults.note(error, tenant: tenant, model: name, requestID: requestID)
            return faulty(error)
        }
    }

    /// The store to register `model` in. Creating a model is subject to the tenant's quotas (R-S2):
    /// `maxModels`, and `maxStoreBytes` — a tenant whose stores already hold its limit cannot add a
    /// model. Migrating an existing model is not refused (it is how a tenant repairs things).
    private func storeForRegistration(tenant: String, model: String) throws(CartographError) -> ModelStore {
        let limits = limits.effective(tenant: tenant)
        if let maxBytes = limits.maxStoreBytes, try stores.store(tenant: tenant, model: model) == nil {
            let used = stores.storeBytes(tenant: tenant).values.reduce(0, +)
            guard used < maxBytes else {
                throw CartographError(.quotaExceeded, "Tenant '\(tenant)' stores \(used) bytes, at or over its limit of \(maxBytes) bytes: "
                                      + "it cannot add a model. Delete objects or models, or ask the operator to raise maxStoreBytes.")
            }
        }
        return try stores.storeForRegistration(tenant: tenant, model: model, maxModels: limits.maxModels)
    }

    /// A list's or a query's page, in `format` (R-Q7).
    private func page(_ context: RequestContext, _ query: ObjectQuery, format: ResponseFormat) throws(CartographError) -> HTTPResponse {
        switch format {
        case .json: return try jsonPage(context, query)
        case .csv:
            let (store, model) = try lookup.existingSchema(context)
            guard query.shape == .model else {
                throw Self.invalid("/shape", "text/csv writes shape=model; ask for application/x-ndjson to stream shape=json")
            }
            let renderer = CSVRenderer(columns: CSVRenderer.columns(entity: query.entity, model: model, fields: query.fields, include: query.include))
            return try streamedPage(context, query, store: store, format: format, renderer: renderer, head: renderer.headerRow, lineEnd: [])
        case .ndjson:
            return try streamedPage(context, query, store: try lookup.existingModel(context), format: format, renderer: ModelShapeRenderer(),
                                    head: [], lineEnd: [0x0A])
        }
    }

    private func jsonPage(_ context: RequestContext, _ query: ObjectQuery) throws(CartographError) -> HTTPResponse {
        let store = try lookup.existingModel(context)
        let page = try store.read { (reader) throws(CartographError) in try reader.page(query, renderer: ModelShapeRenderer()) }
        indexAdvisor.note(page, query: query, tenant: context.parameter("tenant"), model: store.name)
        var rest = JSONObject()
        rest.append("next", page.next.map { .string($0) } ?? .null)
        if let total = page.total { rest.append("total", .number(JSONNumber(total))) }
        if let plan = page.plan { rest.append("plan", plan.json) }
        if !page.warnings.isEmpty { rest.append("warnings", .array(page.warnings.map(\.json))) }
        let items = page.snippets.map { zip(page.items, $0).map { Self.adding(snippet: $1, to: $0) } } ?? page.items
        if !page.facets.isEmpty { rest.append("facets", .object(JSONObject(page.facets.map { ($0.keyPath, $0.json) }))) }
        var body: [UInt8] = []
        body.reserveCapacity(items.reduce(64) { $0 + $1.bytes.count + 1 })
        JSONWriter.writeObject(first: ("items", items), rest: rest, into: &body)
        return .json(RenderedJSON(bytes: body))
    }

    /// An object of a search's page with its excerpt as its last member, `_snippet` (R-Q6): written into
    /// the rendered object before its closing brace (an object always has members: `_id` at least).
    static func adding(snippet: String, to item: RenderedJSON) -> RenderedJSON {
        var bytes = item.bytes
        guard bytes.last == UInt8(ascii: "}") else { return item }
        bytes.removeLast()
        bytes += Array(",\"\(ObjectQuery.snippetField)\":".utf8) + JSONValue.string(snippet).jsonBytes + [UInt8(ascii: "}")]
        return RenderedJSON(bytes: bytes)
    }

    private func parseModelDocument(_ context: RequestContext, name: String) throws(CartographError) -> Model {
        if Application.mediaType(of: context.request) == "application/xml" || Application.mediaType(of: context.request) == "text/xml" {
            guard !context.request.body.isEmpty else { throw CartographError(.badRequest, "The request body is empty: send a Core Data model.") }
            return try ModelDocument.parse(coreDataXML: context.request.body, name: name)
        }
        return try ModelDocument.parse(json: try context.jsonBody(jsonReader), name: name)
    }

    static func orderBy(_ keys: [String]) throws(CartographError) -> [(attribute: String, descending: Bool)] {
        try keys.map { (raw) throws(CartographError) -> (attribute: String, descending: Bool) in
            let key = trimmed(raw)
            let descending = key.hasPrefix("-")
            let name = descending ? String(key.dropFirst()) : key
            // An attribute, or a key path through to-one relationships (`publisher.name`), or a search's rank.
            guard name == ObjectQuery.rankKey || name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy({ Names.isPropertyName(String($0)) }) else {
                throw invalid("/orderBy", "'\(raw)' is not an attribute name or a key path of names joined by '.'")
            }
            return (name, descending)
        }
    }

    /// `fields=a,b` (R-Q4): names, trimmed; an empty name (`a,`) is a 400.
    static func fieldList(_ text: String?) throws(CartographError) -> [String]? {
        try fieldList(text?.split(separator: ",", omittingEmptySubsequences: false).map(String.init))
    }

    static func fieldList(_ values: [String]?) throws(CartographError) -> [String]? {
        try values.map { (names) throws(CartographError) -> [String] in
            try names.map { (raw) throws(CartographError) -> String in
                let name = trimmed(raw)
                guard Names.isPropertyName(name) || name == ObjectQuery.snippetField else {
                    throw invalid("/fields", "'\(raw)' is not an attribute or relationship name")
                }
                return name
            }
        }
    }

    static func includePaths(_ values: [String]) -> [[String]] {
        values.map { trimmed($0).split(separator: ".").map(String.init) }.filter { !$0.isEmpty }
    }

    /// `text` without the whitespace around it. A name that neither starts nor ends with a space, a tab
    /// or a byte past ASCII (the usual case) is taken as it is: Foundation's `trimmingCharacters` goes
    /// through NSString and UTF-16, and was 1.6% of a list's CPU for one `orderBy` key.
    static func trimmed(_ text: String) -> String {
        func isPlain(_ byte: UInt8?) -> Bool { byte.map { $0 > 0x20 && $0 < 0x80 } ?? true }
        guard !isPlain(text.utf8.first) || !isPlain(text.utf8.last) else { return text }
        return text.trimmingCharacters(in: .whitespaces)
    }

    /// R-Q4: `model` (the default) or `json`.
    static func shape(_ text: String?) throws(CartographError) -> ObjectShape {
        guard let text else { return .model }
        guard let shape = ObjectShape(rawValue: text) else { throw invalid("/shape", "expected 'model' or 'json'") }
        return shape
    }

    static func integerQuery(_ context: RequestContext, _ name: String) throws(CartographError) -> Int? {
        guard let text = context.request.queryValue(name) else { return nil }
        guard let value = Int(text) else { throw invalid("/\(name)", "expected an integer, got '\(text)'") }
        return value
    }

    static func booleanQuery(_ context: RequestContext, _ name: String) throws(CartographError) -> Bool? {
        guard let text = context.request.queryValue(name) else { return nil }
        switch text.lowercased() {
        case "true", "1", "yes", "": return true
        case "false", "0", "no": return false
        default: throw invalid("/\(name)", "expected true or false, got '\(text)'")
        }
    }

    /// A body's integer member (clamped to `Int`); nil when it is absent, or null unless `nullIsDefault` is false.
    static func optionalInteger(_ body: JSONObject, _ name: String, nullIsDefault: Bool = true) throws(CartographError) -> Int? {
        guard let value = body[name], !(nullIsDefault && value.isNull) else { return nil }
        guard let integer = value.numberValue?.int64Value else { throw invalid("/\(name)", "expected an integer") }
        return Int(clamping: integer)
    }

    static func optionalBool(_ body: JSONObject, _ name: String) throws(CartographError) -> Bool? {
        guard let value = body[name], !value.isNull else { return nil }
        guard let flag = value.boolValue else { throw invalid("/\(name)", "expected a boolean") }
        return flag
    }

    static func optionalString(_ body: JSONObject, _ name: String) throws(CartographError) -> String? {
        guard let value = body[name], !value.isNull else { return nil }
        guard let text = value.stringValue else { throw invalid("/\(name)", "expected a string") }
        return text
    }

    /// A string (comma-separated) or an array of strings.
    static func stringList(_ body: JSONObject, _ name: String) throws(CartographError) -> [String] {
        switch body[name] {
        case nil, .null?: return []
        case .string(let text)?: return text.split(separator: ",").map(String.init)
        case .array(let items)?:
            return try items.enumerated().map { (index, item) throws(CartographError) -> String in
                guard let text = item.stringValue else { throw invalid("/\(name)/\(index)", "expected a string") }
                return text
            }
        default: throw invalid("/\(name)", "expected a string or an array of strings")
        }
    }

    /// A malformed query or body value; `message` may quote it.
    /// A query body's `$variable` values (`"arguments"`).
    static func arguments(_ body: JSONObject) throws(CartographError) -> [String: JSONValue] {
        try body["arguments"].map { value throws(CartographError) in
            guard case .object(let arguments) = value else { throw Self.invalid("/arguments", "expected an object of $variable values") }
            return Dictionary(arguments.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
        } ?? [:]
    }

    static func invalid(_ pointer: String, _ message: String) -> CartographError {
        CartographError(.badRequest, "Invalid request: \(pointer.dropFirst()) \(message).", errors: [.init(pointer: pointer, message: message)])
            .quotingRequestValues()
    }
}

/// The model store a request's path names (`{tenant}`, `{model}`), or the 404 for a tenant or a model that
/// does not exist: what the model and mapping routes look their store up with.
struct ModelStoreLookup: Sendable {
    let control: ControlStore
    let stores: StoreRegistry

    /// The store of a registered model (its model is not copied: a get does not need it).
    func existingModel(_ context: RequestContext) throws(CartographError) -> ModelStore {
        try registered(context) { $0.hasModel ? $0 : nil }
    }

    /// The model's store and its committed model, read once (a migration may commit at any time).
    func existingSchema(_ context: RequestContext) throws(CartographError) -> (store: ModelStore, model: Model) {
        try registered(context) { store in store.model.map { (store, $0) } }
    }

    /// What `found` takes from the path's model store; 404 when the store does not exist or `found` is nil.
    private func registered<T>(_ context: RequestContext, _ found: (ModelStore) -> T?) throws(CartographError) -> T {
        let tenant = try control.existingTenant(context.parameter("tenant"))
        let name = context.parameter("model")
        guard let store = try stores.store(tenant: tenant, model: name), let value = found(store) else {
            throw stores.unknownModel(name, tenant: tenant)
        }
        return value
    }
}
