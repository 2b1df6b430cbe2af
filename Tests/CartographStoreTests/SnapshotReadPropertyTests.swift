// R-P7 and identification in a read snapshot (docs/mapping.md, "How a payload is read"): a payload read
// and identified before its write transaction, while other writes commit, maps exactly as the same payload
// mapped after those writes — whatever they did (objects inserted, updated, deleted, an identity given to
// another object, a nested object renamed, a to-many set changed). Checked on seeded random cases against a
// second store that applies the same writes first and maps the payload inside its transaction.
import Foundation
import Testing
import CartographCore
import CartographMapping
@testable import CartographStore
import CartographTesting

private let versionedItemsModel: JSONValue = ["entities": [
    ["name": "Item", "userInfo": ["identityAttributes": "id"],
     "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"], ["name": "version", "type": "integer64"]],
     "relationships": [["name": "owner", "destination": "Owner", "inverse": "items", "deleteRule": "nullify"],
                       ["name": "tags", "destination": "Tag", "toMany": true, "inverse": "items", "deleteRule": "nullify"]]],
    ["name": "Tag", "userInfo": ["identityAttributes": "id"],
     "attributes": [["name": "id", "type": "integer64"], ["name": "label", "type": "string"]],
     "relationships": [["name": "items", "destination": "Item", "toMany": true, "inverse": "tags", "deleteRule": "nullify"]]],
    ["name": "Owner", "userInfo": ["identityAttributes": "id"],
     "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"]],
     "relationships": [["name": "items", "destination": "Item", "toMany": true, "inverse": "owner", "deleteRule": "nullify"]]],
]]

/// One write committed between a payload's read and its write transaction.
private enum Meanwhile {
    case map(JSONValue)
    case deleteItem(Int)
    case deleteOwner(Int)
    /// Gives owner `from` the id `to` (an update of its identification attribute).
    case renumberOwner(from: Int, to: Int)
}

struct SnapshotReadPropertyTests {
    /// `items` representations of items 0-11 (an item may be represented twice: R-I5 merges them, the
    /// newest winning), with versions 1-4, owners 0-5 and up to three of tags 0-4, drawn from `random`.
    private static func payload(_ random: inout SeededRandom, items: Int) -> JSONValue {
        ["items": .array((0..<items).map { _ in Int.random(in: 0..<12, using: &random) }.map { item in
            let owner = Int.random(in: 0..<6, using: &random)
            return ["id": .number(JSONNumber(item)), "name": .string("n\(Int.random(in: 0..<3, using: &random))"),
                    "version": .number(JSONNumber(Int.random(in: 1...4, using: &random))),
                    "owner": ["id": .number(JSONNumber(owner)), "name": .string("o\(Int.random(in: 0..<3, using: &random))")],
                    "tags": .array(Array((0..<5).shuffled(using: &random).prefix(Int.random(in: 0...3, using: &random))).map { tag in
                        ["id": .number(JSONNumber(tag)), "label": .string("t\(Int.random(in: 0..<2, using: &random))")]
                    })]
        })]
    }

    private static func apply(_ write: Meanwhile, engine: MappingEngine, mapping: EntityMapping, into tx: StoreTransaction) throws(CartographError) {
        func stored(_ entity: String, _ id: Int) throws(CartographError) -> [ExistingObject] {
            try tx.existingObjects(entity: entity, attributes: ["id"], identities: [[.integer(Int64(id))]], predicate: nil, reading: nil)[[.integer(Int64(id))]] ?? []
        }
        switch write {
        case .map(let payload): _ = try engine.map(payload, mapping: mapping, into: tx)
        case .deleteItem(let id): for object in try stored("Item", id) { _ = try tx.delete(id: object.id, entity: "Item") }
        case .deleteOwner(let id): for object in try stored("Owner", id) { _ = try tx.delete(id: object.id, entity: "Owner") }
        case .renumberOwner(let from, let to):
            guard try stored("Owner", to).isEmpty else { return }
            for object in try stored("Owner", from) { try tx.update(id: object.id, entity: "Owner", values: ["id": .integer(Int64(to))]) }
        }
    }

    private static func describe(_ write: Meanwhile) -> String {
        switch write {
        case .map(let payload): "map \(payload.jsonText)"
        case .deleteItem(let id): "delete item \(id)"
        case .deleteOwner(let id): "delete owner \(id)"
        case .renumberOwner(let from, let to): "owner \(from) -> \(to)"
        }
    }

    @Test(arguments: 0..<200)
    func R_P7_R_I1_aPayloadReadBeforeOtherWritesMapsAsIfReadAfterThem(seed: Int) throws {
        var random = SeededRandom(seed: UInt64(seed) &* 0x9E37_79B9 &+ 7)
        let initial = Self.payload(&random, items: 8)
        let posted = Self.payload(&random, items: 10)
        var meanwhile: [Meanwhile] = []
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: meanwhile.append(.map(Self.payload(&random, items: Int.random(in: 1...6, using: &random))))
            case 1: meanwhile.append(.deleteItem(Int.random(in: 0..<12, using: &random)))
            case 2: meanwhile.append(.deleteOwner(Int.random(in: 0..<6, using: &random)))
            default: meanwhile.append(.renumberOwner(from: Int.random(in: 0..<6, using: &random), to: Int.random(in: 0..<8, using: &random)))
            }
        }
        var outcomes: [(result: MappingResult, contents: [Int64: JSONValue])] = []
        for readFirst in [true, false] {
            let store = try makeStore(versionedItemsModel)
            let model = try #require(store.model)
            let engine = try MappingEngine(model: model)
            let mapping = try EntityMapping.parse(["entity": "Item", "keyPath": "items", "modificationAttribute": "version",
                                                   "attributes": ["id": "id", "name": "name", "version": "version"],
                                                   "relationships": [["from": "owner", "to": "owner", "mapping": ["entity": "Owner", "attributes": ["id", "name"]]],
                                                                     ["from": "tags", "to": "tags", "mapping": ["entity": "Tag", "attributes": ["id", "label"]]]]],
                                                  model: model)
            _ = try store.write { (tx) throws(CartographError) in try engine.map(initial, mapping: mapping, into: tx) }
            let read = readFirst ? try engine.read(.whole(posted), mapping: mapping, snapshot: store.readAheadLookup(for: model)) : nil
            for write in meanwhile {
                _ = try store.write { (tx) throws(CartographError) in try Self.apply(write, engine: engine, mapping: mapping, into: tx) }
            }
            let result = try store.write { (tx) throws(CartographError) -> MappingResult in
                if let read { return try engine.map(read, into: tx) }
                return try engine.map(posted, mapping: mapping, into: tx)
            }.value
            outcomes.append((result, try storeContents(store, roots: ["Item", "Owner", "Tag"])))
        }
        let (snapshot, inside) = (outcomes[0], outcomes[1])
        #expect(snapshot.contents == inside.contents, "seed \(seed): \(meanwhile.map(Self.describe)) posted \(posted.jsonText)")
        #expect(snapshot.result.inserted == inside.result.inserted && snapshot.result.updated == inside.result.updated
                    && snapshot.result.unchanged == inside.result.unchanged, "seed \(seed)")
    }
}
