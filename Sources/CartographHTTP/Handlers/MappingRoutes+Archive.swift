// A mapping's raw archive over HTTP (R-P18, docs/mapping.md "Archive, replay and dead letters"): list the
// payloads a mapping with `"archive"` kept, fetch one body as it was posted, list the invalid objects
// they discarded, and replay a range of them through the mapping as registered now.
import CartographCore
import CartographMapping
import CartographStore

extension MappingRoutes {
    static let archive = mapping + "/archive"

    var archiveRoutes: [Route] { [
        Route("GET", Self.archive, access: .tenant(.read), query: ["after", "limit"]) { context in
            let (store, name) = try archivingMapping(context)
            let (after, limit) = try Self.keysetPage(context)
            let page = try store.archivedPayloads(mapping: name, after: after, limit: limit)
            return .json(Self.archiveDocument(page))
        },
        Route("GET", Self.archive + "/{archiveId}", access: .tenant(.read)) { context in
            let (store, name) = try archivingMapping(context)
            // The router has checked the id is a positive integer.
            let id = Int64(context.parameter("archiveId")) ?? 0
            guard let body = try store.archivedBody(mapping: name, id: id) else {
                throw CartographError(.notFound, "Mapping '\(name)' keeps no archived payload \(id): it expired or was never archived (GET …/archive lists those kept).")
            }
            return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: body)
        },
        Route("GET", Self.mapping + "/dead-letters", access: .tenant(.read), query: ["after", "limit"]) { context in
            let (store, name) = try archivingMapping(context)
            let (after, limit) = try Self.keysetPage(context)
            let page = try store.deadLetters(mapping: name, after: after, limit: limit)
            return .json(Self.deadLettersDocument(page))
        },
        // Each payload in its own transaction: the write lock is held per payload, never for the range.
        Route("POST", Self.mapping + "/replay", access: .tenant(.write), body: .json, query: ["dryRun"]) { context in
            let (store, model) = try lookup.existingSchema(context)
            let name = context.parameter("mapping")
            _ = try Self.registeredMapping(name, in: store)
            let (from, to) = try Self.replayRange(try context.jsonBody(jsonReader))
            let dryRun = try ModelRoutes.booleanQuery(context, "dryRun") ?? false
            let replayed = try store.replay(mapping: name, from: from, to: to, model: model, dryRun: dryRun, maximumObjects: maxObjectsPerPayload,
                                            quota: storageQuota(context, store: store))
            for committed in replayed.payloads.compactMap(\.committed) {
                metrics.objectsMapped(committed, tenant: context.parameter("tenant"), model: context.parameter("model"))
            }
            return .json(Self.replayDocument(replayed, dryRun: dryRun))
        },
    ] }

    /// The model's store and the route's mapping, which must keep an archive (404 otherwise, as a mapping
    /// without a cursor answers `GET …/cursor`).
    private func archivingMapping(_ context: RequestContext) throws(CartographError) -> (store: ModelStore, name: String) {
        let (store, model) = try lookup.existingSchema(context)
        let name = context.parameter("mapping")
        let mapping = try store.parseMapping(try Self.registeredMapping(name, in: store), name: name, model: model)
        guard mapping.archive != nil else {
            throw CartographError(.notFound, "Mapping '\(name)' keeps no archive; declare one with \"archive\": {\"days\": N} (docs/mapping.md).")
        }
        return (store, name)
    }

    /// `after` (an id, default 0) and `limit` (1 to 1000, default 100): keyset paging by id.
    static func keysetPage(_ context: RequestContext) throws(CartographError) -> (after: Int64, limit: Int) {
        let after = try ModelRoutes.integerQuery(context, "after") ?? 0
        let limit = try ModelRoutes.integerQuery(context, "limit") ?? 100
        guard after >= 0 else { throw ModelRoutes.invalid("/after", "must not be negative") }
        guard (1...1000).contains(limit) else { throw ModelRoutes.invalid("/limit", "must be between 1 and 1000") }
        return (Int64(after), limit)
    }

    /// `{"from": id, "to": id}`, both positive integers, `from` <= `to`; every problem at its pointer in one 422.
    static func replayRange(_ body: JSONValue) throws(CartographError) -> (from: Int64, to: Int64) {
        guard let object = body.objectValue else {
            throw CartographError(.unprocessable, "A replay is {\"from\": id, \"to\": id}.", errors: [.init(pointer: "", message: "expected an object")])
        }
        var errors: [CartographError.Detail] = []
        for member in object.keys where member != "from" && member != "to" {
            errors.append(.init(pointer: JSONPointer.root.appending(member).description, message: "is not a member of a replay (from, to)"))
        }
        func id(_ member: String) -> Int64? {
            guard let value = object[member], !value.isNull else {
                errors.append(.init(pointer: "/\(member)", message: "is required"))
                return nil
            }
            guard let id = value.numberValue?.int64Value, id > 0 else {
                errors.append(.init(pointer: "/\(member)", message: "expected an archived payload's id (a positive integer), got \(value.jsonText)"))
                return nil
            }
            return id
        }
        let from = id("from"), to = id("to")
        if let from, let to, from > to { errors.append(.init(pointer: "/to", message: "must not be less than from (\(from))")) }
        guard errors.isEmpty, let from, let to else {
            throw CartographError(.unprocessable, "The replay document is invalid.", errors: errors).quotingRequestValues()
        }
        return (from, to)
    }

    /// `{"items": [{"id", "receivedAt", "expiresAt", "bytes", "storedBytes", "mappingVersion", "changeSeq", "metadata"}], "next"}`.
    static func archiveDocument(_ page: ArchivePage<ArchivedPayload>) -> JSONValue {
        let items: [JSONValue] = page.items.map { payload in
            ["id": .number(JSONNumber(payload.id)), "receivedAt": .string(ISO8601Instant.render(milliseconds: payload.receivedAt)),
             "expiresAt": .string(ISO8601Instant.render(milliseconds: payload.expiresAt)), "bytes": .number(JSONNumber(payload.bytes)),
             "storedBytes": .number(JSONNumber(payload.storedBytes)), "mappingVersion": .string(payload.mappingVersion),
             "changeSeq": .number(JSONNumber(payload.changeSeq)), "metadata": payload.metadata]
        }
        return ["items": .array(items), "next": page.next.map { .number(JSONNumber($0)) } ?? .null]
    }

    /// `{"items": [{"id", "archiveId", "receivedAt", "expiresAt", "pointer", "entity", "key", "reasons", "representation"}], "next"}`.
    static func deadLettersDocument(_ page: ArchivePage<DeadLetter>) -> JSONValue {
        let items: [JSONValue] = page.items.map { letter in
            ["id": .number(JSONNumber(letter.id)), "archiveId": .number(JSONNumber(letter.archiveID)),
             "receivedAt": .string(ISO8601Instant.render(milliseconds: letter.receivedAt)),
             "expiresAt": .string(ISO8601Instant.render(milliseconds: letter.expiresAt)), "pointer": .string(letter.pointer),
             "entity": .string(letter.entity), "key": letter.key, "reasons": letter.reasons, "representation": letter.representation]
        }
        return ["items": .array(items), "next": page.next.map { .number(JSONNumber($0)) } ?? .null]
    }

    /// `{"replayed": [{"archiveId", "inserted", "updated", "unchanged", "deleted", "discarded", "changeSeq"[, "changes"]}],
    /// "inserted", "updated", "unchanged", "deleted", "next"[, "dryRun"]}`: per payload, the totals, and where to go on.
    static func replayDocument(_ outcome: ReplayOutcome, dryRun: Bool) -> JSONValue {
        let replayed = outcome.payloads
        var totals = (inserted: 0, updated: 0, unchanged: 0, deleted: 0)
        let items: [JSONValue] = replayed.map { payload in
            totals.inserted += payload.inserted
            totals.updated += payload.updated
            totals.unchanged += payload.unchanged
            totals.deleted += payload.deleted
            var entry = JSONObject([
                ("archiveId", .number(JSONNumber(payload.archiveID))), ("inserted", .number(JSONNumber(payload.inserted))),
                ("updated", .number(JSONNumber(payload.updated))), ("unchanged", .number(JSONNumber(payload.unchanged))),
                ("deleted", .number(JSONNumber(payload.deleted))), ("discarded", .number(JSONNumber(payload.discarded))),
                ("changeSeq", payload.changeSeq.map { .number(JSONNumber($0)) } ?? .null),
            ])
            if dryRun { entry.append("changes", .array(payload.changes)) }
            return .object(entry)
        }
        var document = JSONObject([
            ("replayed", .array(items)), ("inserted", .number(JSONNumber(totals.inserted))), ("updated", .number(JSONNumber(totals.updated))),
            ("unchanged", .number(JSONNumber(totals.unchanged))), ("deleted", .number(JSONNumber(totals.deleted))),
            ("next", outcome.next.map { .number(JSONNumber($0)) } ?? .null),
        ])
        if dryRun { document.append("dryRun", true) }
        return .object(document)
    }
}
