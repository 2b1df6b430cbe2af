// Everything a StoreHarness reads back from the store: objects, counts, the change feed and a payload's
// result. The store hands these back as JSON HTTP's renderers wrote; they are read into values here and nowhere
// else, so that a change to the store's read API changes this file only.
import Foundation
import Testing
import CartographCore
import CartographMapping
import CartographStore
import CartographHTTP

/// What mapping a payload did (R-P12): the MappingResult's counts, and its discarded and top-level
/// objects and warnings. `ModelStore.ingest` keeps the counts as values (`IngestResult.committed`) but
/// the lists only in the result document it wrote, which is read back for them.
struct PayloadResult {
    let inserted: Int, updated: Int, unchanged: Int, deleted: Int
    /// `{"pointer", "entity", "key", "errors"}` for each invalid new object dropped (R-P8).
    let discarded: [JSONValue]
    /// `{"entity", "key"}` (and `"discarded": true`) per top-level representation, in payload order.
    let objects: [JSONValue]
    /// `{"pointer", "message"}` for what mapped without error but may not be what was meant (R-P2).
    let warnings: [JSONValue]
}

extension StoreHarness {
    func ingest(_ body: [UInt8], mapping: MappingSource) throws(CartographError) -> PayloadResult {
        let ingested = try store.ingest(body, mapping: mapping, model: try model(), options: IngestOptions(), answer: ResultDocument.bytes)
        guard let counts = ingested.committed else { throw CartographError(.internalError, "the payload committed nothing") }
        let document = try Self.value(ingested.body)
        return PayloadResult(inserted: counts.inserted, updated: counts.updated, unchanged: counts.unchanged, deleted: counts.deleted,
                             discarded: document["discarded"]?.arrayValue ?? [], objects: document["objects"]?.arrayValue ?? [],
                             warnings: document["warnings"]?.arrayValue ?? [])
    }

    /// Every stored object of an entity (and its sub-entities) matching `predicate`, in the store's
    /// default order (`_id`), with the relationships in `including` embedded.
    func objects(_ entity: String, where predicate: String? = nil, including: [String] = []) throws -> [JSONValue] {
        let page = try store.read { (reader) throws(CartographError) in
            try reader.page(ObjectQuery(entity: entity, predicate: predicate, limit: 1000, include: including.map { [$0] }))
        }
        return try page.items.map { (item) throws(CartographError) in try Self.value(item.bytes) }
    }

    /// How many objects an entity (and its sub-entities) has that match `predicate`.
    func count(_ entity: String, where predicate: String? = nil) throws -> Int {
        try #require(try store.read { (reader) throws(CartographError) in
            try reader.page(ObjectQuery(entity: entity, predicate: predicate, limit: 1, count: true))
        }.total)
    }

    /// One object by key, which must be stored.
    func object(_ entity: String, _ key: String...) throws -> JSONValue {
        try #require(try storedObject(entity, key), "no \(entity) \(key)")
    }

    /// One object by key, nil when none is stored; the values of a compound key are joined by `,`, each
    /// percent-encoded (docs/api.md#object-keys).
    func storedObject(_ entity: String, _ key: [String]) throws(CartographError) -> JSONValue? {
        let rawKey = key.map(Self.percentEncoded).joined(separator: ",")
        let rendered = try store.read { (reader) throws(CartographError) in try reader.object(entity: entity, key: rawKey) }
        return try rendered.map { (object) throws(CartographError) in try Self.value(object.bytes) }
    }

    /// The change feed's entries after `since` (R-D4).
    func changes(since: Int64 = 0) throws(CartographError) -> [JSONValue] {
        try store.read { (reader) throws(CartographError) in try reader.changes(since: since, limit: 1000) }.changes
    }

    /// The change feed's head: the position after its last entry.
    func feedHead() throws(CartographError) -> Int64 {
        try store.read { (reader) throws(CartographError) in try reader.changes(since: 0, limit: 1000) }.next
    }

    private static func value(_ bytes: [UInt8]) throws(CartographError) -> JSONValue {
        do { return try JSONReader().parse(bytes) } catch { throw CartographError(error) }
    }

    private static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
