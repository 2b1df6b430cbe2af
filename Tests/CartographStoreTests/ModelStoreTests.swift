// Model stores through their Swift API on real SQLite files: inheritance (R-M3), migration (R-M6),
// delete rules and tombstones (R-D2, R-D3), the change feed (R-D4), queries and cursors (R-Q1…R-Q4).
import Foundation
import Testing
import CartographCore
import CartographMapping
@testable import CartographStore
@testable import CartographHTTP

/// A model with inheritance, a one-to-many with each delete rule, a many-to-many and a compound identity.
let libraryModel: JSONValue = [
    "entities": [
        ["name": "Publisher", "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"]],
         "relationships": [["name": "characters", "destination": "Character", "toMany": true, "inverse": "publisher", "deleteRule": "cascade"]]],
        ["name": "Character", "abstract": false,
         "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"],
                        ["name": "power", "type": "decimal"], ["name": "born", "type": "date"]],
         "relationships": [["name": "publisher", "destination": "Publisher", "inverse": "characters"],
                           ["name": "teams", "destination": "Team", "toMany": true, "inverse": "members"]]],
        ["name": "Hero", "parent": "Character", "attributes": [["name": "cape", "type": "boolean"]]],
        ["name": "Team", "attributes": [["name": "id", "type": "integer64"]],
         "relationships": [["name": "members", "destination": "Character", "toMany": true, "inverse": "teams"]]],
        ["name": "Card", "attributes": [["name": "suit", "type": "string"], ["name": "value", "type": "integer16"]],
         "userInfo": ["identityAttributes": "suit,value"]],
    ],
]

func makeStore(_ document: JSONValue = libraryModel, checkpointsInBackground: Bool = false, clock: WallClock = .system) throws -> ModelStore {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString).sqlite").path
    let store = try ModelStore(name: "library", path: path, checkpointsInBackground: checkpointsInBackground, clock: clock)
    _ = try store.register(try ModelDocument.parse(json: document, name: "library"), allowDestructive: false)
    return store
}

/// A document the store's renderer wrote, parsed back: these tests compare documents, not bytes.
extension RenderedJSON {
    var value: JSONValue { (try? JSONReader().parse(bytes)) ?? .null }
    subscript(key: String) -> JSONValue? { value[key] }
}

/// Reads whose objects are written as the API writes them (`ModelShapeRenderer`).
extension StoreReader {
    func page(_ query: ObjectQuery) throws(CartographError) -> ObjectPage { try page(query, renderer: ModelShapeRenderer()) }

    func object(entity: String, key: String, include: [[String]] = [], shape: ObjectShape = .model, fields: [String]? = nil,
                mapping: String? = nil) throws(CartographError) -> RenderedJSON? {
        try object(entity: entity, key: key, include: include, shape: shape, fields: fields, mapping: mapping, renderer: ModelShapeRenderer())
    }
}

extension ChangeFeedPage {
    /// The page's entries as the API writes them.
    var changes: [JSONValue] { (try? JSONReader().parse(document(epoch: "").bytes))?["changes"]?.arrayValue ?? [] }
}

/// Objects written from their rows, and from their values, as the API writes them (RowRendererTests
/// compares the two).
extension ObjectReader {
    func rendered(ids: [Int64], table: String, fields: Set<String>?) throws(SQLiteError) -> [RenderedJSON] {
        try rendered(ids: ids, table: table, fields: fields, renderer: ModelShapeRenderer())
    }

    func rendered(entity: String, rawKey: String, fields: Set<String>?) throws(CartographError) -> RenderedJSON? {
        try rendered(entity: entity, rawKey: rawKey, fields: fields, renderer: ModelShapeRenderer())
    }

    /// The object's document from its values (no key cache kept).
    func document(of object: ExistingObject, fields: Set<String>? = nil) throws(SQLiteError) -> [UInt8] {
        var keys: [Int64: JSONValue] = [:]
        return ModelShapeRenderer().render(try values(of: object, fields: fields, keys: &keys)).bytes
    }
}

/// Replays the feed from 0 into a dictionary of `_id` -> object, as a follower would.
func replayFeed(_ store: ModelStore) throws -> [Int64: JSONValue] {
    var state: [Int64: JSONValue] = [:]
    var since: Int64 = 0
    while true {
        let page = try store.read { (reader) throws(CartographError) in try reader.changes(since: since, limit: 100) }
        let (changes, next) = (page.changes, page.next)
        for change in changes {
            if change["op"] == "upsert", let object = change["object"], let id = object["_id"]?.numberValue?.int64Value {
                state[id] = object
            } else if change["op"] == "delete" {
                state = state.filter { $0.value["_entity"] != change["entity"] || $0.value["id"] != change["key"] }
            }
        }
        if next == since { return state }
        since = next
    }
}

/// Every object of every root entity, by `_id`, as the store renders them.
func storeContents(_ store: ModelStore, roots: [String] = ["Publisher", "Character", "Team", "Card"]) throws -> [Int64: JSONValue] {
    var result: [Int64: JSONValue] = [:]
    for entity in roots {
        var cursor: String?
        repeat {
            let page = try store.read { (reader) throws(CartographError) in
                try reader.page(ObjectQuery(entity: entity, limit: 1000, cursor: cursor))
            }
            for item in page.items.map(\.value) { result[item["_id"]!.numberValue!.int64Value!] = item }
            cursor = page.next
        } while cursor != nil
    }
    return result
}

/// The objects without the relationship each entity names in `derived`: the feed leaves out
/// relationships stored by the other side, so a store read is compared with a replay without them.
func withoutDerived(_ objects: [Int64: JSONValue], _ derived: [String: String]) -> [Int64: JSONValue] {
    objects.mapValues { object in
        guard var members = object.objectValue, let name = derived[object["_entity"]?.stringValue ?? ""] else { return object }
        members[name] = nil
        return .object(members)
    }
}

/// `#require` for typed-throws closures: fails the write with a message instead of `any Error`.
func required<T>(_ value: T?, _ what: String = "value") throws(CartographError) -> T {
    guard let value else { throw CartographError(.internalError, "test expected a \(what)") }
    return value
}

struct ModelStoreTests {
    @Test func R_M6_registeringTheSameModelTwiceKeepsTheVersion() throws {
        let store = try makeStore()
        let again = try store.register(try ModelDocument.parse(json: libraryModel, name: "library"), allowDestructive: false)
        #expect(again.outcome == .unchanged)
        #expect(again.model.version == 1)
    }

    @Test func R_M3_queryingAParentIncludesSubEntityObjects() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in
            _ = try tx.insert(entity: "Character", values: ["id": .integer(1), "name": .string("Alfred")])
            _ = try tx.insert(entity: "Hero", values: ["id": .integer(2), "name": .string("Batman"), "cape": .boolean(true)])
        }
        let characters = try store.read { (r) throws(CartographError) in try r.page(ObjectQuery(entity: "Character", orderBy: [("name", false)])) }
        #expect(characters.items.map { $0["_entity"] } == ["Character", "Hero"])
        #expect(characters.items[1]["cape"] == true)
        #expect(characters.items[0]["cape"] == nil, "a Character has no cape attribute at all")
        let heroes = try store.read { (r) throws(CartographError) in try r.page(ObjectQuery(entity: "Hero")) }
        #expect(heroes.items.map { $0["name"] } == ["Batman"])
        // Lookup by key covers sub-entities too.
        #expect(try store.read { (r) throws(CartographError) in try r.object(entity: "Character", key: "2") }?["_entity"] == "Hero")
    }

    /// R-M3's `_entity IN (…)` filter is indexed where a table holds several entities; a table of one
    /// entity is never filtered by it, so it gets no such index (one B-tree insert per row saved), until
    /// a migration gives its entity a sub-entity.
    @Test func R_M3_theEntityColumnIsIndexedOnlyWhereATableHoldsSeveralEntities() throws {
        let store = try makeStore()
        let entityIndexes = { () throws -> [String] in
            try SQLiteConnection(path: store.path).rows("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'ix:%:_entity' ORDER BY name")
                .compactMap { $0.first?.textValue }
        }
        #expect(try entityIndexes() == ["ix:Character:_entity"])
        var entities = libraryModel["entities"]!.arrayValue!
        entities.append(["name": "Imprint", "parent": "Publisher", "attributes": [["name": "label", "type": "string"]]])
        let (_, outcome) = try store.register(try ModelDocument.parse(json: ["entities": .array(entities)], name: "library"), allowDestructive: false)
        #expect(outcome == .migrated)
        #expect(try entityIndexes() == ["ix:Character:_entity", "ix:Publisher:_entity"])
        let plan = try SQLiteConnection(path: store.path)
            .rows("EXPLAIN QUERY PLAN SELECT _id FROM Publisher WHERE _entity IN ('Imprint')").compactMap { $0.last?.textValue }.joined()
        #expect(plan.contains("ix:Publisher:_entity"), "\(plan)")
    }

    @Test func R_D2_cascadeDeletesDestinationsAndLeavesTombstones() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in
            let dc = try tx.insert(entity: "Publisher", values: ["id": .integer(10), "name": .string("DC")])
            let a = try tx.insert(entity: "Character", values: ["id": .integer(1)])
            let b = try tx.insert(entity: "Hero", values: ["id": .integer(2)])
            try tx.setRelationship(id: dc, entity: "Publisher", relationship: "characters", to: [a, b])
        }
        let (deleted, seq) = try store.write { (tx) throws(CartographError) -> Int in
            let dc = try required(try tx.object(entity: "Publisher", key: "10"))
            return try tx.delete(id: dc.id, entity: "Publisher")
        }
        #expect(deleted == 3)
        let page = try store.read { (r) throws(CartographError) in try r.changes(since: 0, limit: 100) }
        let (changes, next) = (page.changes, page.next)
        #expect(next == seq)
        let tombstones = changes.filter { $0["op"] == "delete" }
        #expect(Set(tombstones.compactMap { $0["key"]?.numberValue?.int64Value }) == [10, 1, 2])
        #expect(tombstones.allSatisfy { $0["deletedAt"]?.stringValue?.hasSuffix("Z") == true })
        #expect(try store.read { (r) throws(CartographError) in try r.page(ObjectQuery(entity: "Character")) }.items.isEmpty)
    }

    @Test func R_D2_nullifyClearsTheInverseAndKeepsTheDestination() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in
            let dc = try tx.insert(entity: "Publisher", values: ["id": .integer(10)])
            let a = try tx.insert(entity: "Character", values: ["id": .integer(1)])
            try tx.setRelationship(id: a, entity: "Character", relationship: "publisher", to: [dc])
        }
        // Character.publisher has the default rule (nullify): deleting the character leaves DC, without it.
        _ = try store.write { (tx) throws(CartographError) in
            let a = try required(try tx.object(entity: "Character", key: "1"))
            try tx.delete(id: a.id, entity: "Character")
        }
        let dc = try store.read { (r) throws(CartographError) in try r.object(entity: "Publisher", key: "10") }
        #expect(dc?["characters"] == [])
    }

    @Test func R_D2_denyRefusesWithConflictAndDeletesNothing() throws {
        var document = libraryModel
        var entities = document["entities"]!.arrayValue!
        var team = entities[3].objectValue!
        team["relationships"] = [["name": "members", "destination": "Character", "toMany": true, "inverse": "teams", "deleteRule": "deny"]]
        entities[3] = .object(team)
        document = ["entities": .array(entities)]
        let store = try makeStore(document)
        _ = try store.write { (tx) throws(CartographError) in
            let t = try tx.insert(entity: "Team", values: ["id": .integer(7)])
            let a = try tx.insert(entity: "Character", values: ["id": .integer(1)])
            try tx.setRelationship(id: t, entity: "Team", relationship: "members", to: [a])
        }
        #expect {
            _ = try store.write { (tx) throws(CartographError) in
                let t = try required(try tx.object(entity: "Team", key: "7"))
                try tx.delete(id: t.id, entity: "Team")
            }
        } throws: { error in
            (error as? CartographError)?.code == .conflict
        }
        let team7 = try store.read { (r) throws(CartographError) in try r.object(entity: "Team", key: "7") }
        #expect(team7?["members"] == [1])
    }

    @Test func R_D2_noActionLeavesTheDestinationPointingAtTheDeletedObject() throws {
        let document: JSONValue = ["entities": [
            ["name": "A", "attributes": [["name": "id", "type": "integer64"]],
             "relationships": [["name": "b", "destination": "B", "inverse": "a", "deleteRule": "noAction"]]],
            ["name": "B", "attributes": [["name": "id", "type": "integer64"]],
             "relationships": [["name": "a", "destination": "A", "inverse": "b"]]],
        ]]
        let store = try makeStore(document)
        _ = try store.write { (tx) throws(CartographError) in
            let a = try tx.insert(entity: "A", values: ["id": .integer(1)])
            let b = try tx.insert(entity: "B", values: ["id": .integer(2)])
            try tx.setRelationship(id: a, entity: "A", relationship: "b", to: [b])
            #expect(try tx.destinations(of: b, entity: "B", relationship: "a") == [a], "one-to-one inverse kept in step")
        }
        let (deletedID, _) = try store.write { (tx) throws(CartographError) -> Int64 in
            let a = try required(try tx.object(entity: "A", key: "1"))
            try tx.delete(id: a.id, entity: "A")
            return a.id
        }
        // B was not touched: its stored reference still holds the deleted A's id (rendered null, as it resolves to nothing).
        let (b, _) = try store.write { (tx) throws(CartographError) in try tx.object(entity: "B", key: "2") }
        #expect(b?.toOne["a"] == deletedID)
        #expect(try store.read { (r) throws(CartographError) in try r.object(entity: "B", key: "2") }?["a"] == .null)
    }

    @Test func manyToManyIsConsistentFromBothSides() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in
            let t1 = try tx.insert(entity: "Team", values: ["id": .integer(1)])
            let t2 = try tx.insert(entity: "Team", values: ["id": .integer(2)])
            let a = try tx.insert(entity: "Character", values: ["id": .integer(5)])
            try tx.setRelationship(id: a, entity: "Character", relationship: "teams", to: [t1, t2])
            try tx.setRelationship(id: t2, entity: "Team", relationship: "members", to: [])
        }
        let character = try store.read { (r) throws(CartographError) in try r.object(entity: "Character", key: "5") }
        #expect(character?["teams"] == [1])
        let team1 = try store.read { (r) throws(CartographError) in try r.object(entity: "Team", key: "1", include: [["members"]]) }
        #expect(team1?["members"]?.arrayValue?.first?["id"] == 5)
    }

    @Test func R_I2_batchedIdentificationFindsSubEntitiesAndCompoundIdentities() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in
            _ = try tx.insert(entity: "Character", values: ["id": .integer(1)])
            _ = try tx.insert(entity: "Hero", values: ["id": .integer(2)])
            _ = try tx.insert(entity: "Hero", values: ["id": .integer(2)])  // a duplicate: the oldest wins
            _ = try tx.insert(entity: "Card", values: ["suit": .string("hearts"), "value": .integer(10)])
        }
        let (found, _) = try store.write { (tx) throws(CartographError) in
            let characters = try tx.findAll(entity: "Character", attributes: ["id"], identities: [[.integer(1)], [.integer(2)], [.integer(3)]])
            let cards = try tx.findAll(entity: "Card", attributes: ["suit", "value"],
                                       identities: [[.string("hearts"), .integer(10)], [.string("hearts"), .integer(9)]])
            return (characters.mapValues { $0.map(\.id) }, characters[[.integer(2)]]?.first?.entity, cards.count)
        }
        #expect(found.0 == [[.integer(1)]: [1], [.integer(2)]: [2, 3]])
        #expect(found.1 == "Hero")
        #expect(found.2 == 1)
    }

    /// A batch longer than one query's list (900 values) that names identities more than once, in different
    /// chunks: each object is found once, and two objects with one identity are both found, oldest first.
    @Test func R_I2_identitiesNamedAgainInALaterChunkFindEachObjectOnce() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in
            for id in 1...1_000 { _ = try tx.insert(entity: "Character", values: ["id": .integer(Int64(id))]) }
            _ = try tx.insert(entity: "Hero", values: ["id": .integer(7)])  // a second object with identity 7
        }
        let identities: [[AttributeValue]] = (1...1_000).map { [.integer(Int64($0))] } + [[.integer(7)], [.integer(999)], [.integer(1)], [.integer(5_000)]]
        let (found, _) = try store.write { (tx) throws(CartographError) in
            try tx.findAll(entity: "Character", attributes: ["id"], identities: identities).mapValues { $0.map(\.id) }
        }
        #expect(found.count == 1_000)
        #expect(found[[.integer(7)]] == [7, 1_001])
        #expect(found[[.integer(999)]] == [999])
        #expect(found[[.integer(1)]] == [1])
        #expect(found.values.allSatisfy { $0.count == Set($0).count })
        #expect(found[[.integer(5_000)]] == nil)
    }

    @Test func compoundKeysAndDecimalOrdering() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in
            _ = try tx.insert(entity: "Card", values: ["suit": .string("hearts, red"), "value": .integer(10)])
            for (id, power) in [(1, "9.5"), (2, "10.25"), (3, "-1"), (4, "12345678901234567.891")] {
                _ = try tx.insert(entity: "Character", values: ["id": .integer(Int64(id)), "power": .decimal(Decimal(string: power)!)])
            }
        }
        let card = try store.read { (r) throws(CartographError) in try r.object(entity: "Card", key: "hearts%2C%20red,10") }
        #expect(card?["suit"] == "hearts, red")
        let ordered = try store.read { (r) throws(CartographError) in
            try r.page(ObjectQuery(entity: "Character", orderBy: [("power", false)]))
        }
        #expect(ordered.items.map { $0["power"] } == ["-1", "9.5", "10.25", "12345678901234567.891"])
    }

    @Test func R_Q3_cursorPaginationNeverSkipsOrRepeatsUnderConcurrentWrites() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in
            for i in 0..<10_000 {
                _ = try tx.insert(entity: "Character", values: ["id": .integer(Int64(i)), "name": .string("n\(i % 97)")])
            }
        }
        var seen: [Int64] = []
        var cursor: String?
        var page = 0
        repeat {
            let result = try store.read { (r) throws(CartographError) in
                try r.page(ObjectQuery(entity: "Character", orderBy: [("name", false)], limit: 500, cursor: cursor))
            }
            seen += result.items.compactMap { $0["id"]?.numberValue?.int64Value }
            cursor = result.next
            page += 1
            // Between pages: insert new objects and delete some not yet seen; sort values of the rest are unchanged.
            _ = try store.write { (tx) throws(CartographError) in
                _ = try tx.insert(entity: "Character", values: ["id": .integer(Int64(20_000 + page)), "name": .string("zzz")])
                if let victim = try tx.object(entity: "Character", key: String(9_999 - page)) {
                    try tx.delete(id: victim.id, entity: "Character")
                }
            }
        } while cursor != nil
        #expect(Set(seen).count == seen.count, "no object repeated")
        let deleted = Set((1...page).map { Int64(9_999 - $0) })
        let original = Set((0..<10_000).map(Int64.init))
        #expect(original.subtracting(deleted).isSubset(of: Set(seen)), "no surviving object skipped")
    }

    /// Feed entries of objects inserted or updated in the transaction are written from what was written
    /// (later attribute, foreign-key and join-table writes patched in), not read back: they must equal a
    /// read of the store, for every attribute type and every kind of relationship storage.
    @Test func R_D4_feedEntriesOfInsertedObjectsEqualTheExistingObjects() throws {
        let model: JSONValue = ["entities": [
            ["name": "Doc", "attributes": [
                ["name": "id", "type": "integer64"], ["name": "i16", "type": "integer16"], ["name": "i32", "type": "integer32"],
                ["name": "dec", "type": "decimal"], ["name": "dbl", "type": "double"], ["name": "flt", "type": "float"],
                ["name": "s", "type": "string"], ["name": "flag", "type": "boolean"], ["name": "when", "type": "date"],
                ["name": "uid", "type": "uuid"], ["name": "link", "type": "uri"], ["name": "data", "type": "binary"],
                ["name": "extra", "type": "transformable"], ["name": "note", "type": "string", "default": "none"],
             ], "relationships": [
                ["name": "owner", "destination": "Person", "inverse": "docs"],
                ["name": "tags", "destination": "Tag", "toMany": true, "inverse": "docs"],
                ["name": "parts", "destination": "Part", "toMany": true, "ordered": true, "inverse": "doc"],
                ["name": "ref", "destination": "Person"],
             ]],
            ["name": "Person", "attributes": [["name": "id", "type": "integer64"]],
             "relationships": [["name": "docs", "destination": "Doc", "toMany": true, "inverse": "owner"]]],
            ["name": "Tag", "attributes": [["name": "id", "type": "integer64"]],
             "relationships": [["name": "docs", "destination": "Doc", "toMany": true, "inverse": "tags"]]],
            ["name": "Part", "attributes": [["name": "id", "type": "integer64"]],
             "relationships": [["name": "doc", "destination": "Doc", "inverse": "parts"]]],
        ]]
        let store = try makeStore(model)
        func value(_ json: JSONValue, _ type: AttributeType) throws(CartographError) -> AttributeValue {
            do { return try required(try AttributeValue.coerce(json, to: type)) } catch { throw CartographError(.internalError, "\(error)") }
        }
        _ = try store.write { (tx) throws(CartographError) in
            let people = try (1...3).map { (n) throws(CartographError) in try tx.insert(entity: "Person", values: ["id": .integer(Int64(n))]) }
            _ = try tx.insert(entity: "Person", values: ["id": .integer(9)], stub: true)
            let tags = try (1...3).map { (n) throws(CartographError) in try tx.insert(entity: "Tag", values: ["id": .integer(Int64(n))]) }
            let parts = try (1...3).map { (n) throws(CartographError) in try tx.insert(entity: "Part", values: ["id": .integer(Int64(n))]) }
            var docs: [Int64] = []
            for n in 1...3 {
                docs.append(try tx.insert(entity: "Doc", values: [
                    "id": .integer(Int64(n)), "i16": .integer(-7), "i32": .integer(70_000),
                    "dec": try value(.number(JSONNumber(validatedText: "12.340")), .decimal), "dbl": .double(-0.5), "flt": .double(1.25),
                    "s": .string("a\u{0}b \u{1F600}"), "flag": .boolean(true), "when": .date(millisecondsSince1970: 1_704_067_200_123),
                    "uid": try value("6F9619FF-8B86-D011-B42D-00CF4FC964FF", .uuid), "link": try value("https://example.com/x?y=1", .uri),
                    "data": .binary([0, 1, 255]), "extra": .json(["a": [1, .number(JSONNumber(validatedText: "2.50")), "x"], "b": .null]),
                    "note": .string("none"),
                ], toOne: n == 3 ? ["owner": people[1]] : [:]))
            }
            try tx.setRelationship(id: docs[0], entity: "Doc", relationship: "owner", to: [people[0]])
            try tx.setRelationship(id: docs[0], entity: "Doc", relationship: "tags", to: [tags[1], tags[0]])
            try tx.setRelationship(id: docs[0], entity: "Doc", relationship: "parts", to: [parts[1], parts[0]])
            try tx.setRelationship(id: docs[0], entity: "Doc", relationship: "ref", to: [people[1]])
            // The inverse side writes doc 2's foreign key; a bulk to-one write; an update; a deletion.
            try tx.setRelationship(id: people[1], entity: "Person", relationship: "docs", to: [docs[1], docs[2]])
            try tx.setToOne([docs[1], docs[2]], entity: "Doc", relationship: "ref", to: people[0])
            try tx.setRelationship(id: parts[2], entity: "Part", relationship: "doc", to: [docs[1]])
            try tx.update(id: docs[2], entity: "Doc", values: ["s": .string("changed"), "dbl": nil])
            try tx.delete(id: tags[2], entity: "Tag")
            // The tags' side adds doc 2 to tag 2 and keeps doc 1, then takes doc 3 from tag 1: doc 1's tags
            // stay [2, 1] as written above, doc 2's become [1, 2], doc 3's [2] (the feed must not keep the
            // lists written before for doc 2 and doc 3).
            try tx.setRelationship(id: docs[1], entity: "Doc", relationship: "tags", to: [tags[0]])
            try tx.setRelationship(id: docs[2], entity: "Doc", relationship: "tags", to: [tags[0], tags[1]])
            try tx.setRelationship(id: tags[1], entity: "Tag", relationship: "docs", to: [docs[1], docs[0], docs[2]])
            try tx.setRelationship(id: tags[0], entity: "Tag", relationship: "docs", to: [docs[0], docs[1]])
        }
        _ = try store.write { (tx) throws(CartographError) in
            // A person found by identity and then given another id: a new doc's owner key is the new one
            // (the feed must not render a key the transaction saw before the update).
            let person = try required(tx.findAll(entity: "Person", attributes: ["id"], identities: [[.integer(3)]])[[.integer(3)]]?.first)
            try tx.update(id: person.id, entity: "Person", values: ["id": .integer(7)])
            _ = try tx.insert(entity: "Doc", values: ["id": .integer(4)], toOne: ["owner": person.id])
            // A stub stored earlier and filled in now: its entry has no `_stub`.
            let stub = try required(tx.findAll(entity: "Person", attributes: ["id"], identities: [[.integer(9)]])[[.integer(9)]]?.first)
            #expect(try tx.update(id: stub.id, entity: "Person", values: [:], clearStub: true))
        }
        let replayed = try replayFeed(store)
        let stored = withoutDerived(try storeContents(store, roots: ["Doc", "Person", "Tag", "Part"]), ["Person": "docs", "Tag": "docs"])
        #expect(stored.count == 13)
        #expect(stored.values.first { $0["id"] == 1 && $0["_entity"] == "Doc" }?["tags"] == [2, 1])
        #expect(stored.values.first { $0["id"] == 2 && $0["_entity"] == "Doc" }?["tags"] == [1, 2])
        #expect(stored.values.first { $0["id"] == 3 && $0["_entity"] == "Doc" }?["tags"] == [2])
        #expect(stored.values.first { $0["id"] == 4 && $0["_entity"] == "Doc" }?["owner"] == 7)
        #expect(replayed == stored)
    }

    @Test func R_D4_replayingTheFeedFromZeroRebuildsTheStore() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in
            let dc = try tx.insert(entity: "Publisher", values: ["id": .integer(10), "name": .string("DC")])
            _ = try tx.insert(entity: "Publisher", values: ["id": .integer(11), "name": .string("Marvel")])
            let a = try tx.insert(entity: "Hero", values: ["id": .integer(1), "name": .string("Batman")])
            let b = try tx.insert(entity: "Character", values: ["id": .integer(2), "name": .string("Joker")])
            try tx.setRelationship(id: dc, entity: "Publisher", relationship: "characters", to: [a, b])
        }
        _ = try store.write { (tx) throws(CartographError) in
            let joker = try required(try tx.object(entity: "Character", key: "2"))
            let marvel = try required(try tx.object(entity: "Publisher", key: "11"))
            // Moving the Joker changes both publishers' `characters`: both get feed entries.
            try tx.setRelationship(id: joker.id, entity: "Character", relationship: "publisher", to: [marvel.id])
            try tx.update(id: joker.id, entity: "Character", values: ["name": .string("The Joker")])
            // An update that changes nothing writes nothing.
            #expect(try tx.update(id: marvel.id, entity: "Publisher", values: ["name": .string("Marvel")]) == false)
        }
        _ = try store.write { (tx) throws(CartographError) in
            let batman = try required(try tx.object(entity: "Character", key: "1"))
            try tx.delete(id: batman.id, entity: "Character")
        }
        let replayed = try replayFeed(store)
        let contents = try storeContents(store)
        // Feed entries carry stored relationships; derived ones (Publisher.characters, the inverse of
        // Character.publisher, and Team.members, the non-owning side of a many-to-many) are left out...
        let stored = withoutDerived(contents, ["Publisher": "characters", "Team": "members"])
        #expect(replayed == stored)
        #expect(contents.count == 3)
        // ...and a follower rebuilds them from the owning side.
        for (id, publisher) in contents where publisher["_entity"] == "Publisher" {
            let key = publisher["id"]
            let rebuilt = replayed.values.filter { $0["publisher"] == key }.compactMap { $0["id"]?.numberValue?.int64Value }.sorted()
            #expect(publisher["characters"]?.arrayValue?.compactMap { $0.numberValue?.int64Value }.sorted() == rebuilt, "publisher \(id)")
        }
    }

    @Test func R_M6_additiveMigrationKeepsDataAndFillsDefaults() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in
            _ = try tx.insert(entity: "Hero", values: ["id": .integer(1), "name": .string("Batman")])
        }
        var entities = libraryModel["entities"]!.arrayValue!
        var character = entities[1].objectValue!
        var attributes = character["attributes"]!.arrayValue!
        attributes.append(["name": "alias", "type": "string"])
        attributes.append(["name": "level", "type": "integer32", "optional": false, "default": 3])
        character["attributes"] = .array(attributes)
        entities[1] = .object(character)
        entities.append(["name": "Villain", "parent": "Character", "attributes": [["name": "evil", "type": "boolean", "default": true]]])
        let (model, outcome) = try store.register(try ModelDocument.parse(json: ["entities": .array(entities)], name: "library"),
                                                   allowDestructive: false)
        #expect(outcome == .migrated)
        #expect(model.version == 2)
        let batman = try store.read { (r) throws(CartographError) in try r.object(entity: "Hero", key: "1") }
        #expect(batman?["name"] == "Batman")
        #expect(batman?["level"] == 3)
        #expect(batman?["alias"] == .null)
        _ = try store.write { (tx) throws(CartographError) in
            _ = try tx.insert(entity: "Villain", values: ["id": .integer(2), "evil": .boolean(true)])
        }
        #expect(try store.read { (r) throws(CartographError) in try r.page(ObjectQuery(entity: "Character")) }.items.count == 2)
        // Bookkeeping indexes outlive migrations (which drop `ix:` indexes the model no longer needs):
        // late binding (R-C5) must stay one indexed lookup per arriving object.
        let connection = try SQLiteConnection(path: store.path)
        let plan = try connection.rows("EXPLAIN QUERY PLAN SELECT source_id FROM _cartograph_pending WHERE target = 1 AND value_key = '[1]'")
            .compactMap { $0.last?.textValue }.joined(separator: " ")
        #expect(plan.contains("USING INDEX _cartograph_pending_by_target"), "\(plan)")
    }

    @Test func R_M6_destructiveMigrationIsRefusedUnlessAllowed() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in
            _ = try tx.insert(entity: "Card", values: ["suit": .string("spades"), "value": .integer(1)])
        }
        let withoutCards = JSONValue.object(JSONObject([("entities", .array(Array(libraryModel["entities"]!.arrayValue!.prefix(4))))]))
        let proposed = try ModelDocument.parse(json: withoutCards, name: "library")
        #expect {
            _ = try store.register(proposed, allowDestructive: false)
        } throws: { error in
            guard let error = error as? CartographError else { return false }
            return error.code == .conflict && !error.errors.isEmpty
        }
        #expect(store.model?.version == 1)
        #expect(try store.read { (r) throws(CartographError) in try r.page(ObjectQuery(entity: "Card")) }.items.count == 1)
        let (model, _) = try store.register(proposed, allowDestructive: true)
        #expect(model.version == 2)
        #expect(model.entity(named: "Card") == nil)
        // The removed entity's objects left tombstones.
        let changes = try store.read { (r) throws(CartographError) in try r.changes(since: 0, limit: 100) }.changes
        #expect(changes.last?["op"] == "delete")
        #expect(changes.last?["entity"] == "Card")
    }

    @Test func reopeningTheFileRestoresModelAndIDs() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in _ = try tx.insert(entity: "Team", values: ["id": .integer(1)]) }
        let reopened = try ModelStore(name: "library", path: store.path)
        #expect(reopened.model == store.model)
        let (newID, _) = try reopened.write { (tx) throws(CartographError) in try tx.insert(entity: "Team", values: ["id": .integer(2)]) }
        #expect(newID == 2, "ids continue after reopening; they are never reused")
    }

    @Test(arguments: [
        ("unknownAttribute == 1", "unknownAttribute"),
        ("teams.id == 1", "teams"),
        ("name ==", "expected"),
    ])
    func R_Q2_badPredicatesAre400WithOffsets(format: String, mentions: String) throws {
        let store = try makeStore()
        #expect {
            _ = try store.read { (r) throws(CartographError) in try r.page(ObjectQuery(entity: "Character", predicate: format)) }
        } throws: { error in
            guard let error = error as? CartographError else { return false }
            return error.code == .badRequest && error.offset != nil && error.detail.contains(mentions)
        }
    }

    @Test func R_Q1_predicatesFilterThroughRelationships() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in
            let dc = try tx.insert(entity: "Publisher", values: ["id": .integer(10), "name": .string("DC Comics")])
            let a = try tx.insert(entity: "Hero", values: ["id": .integer(1), "name": .string("Bätman"), "born": .date(millisecondsSince1970: 0)])
            _ = try tx.insert(entity: "Character", values: ["id": .integer(2), "name": .string("Robin")])
            try tx.setRelationship(id: a, entity: "Character", relationship: "publisher", to: [dc])
        }
        func ids(_ format: String, _ arguments: [String: JSONValue] = [:]) throws -> [JSONValue?] {
            try store.read { (r) throws(CartographError) in
                try r.page(ObjectQuery(entity: "Character", predicate: format, arguments: arguments))
            }.items.map { $0["id"] }
        }
        #expect(try ids("publisher.name BEGINSWITH[c] 'dc'") == [1])
        #expect(try ids("name ==[cd] 'batman'") == [1])
        #expect(try ids("born < '2000-01-01T00:00:00Z'") == [1])
        #expect(try ids("publisher == nil") == [2])
        #expect(try ids("name IN $names", ["names": ["Robin"]]) == [2])
    }
}

struct StoreRegistryTests {
    @Test func storesOpenLazilyAndTheOpenCountIsCapped() throws {
        let directory = DataDirectory(path: FileManager.default.temporaryDirectory.appendingPathComponent("registry-\(UUID().uuidString)").path)
        let control = try ControlStore(directory: directory)
        _ = try control.createTenant(id: "acme")
        let registry = StoreRegistry(directory: directory, maxOpenStores: 8)
        let model = try ModelDocument.parse(json: libraryModel, name: "library")
        #expect(try registry.store(tenant: "acme", model: "m0") == nil, "a model that does not exist is not created by a read")
        for i in 0..<20 {
            let store = try registry.storeForRegistration(tenant: "acme", model: "m\(i)")
            _ = try store.register(model, allowDestructive: false)
            #expect(registry.openStoreCount <= 8)
        }
        #expect(registry.modelNames(tenant: "acme").count == 20)
        // An evicted store reopens from its file with its model.
        let reopened = try #require(try registry.store(tenant: "acme", model: "m0"))
        #expect(reopened.model?.entities.count == model.entities.count)
        let open = registry.openStoreCount
        #expect(open > 0)
        #expect(registry.closeIdleStores(olderThan: -1) == open, "every store counts as idle against a cutoff in the future")
        #expect(registry.openStoreCount == 0)
    }

    /// R-I1: a mapping may identify by more attributes than the entity's identity (one read from `@metadata`,
    /// say); the lookup of such identities still searches the identity's index instead of scanning the table
    /// (each chunk of a streamed payload scanned it: 300,000 objects took 22 s instead of 4.5).
    @Test func R_I1_aLookupByMoreAttributesThanAnIndexHoldsSearchesTheIndex() throws {
        let store = try makeStore(["entities": [["name": "Item", "userInfo": ["identityAttributes": "id"],
                                                 "attributes": [["name": "id", "type": "integer64"], ["name": "source", "type": "string"]]]]])
        let plan = try store.write { (tx) throws(CartographError) -> String in
            _ = try tx.insert(entity: "Item", values: ["id": .integer(1), "source": .string("crm")])
            let found = try tx.existingObjects(entity: "Item", attributes: ["id", "source"],
                                               identities: [[.integer(1), .string("crm")], [.integer(1), .string("erp")], [.integer(2), .string("crm")]],
                                               predicate: nil, reading: [])
            #expect(found.keys.map { $0 } == [[.integer(1), .string("crm")]])
            let sql = tx.layout.lookupSQL(entity: "Item", attributes: ["id", "source"], reading: [], count: 3) { "not cached" }
            do { return try tx.connection.rows("EXPLAIN QUERY PLAN " + sql).compactMap { $0.last?.textValue }.joined(separator: " ") } catch {
                throw CartographError.store(error, "explain")
            }
        }.value
        #expect(plan.contains("USING INDEX ix:Item:id") && !plan.contains("SCAN Item"), "\(plan)")
    }

    /// Issue 29: a to-many written as a difference deletes the rows that go through the source's index, which
    /// holds the source's own list, even when one row goes (both columns then equalities): the destination's
    /// index holds every source of that destination (a tag's thousands of articles).
    @Test func R_P4_joinRowsThatGoAreDeletedThroughTheSourcesIndex() throws {
        let store = try makeStore(["entities": [
            ["name": "Article", "userInfo": ["identityAttributes": "id"], "attributes": [["name": "id", "type": "integer64"]],
             "relationships": [["name": "tags", "destination": "Tag", "toMany": true, "inverse": "articles"]]],
            ["name": "Tag", "userInfo": ["identityAttributes": "id"], "attributes": [["name": "id", "type": "integer64"]],
             "relationships": [["name": "articles", "destination": "Article", "toMany": true, "inverse": "tags"]]],
        ]])
        let (plans, kept) = try store.write { (tx) throws(CartographError) -> ([String], [Int64]) in
            let article = try tx.insert(entity: "Article", values: ["id": .integer(1)])
            let tags = try (1...3).map { (id) throws(CartographError) in try tx.insert(entity: "Tag", values: ["id": .integer(Int64(id))]) }
            try tx.setDestinations(of: article, entity: "Article", relationship: "tags", from: [], to: tags)
            try tx.setDestinations(of: article, entity: "Article", relationship: "tags", from: tags, to: Array(tags.dropFirst()))
            guard case .joinTable(let table, _)? = tx.layout.storage(of: "tags", entity: "Article") else { return ([], []) }
            let deletions = [1, 2].map { tx.layout.joinRowDeletion(table: table).sql(count: $0) }
            do {
                return (try deletions.map { sql throws(SQLiteError) in
                    try tx.connection.rows("EXPLAIN QUERY PLAN " + sql).compactMap { $0.last?.textValue }.joined(separator: " ")
                }, try tx.destinationIDs(of: article, entity: "Article", relationship: "tags"))
            } catch { throw CartographError.store(error, "explain") }
        }.value
        #expect(kept.count == 2, "the row that went is deleted")
        #expect(plans.count == 2 && plans.allSatisfy { $0.contains("source") && !$0.contains("destination") }, "\(plans)")
    }
}

extension StoreRegistryTests {
    /// In the server SQLite's automatic checkpoint is replaced (ModelStore.checkpointIfDue): a commit past 4,000 WAL
    /// frames has the log copied into the database file on another thread, and one past 10,000 copies
    /// it before it returns. Either way the database file ends up holding every page; once writes pause
    /// the log's file is cut to nothing (while they go on, it is written again from its start).
    @Test func R_S4_theWriteAheadLogIsCheckpointedAfterLargeCommits() throws {
        let store = try makeStore(checkpointsInBackground: true)
        func databaseFileBytes() -> Int64 {
            ((try? FileManager.default.attributesOfItem(atPath: store.path)[.size] as? NSNumber)?.int64Value) ?? 0
        }
        func insertPublishers(_ ids: Range<Int64>) throws {
            let big = String(repeating: "x", count: 100_000)
            _ = try store.write { (tx) throws(CartographError) in
                for id in ids { _ = try tx.insert(entity: "Publisher", values: ["id": .integer(id), "name": .string(big)]) }
            }
        }
        func logFileBytes() -> Int64 {
            ((try? FileManager.default.attributesOfItem(atPath: store.path + "-wal")[.size] as? NSNumber)?.int64Value) ?? 0
        }
        try insertPublishers(0..<180)  // about 4,400 frames: the pages of 18 MB of objects
        // Small writes every 50 ms go on meanwhile, so writes never pause: only the threshold checkpoints.
        let large = store.usedBytes
        var deadline = Date().addingTimeInterval(20)
        var small: Int64 = 10_000
        while databaseFileBytes() < large, Date() < deadline {
            try insertPublishers(small..<(small + 1))
            small += 1
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(databaseFileBytes() >= large, "checkpointed in the background while writes went on")
        deadline = Date().addingTimeInterval(20)
        while databaseFileBytes() < store.usedBytes || logFileBytes() > 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(databaseFileBytes() >= store.usedBytes, "checkpointed in the background")
        #expect(logFileBytes() == 0, "and, writes having paused, the log's file was cut to nothing")
        try insertPublishers(180..<600)  // over 10,000 frames: checkpointed by the commit itself
        #expect(databaseFileBytes() >= store.usedBytes, "checkpointed before the write returned")
        let count = try store.read { (r) throws(CartographError) in
            var query = ObjectQuery(entity: "Publisher")
            query.count = true
            return try r.page(query).total
        }
        #expect(count == 600 + Int(small - 10_000))
    }

    @Test func R_S3_cuttingTheLogDoesNotWaitForAReaderWhileHoldingTheWriteLock() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in try tx.insert(entity: "Publisher", values: ["id": .integer(1)]) }
        // A reader in a read transaction keeps using the log.
        let reader = try SQLiteConnection(path: store.path, readOnly: true)
        try reader.execute("BEGIN")
        #expect(try reader.rows("SELECT count(*) FROM \"Publisher\"").first?.first?.integerValue == 1)
        let writer = try SQLiteConnection(path: store.path)
        let started = Date()
        #expect(throws: SQLiteError.self) { try writer.truncateLog() }
        // SQLite's busy timeout (5 s) would have had it wait for the reader, the writers waiting with it.
        #expect(Date().timeIntervalSince(started) < Double(SQLiteConnection.busyTimeoutMilliseconds) / 2_000)
        try reader.execute("COMMIT")
        try writer.truncateLog()
        #expect(((try? FileManager.default.attributesOfItem(atPath: store.path + "-wal")[.size] as? NSNumber)?.int64Value ?? 0) == 0)
    }

    @Test func R_S4_aStoreWhoseWritesPauseHasItsShortLogCheckpointedAndCut() throws {
        let store = try makeStore(checkpointsInBackground: true)
        func fileBytes(_ suffix: String) -> Int64 {
            ((try? FileManager.default.attributesOfItem(atPath: store.path + suffix)[.size] as? NSNumber)?.int64Value) ?? 0
        }
        _ = try store.write { (tx) throws(CartographError) in
            for id in 0..<10 { _ = try tx.insert(entity: "Publisher", values: ["id": .integer(Int64(id)), "name": .string("p\(id)")]) }
        }
        #expect(fileBytes("-wal") > 0, "a short log is left to the pause")
        let deadline = Date().addingTimeInterval(20)
        while fileBytes("-wal") > 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(fileBytes("-wal") == 0, "cut once writes paused")
        #expect(fileBytes("") >= store.usedBytes, "its pages are in the database file")
    }

    @Test func R_S2_aWriteCheckSeesTheStoresBytesAndCanRollItBack() throws {
        let store = try makeStore()
        let empty = store.usedBytes
        #expect(empty > 0, "measured at open and after registration")
        let big = String(repeating: "x", count: 100_000)
        var seen: (Int64, Int64)?
        #expect(throws: CartographError.self) {
            _ = try store.write({ (tx) throws(CartographError) in
                _ = try tx.insert(entity: "Publisher", values: ["id": .integer(1), "name": .string(big)])
            }, checkBytes: { (before, after) throws(CartographError) in
                seen = (before, after)
                throw CartographError(.quotaExceeded, "no room")
            })
        }
        #expect(seen?.0 == empty)
        #expect((seen?.1 ?? 0) > empty + 90_000, "the object's pages, measured inside the transaction")
        #expect(store.usedBytes == empty, "a rolled-back write leaves the measure as it was")
        #expect(try store.read { (r) throws(CartographError) in try r.page(ObjectQuery(entity: "Publisher")) }.items.isEmpty)
        _ = try store.write { (tx) throws(CartographError) in
            _ = try tx.insert(entity: "Publisher", values: ["id": .integer(1), "name": .string(big)])
        }
        #expect(store.usedBytes > empty + 90_000)
    }

    @Test func R_S2_storeBytesFollowWritesEvictionDeletionAndTheModelQuota() throws {
        let directory = DataDirectory(path: FileManager.default.temporaryDirectory.appendingPathComponent("registry-\(UUID().uuidString)").path)
        defer { try? FileManager.default.removeItem(at: directory.root) }
        let control = try ControlStore(directory: directory)
        _ = try control.createTenant(id: "acme")
        let model = try ModelDocument.parse(json: libraryModel, name: "library")
        // A store written by an earlier process is counted from its files.
        let earlier = StoreRegistry(directory: directory)
        _ = try earlier.storeForRegistration(tenant: "acme", model: "m0").register(model, allowDestructive: false)
        earlier.closeStores(tenant: "acme")

        let registry = StoreRegistry(directory: directory, maxOpenStores: 1)
        #expect(registry.storeBytes(tenant: "acme").keys.sorted() == ["m0"])
        #expect(registry.storeBytes(tenant: "acme")["m0"] ?? 0 > 0)
        let m1 = try registry.storeForRegistration(tenant: "acme", model: "m1", maxModels: 2)
        _ = try m1.register(model, allowDestructive: false)
        _ = try m1.write { (tx) throws(CartographError) in
            _ = try tx.insert(entity: "Publisher", values: ["id": .integer(1), "name": .string(String(repeating: "y", count: 50_000))])
        }
        #expect(registry.storeBytes(tenant: "acme")["m1"] == m1.usedBytes)
        // The model quota: a third model is refused, an existing one is not.
        #expect {
            _ = try registry.storeForRegistration(tenant: "acme", model: "m2", maxModels: 2)
        } throws: { error in (error as? CartographError)?.code == .quotaExceeded }
        #expect(!FileManager.default.fileExists(atPath: directory.tenantDirectory("acme").appendingPathComponent("m2.sqlite").path))
        _ = try registry.storeForRegistration(tenant: "acme", model: "m0", maxModels: 2)  // evicts m1 (one open at most)
        #expect(registry.openStoreCount == 1)
        #expect(registry.storeBytes(tenant: "acme")["m1"] == m1.usedBytes, "an evicted store keeps its last measure")
        try registry.deleteModel(tenant: "acme", model: "m1")
        #expect(registry.storeBytes(tenant: "acme").keys.sorted() == ["m0"])
    }
}
