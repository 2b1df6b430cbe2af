// A payload read before its write transaction (issue 14, "use both cores"; docs/mapping.md "Posting a
// payload"): R-P7's read-ahead looks in a read snapshot, and a write committed between that snapshot
// and the payload's transaction must not make the payload map otherwise than it would inside the
// transaction. Also the list of touched objects the change feed is written from.
import Foundation
import Synchronization
import Testing
import CartographCore
import CartographMapping
@testable import CartographStore
import CartographHTTP

private let itemsModel: JSONValue = ["entities": [
    ["name": "Item", "userInfo": ["identityAttributes": "id"],
     "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"], ["name": "version", "type": "integer64"]]],
]]

/// The items mapping; `versioned` adds `modificationAttribute: version` (R-P7).
private func itemsMapping(versioned: Bool, model: Model) throws -> EntityMapping {
    var document = JSONObject([("entity", "Item"), ("keyPath", "items"), ("attributes", ["id": "id", "name": "name", "version": "version"])])
    if versioned { document["modificationAttribute"] = "version" }
    return try EntityMapping.parse(.object(document), model: model)
}

private func items(_ objects: [(id: Int, name: String, version: Int)]) -> JSONValue {
    ["items": .array(objects.map { ["id": .number(JSONNumber($0.id)), "name": .string($0.name), "version": .number(JSONNumber($0.version))] })]
}

/// A new items store, its engine, and the mapping with and without `modificationAttribute`.
private func itemsStore() throws -> (store: ModelStore, engine: MappingEngine, versioned: EntityMapping, plain: EntityMapping) {
    let store = try makeStore(itemsModel)
    let model = try #require(store.model)
    return (store, try MappingEngine(model: model), try itemsMapping(versioned: true, model: model), try itemsMapping(versioned: false, model: model))
}

/// The stored items as (name, version) by id; several objects with one id are all listed.
private func storedItems(_ store: ModelStore) throws -> [Int: [(name: String, version: Int)]] {
    var found: [Int: [(name: String, version: Int)]] = [:]
    for object in try storeContents(store, roots: ["Item"]).values {
        guard case .number(let id)? = object["id"], let id = Int(id.text), case .string(let name)? = object["name"],
              case .number(let version)? = object["version"], let version = Int(version.text) else { continue }
        found[id, default: []].append((name, version))
    }
    return found
}

/// The read-ahead lookup ingestion reads a payload with, for the engine's model.
private func readAhead(_ store: ModelStore, _ engine: MappingEngine) -> ReadAheadLookup {
    store.readAheadLookup(for: engine.model)
}

struct SnapshotReadTests {
    /// Item 1 is current in the snapshot (stored version 2, payload version 2), so the read skips it; another
    /// write then moves it back to version 1. Mapped as read, the payload would leave the older values.
    @Test func R_P7_anObjectFoundCurrentInTheSnapshotButChangedSinceIsMappedAfterAll() throws {
        let (store, engine, versioned, plain) = try itemsStore()
        _ = try store.write { (tx) throws(CartographError) in try engine.map(items([(1, "stored", 2)]), mapping: plain, into: tx) }

        let payload = items([(1, "from the payload", 2)])
        let read = try engine.read(.whole(payload), mapping: versioned, snapshot: readAhead(store, engine))
        _ = try store.write { (tx) throws(CartographError) in try engine.map(items([(1, "older", 1)]), mapping: plain, into: tx) }
        let readPayload = try #require(read)
        let result = try store.write { (tx) throws(CartographError) in try engine.map(readPayload, into: tx) }.value

        #expect(result.updated == 1 && result.unchanged == 0)
        let stored = try storedItems(store)[1]
        #expect(stored?.count == 1)
        #expect(stored?.first?.name == "from the payload")
        #expect(stored?.first?.version == 2)
    }

    /// The snapshot holds no item 7, so the read-ahead notes it absent; another write then stores it. The
    /// payload must find and update that object, not insert a second item 7 (R-I1).
    @Test func R_I1_anIdentityAbsentFromTheSnapshotButStoredSinceIsFoundNotInsertedAgain() throws {
        let (store, engine, versioned, plain) = try itemsStore()
        _ = try store.write { (tx) throws(CartographError) in try engine.map(items([(1, "one", 1)]), mapping: plain, into: tx) }

        let payload = items([(1, "one", 1), (7, "from the payload", 3)])
        let read = try engine.read(.whole(payload), mapping: versioned, snapshot: readAhead(store, engine))
        _ = try store.write { (tx) throws(CartographError) in try engine.map(items([(7, "another writer's", 2)]), mapping: plain, into: tx) }
        let readPayload = try #require(read)
        let result = try store.write { (tx) throws(CartographError) in try engine.map(readPayload, into: tx) }.value

        #expect(result.inserted == 0)
        #expect(result.updated == 1)
        #expect(result.unchanged == 1, "item 1, current in the snapshot and untouched since, stays skipped")
        let stored = try storedItems(store)
        #expect(stored[7]?.count == 1)
        #expect(stored[7]?.first?.name == "from the payload")
        #expect(stored[1]?.first?.name == "one")
    }

    /// The snapshot holds no item 7; another write then gives stored item 3 the id 7 (an update of its
    /// identification attribute, no insert). The payload must find that object rather than insert a
    /// second item 7: an update of an identification value counts as much as an insert.
    @Test func R_I1_anIdentityGivenToAStoredObjectSinceTheSnapshotIsFoundNotInsertedAgain() throws {
        let (store, engine, versioned, plain) = try itemsStore()
        _ = try store.write { (tx) throws(CartographError) in try engine.map(items([(1, "one", 1), (3, "three", 1)]), mapping: plain, into: tx) }
        let read = try engine.read(.whole(items([(1, "one", 1), (7, "from the payload", 3)])), mapping: versioned, snapshot: readAhead(store, engine))
        let three = try store.write { (tx) throws(CartographError) in
            try tx.existingObjects(entity: "Item", attributes: ["id"], identities: [[.integer(3)]], predicate: nil, reading: nil)[[.integer(3)]]?.first?.id
        }.value
        let threeID = try #require(three)
        _ = try store.write { (tx) throws(CartographError) in try tx.update(id: threeID, entity: "Item", values: ["id": .integer(7)]) }
        let readPayload = try #require(read)
        let result = try store.write { (tx) throws(CartographError) in try engine.map(readPayload, into: tx) }.value
        #expect(result.inserted == 0 && result.updated == 1 && result.unchanged == 1)
        let stored = try storedItems(store)
        #expect(stored[7]?.count == 1)
        #expect(stored[7]?.first?.name == "from the payload")
        #expect(stored[3] == nil)
    }

    /// Another instance of the store (one the registry evicted while a request still used it) commits item
    /// 7 between the snapshot and the write: this instance's record of what commits wrote has a gap there,
    /// so it cannot say item 7 is still absent, and looks it up again.
    @Test func R_I1_anIdentityStoredSinceTheSnapshotByAnotherInstanceOfTheStoreIsFound() throws {
        let (store, engine, versioned, plain) = try itemsStore()
        _ = try store.write { (tx) throws(CartographError) in try engine.map(items([(1, "one", 1)]), mapping: plain, into: tx) }
        let read = try engine.read(.whole(items([(1, "one", 1), (7, "from the payload", 3)])), mapping: versioned, snapshot: readAhead(store, engine))
        let other = try ModelStore(name: "library", path: store.path)
        _ = try other.write { (tx) throws(CartographError) in try engine.map(items([(7, "another instance's", 2)]), mapping: plain, into: tx) }
        let readPayload = try #require(read)
        let result = try store.write { (tx) throws(CartographError) in try engine.map(readPayload, into: tx) }.value
        #expect(result.inserted == 0 && result.updated == 1)
        let stored = try storedItems(store)
        #expect(stored[7]?.count == 1)
        #expect(stored[7]?.first?.name == "from the payload")
    }

    /// What the commits after a snapshot wrote to identification attributes, as the write transaction
    /// asks for it: the identities they inserted or updated to, not the others; nothing known across a
    /// commit it holds no record of (one too old to keep, or another model's).
    @Test func R_P7_theWriteKnowsWhichIdentitiesTheCommitsSinceItsSnapshotWrote() throws {
        let (store, engine, _, plain) = try itemsStore()
        func head() throws -> Int64 { try store.write { (tx) throws(CartographError) in try tx.changeFeedHead() }.value }
        func written(since seq: Int64) throws -> WrittenIdentities? {
            try store.write { (tx) throws(CartographError) in tx.identitiesWritten(since: seq, head: try tx.changeFeedHead()) }.value
        }
        func given(_ id: Int, in written: WrittenIdentities?, predicated: Bool = false) -> Bool {
            WrittenIdentities.mayHaveGiven(written, root: "Item", attributes: ["id"], identity: [.integer(Int64(id))], predicated: predicated)
        }
        _ = try store.write { (tx) throws(CartographError) in try engine.map(items([(1, "one", 1)]), mapping: plain, into: tx) }
        let snapshot = try head()
        _ = try store.write { (tx) throws(CartographError) in try engine.map(items([(8, "eight", 1)]), mapping: plain, into: tx) }
        _ = try store.write { (tx) throws(CartographError) in try engine.map(items([(1, "one, renamed", 2), (9, "nine", 1)]), mapping: plain, into: tx) }
        let since = try written(since: snapshot)
        #expect(since != nil, "both commits since the snapshot are known")
        #expect(given(8, in: since) && given(9, in: since))
        #expect(!given(7, in: since), "no commit wrote item 7")
        #expect(!given(1, in: since), "item 1's id was not written: its name was")
        #expect(WrittenIdentities.mayHaveGiven(since, root: "Item", attributes: ["name"], identity: [.string("seven")], predicated: false),
                "an identity of an attribute no commit records may have been given")
        #expect(given(7, in: since, predicated: true), "a predicate may have come to hold of an item 7 whose id no commit wrote")
        #expect(given(7, in: nil), "commits the store holds no record of may have given anything")
        #expect(WrittenIdentities.digest(root: "Item", attribute: "id", value: .double(8)) == WrittenIdentities.digest(root: "Item", attribute: "id", value: .integer(8)),
                "SQLite finds 8 and 8.0 equal")

        for id in 100..<(100 + IdentityWriteLog.keptCommits) {
            _ = try store.write { (tx) throws(CartographError) in try engine.map(items([(id, "other", 1)]), mapping: plain, into: tx) }
        }
        #expect(try written(since: snapshot) == nil, "the commits right after the snapshot are no longer kept")
        let now = try head()
        #expect(try written(since: now) != nil, "nothing since now: known")
        // A commit of more identities than one commit's record holds is not recorded: nothing across it is known.
        _ = try store.write { (tx) throws(CartographError) in
            try engine.map(items((1_000...(1_000 + IdentityWriteLog.maximumDigests)).map { ($0, "bulk", 1) }), mapping: plain, into: tx)
        }
        #expect(try written(since: now) == nil, "a commit too large to record")
    }

    /// Items with a nested owner: the owner is identified in the read snapshot before the write
    /// (`MappingRun.identifyAhead`), and the write re-checks what that found against what committed since.
    private static let ownedItemsModel: JSONValue = ["entities": [
        ["name": "Item", "userInfo": ["identityAttributes": "id"],
         "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"]],
         "relationships": [["name": "owner", "destination": "Owner", "inverse": "items", "deleteRule": "nullify"]]],
        ["name": "Owner", "userInfo": ["identityAttributes": "id"],
         "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"]],
         "relationships": [["name": "items", "destination": "Item", "toMany": true, "inverse": "owner", "deleteRule": "nullify"]]],
    ]]

    /// Maps `item` (id, name, owner id and name) through a snapshot read before `meanwhile` commits, and
    /// returns the result and the stored owners as (name, number of items) by id.
    private func mapOwnedItem(stored: [(item: Int, owner: Int, ownerName: String)], item: (id: Int, owner: Int, ownerName: String),
                              meanwhile: (StoreTransaction, MappingEngine, EntityMapping) throws(CartographError) -> Void) throws
        -> (result: MappingResult, owners: [Int: [(name: String, items: Int)]]) {
        let store = try makeStore(Self.ownedItemsModel)
        let model = try #require(store.model)
        let engine = try MappingEngine(model: model)
        let mapping = try EntityMapping.parse(["entity": "Item", "keyPath": "items", "attributes": ["id": "id", "name": "name"],
                                               "relationships": [["from": "owner", "to": "owner", "mapping": ["entity": "Owner", "attributes": ["id", "name"]]]]],
                                              model: model)
        func payload(_ items: [(item: Int, owner: Int, ownerName: String)]) -> JSONValue {
            ["items": .array(items.map { ["id": .number(JSONNumber($0.item)), "name": "an item",
                                          "owner": ["id": .number(JSONNumber($0.owner)), "name": .string($0.ownerName)]] })]
        }
        if !stored.isEmpty { _ = try store.write { (tx) throws(CartographError) in try engine.map(payload(stored), mapping: mapping, into: tx) } }
        let read = try #require(try engine.read(.whole(payload([(item.id, item.owner, item.ownerName)])), mapping: mapping,
                                                snapshot: store.readAheadLookup(for: model)))
        _ = try store.write { (tx) throws(CartographError) in try meanwhile(tx, engine, mapping) }
        let result = try store.write { (tx) throws(CartographError) in try engine.map(read, into: tx) }.value
        var owners: [Int: [(name: String, items: Int)]] = [:]
        for object in try storeContents(store, roots: ["Owner"]).values {
            guard case .number(let id)? = object["id"], let id = Int(id.text), case .string(let name)? = object["name"] else { continue }
            owners[id, default: []].append((name, object["items"]?.arrayValue?.count ?? 0))
        }
        return (result, owners)
    }

    /// Owner 5 is not in the snapshot; another write stores it before the payload's write: the payload
    /// finds it rather than insert a second owner 5 (R-I1).
    @Test func R_I1_aNestedObjectAbsentFromTheSnapshotButStoredSinceIsFoundNotInsertedAgain() throws {
        let (result, owners) = try mapOwnedItem(stored: [], item: (1, 5, "from the payload")) { (tx, engine, mapping) throws(CartographError) in
            _ = try engine.map(["items": [["id": 2, "name": "another item", "owner": ["id": 5, "name": "another writer's"]]]], mapping: mapping, into: tx)
        }
        #expect(owners[5]?.count == 1)
        #expect(owners[5]?.first?.name == "from the payload")
        #expect(owners[5]?.first?.items == 2)
        #expect(result.inserted == 1 && result.updated == 1, "item 1 inserted, owner 5 updated")
    }

    /// Owner 5, found in the snapshot, is deleted before the payload's write: the payload inserts it
    /// again rather than update a row that is gone.
    @Test func R_I1_aNestedObjectFoundInTheSnapshotButDeletedSinceIsInsertedAgain() throws {
        let (result, owners) = try mapOwnedItem(stored: [(9, 5, "stored")], item: (1, 5, "from the payload")) { (tx, _, _) throws(CartographError) in
            let five = try tx.existingObjects(entity: "Owner", attributes: ["id"], identities: [[.integer(5)]], predicate: nil, reading: nil)[[.integer(5)]]
            for object in five ?? [] { _ = try tx.delete(id: object.id, entity: "Owner") }
        }
        #expect(owners[5]?.count == 1)
        #expect(owners[5]?.first?.name == "from the payload")
        #expect(owners[5]?.first?.items == 1)
        #expect(result.inserted == 2, "item 1 and owner 5")
    }

    /// Owner 5, found in the snapshot with the payload's name, is renamed before the payload's write: the
    /// payload compares with what is stored now and writes its name back (R-P4).
    @Test func R_P4_aNestedObjectChangedSinceTheSnapshotIsComparedWithWhatIsStoredNow() throws {
        let (result, owners) = try mapOwnedItem(stored: [(9, 5, "from the payload")], item: (1, 5, "from the payload")) { (tx, engine, mapping) throws(CartographError) in
            _ = try engine.map(["items": [["id": 9, "name": "an item", "owner": ["id": 5, "name": "renamed meanwhile"]]]], mapping: mapping, into: tx)
        }
        #expect(owners[5]?.count == 1)
        #expect(owners[5]?.first?.name == "from the payload")
        #expect(result.inserted == 1 && result.updated == 1, "item 1 inserted, owner 5 renamed back")
    }

    /// A load's payloads are read shallowly (identities and modification values first) unless the last
    /// payload of the mapping was mostly new objects: a first load's next page is parsed whole, a
    /// re-load's read shallowly again, and both map the same.
    @Test func R_P7_aPayloadAfterOneOfMostlyNewObjectsIsParsedWholeAndMapsTheSame() throws {
        let (store, engine, _, _) = try itemsStore()
        let mapping: JSONValue = ["entity": "Item", "keyPath": "items", "attributes": ["id": "id", "name": "name", "version": "version"],
                                  "modificationAttribute": "version"]
        func post(_ objects: [(id: Int, name: String, version: Int)]) throws -> MappedCounts? {
            try store.ingest(items(objects).jsonBytes, mapping: .document(mapping, name: "items"), model: engine.model, options: IngestOptions(),
                             answer: ResultDocument.bytes).committed
        }
        let key = "mapping:items"
        #expect(!store.readAheadHistory.wasMostlyNew(key), "the first payload of a mapping is read shallowly")
        #expect(try post((1...8).map { ($0, "first", 1) })?.inserted == 8)
        #expect(store.readAheadHistory.wasMostlyNew(key), "8 of 8 objects were new")
        // Parsed whole: 4 of 8 new, 4 changed, none current.
        let second = try post((5...12).map { ($0, "second", 2) })
        #expect(second?.inserted == 4 && second?.updated == 4)
        #expect(store.readAheadHistory.wasMostlyNew(key))
        // Parsed whole again; 7 of 8 current, so the next is read shallowly.
        let third = try post((5...12).map { ($0, $0 == 12 ? "third" : "second", $0 == 12 ? 3 : 2) })
        #expect(third?.updated == 1 && third?.unchanged == 7)
        #expect(!store.readAheadHistory.wasMostlyNew(key), "7 of 8 objects were current")
        let fourth = try post((1...12).map { ($0, "fourth", 4) })
        #expect(fourth?.updated == 12)
        let stored = try storedItems(store)
        #expect(stored.count == 12 && stored.values.allSatisfy { $0.count == 1 && $0[0].name == "fourth" && $0[0].version == 4 })
    }

    /// Between the snapshot and the transaction other writes touch `moved` of items 1-6, all read ahead as
    /// current: few changes since are matched from the feed's newest entries, many are looked up per
    /// object (`ChangeFeed.changed`); either way exactly the moved items are mapped after all.
    @Test(arguments: [[3], [1, 2, 3, 4, 5, 6], [2, 5]])
    func R_P7_theObjectsChangedSinceTheSnapshotAreFoundHoweverManyWritesCame(moved: [Int]) throws {
        let (store, engine, versioned, plain) = try itemsStore()
        _ = try store.write { (tx) throws(CartographError) in try engine.map(items((1...6).map { ($0, "stored", 2) }), mapping: plain, into: tx) }
        let read = try engine.read(.whole(items((1...6).map { ($0, "from the payload", 2) })), mapping: versioned, snapshot: readAhead(store, engine))
        // One write per moved item, then as many unrelated ones: the feed's head moves past the six read ahead.
        for id in moved { _ = try store.write { (tx) throws(CartographError) in try engine.map(items([(id, "older", 1)]), mapping: plain, into: tx) } }
        for id in 100..<(100 + moved.count) {
            _ = try store.write { (tx) throws(CartographError) in try engine.map(items([(id, "other", 1)]), mapping: plain, into: tx) }
        }
        let readPayload = try #require(read)
        let result = try store.write { (tx) throws(CartographError) in try engine.map(readPayload, into: tx) }.value
        #expect(result.updated == moved.count && result.unchanged == 6 - moved.count)
        let stored = try storedItems(store)
        for id in 1...6 {
            #expect(stored[id]?.first?.name == (moved.contains(id) ? "from the payload" : "stored"), "item \(id)")
        }
    }

    /// A migration committed while a payload is read: the read-ahead taken under the old model finds
    /// nothing from then on (the write maps the payload again under the new model), no read-ahead is
    /// given for the old model any more, and a payload ingested with the old model still updates item 1
    /// rather than inserting a second one.
    @Test func R_P7_aMigrationCommittedDuringTheReadLeavesTheReadAheadEmpty() throws {
        let (store, engine, _, plain) = try itemsStore()
        _ = try store.write { (tx) throws(CartographError) in try engine.map(items([(1, "stored", 2)]), mapping: plain, into: tx) }
        let lookup = readAhead(store, engine)
        func found(by lookup: ReadAheadLookup) throws -> Int {
            let first = try lookup.firstObjects(entity: "Item", attributes: ["id"], identities: [[.integer(1)]], predicate: nil, reading: ["version"])
            #expect(first.objects.count == 1)
            return first.objects.compactMap { $0 }.count
        }
        #expect(try found(by: lookup) == 1)
        #expect(lookup.snapshotHead != nil, "the head the lookup looked at")

        guard case .array(var entities) = itemsModel["entities"], case .object(var item) = entities[0],
              case .array(var attributes) = item["attributes"] else { Issue.record("the items model changed shape"); return }
        attributes.append(["name": "note", "type": "string"])
        item["attributes"] = .array(attributes)
        entities[0] = .object(item)
        _ = try store.register(try ModelDocument.parse(json: ["entities": .array(entities)], name: "library"), allowDestructive: false)

        #expect(try found(by: lookup) == 0)
        let late = readAhead(store, engine)
        #expect(try found(by: late) == 0)
        #expect(late.snapshotHead == nil, "a lookup that looked nowhere has nothing for the write to re-check")
        let body = items([(1, "from the payload", 3)]).jsonBytes
        let mapping: JSONValue = ["entity": "Item", "keyPath": "items", "attributes": ["id": "id", "name": "name", "version": "version"],
                                  "modificationAttribute": "version"]
        let ingested = try store.ingest(body, mapping: .document(mapping, name: nil), model: engine.model, options: IngestOptions(),
                                        answer: ResultDocument.bytes)
        #expect(ingested.committed?.updated == 1 && ingested.committed?.inserted == 0)
        let stored = try storedItems(store)[1]
        #expect(stored?.count == 1)
        #expect(stored?.first?.name == "from the payload")
    }

    /// Another payload's write holding the store's lock does not hold up a read-ahead: it reads the last
    /// commit on a pooled reader instead of the writer's connection (b's first load waited 19 ms per payload
    /// for a 0.4 ms lookup). Its snapshot is that commit's, and the payload maps as read from it: item 1
    /// current and skipped, item 2 new, item 3 (the write under way) untouched.
    @Test func R_P7_aReadAheadDoesNotWaitForAWriteUnderWayAndReadsTheLastCommit() throws {
        let (store, engine, versioned, plain) = try itemsStore()
        let committed = try store.write { (tx) throws(CartographError) in try engine.map(items([(1, "one", 5)]), mapping: versioned, into: tx) }.changeSeq
        let holding = DispatchSemaphore(value: 0), released = DispatchSemaphore(value: 0)
        let releasedInTime = Atomic<Bool>(false)
        let writer = Thread {
            _ = try? store.write { (tx) throws(CartographError) in
                _ = try engine.map(items([(3, "three", 1)]), mapping: plain, into: tx)
                holding.signal()
                // The read-ahead below runs while this transaction holds the lock; a read-ahead waiting
                // for the lock would keep `released` from being signalled until this wait gives up.
                releasedInTime.store(released.wait(timeout: .now() + 10) == .success, ordering: .relaxed)
            }
            holding.signal()
        }
        writer.start()
        holding.wait()
        let lookup = readAhead(store, engine)
        let read = try engine.read(.whole(items([(1, "one, renamed", 5), (2, "two", 1)])), mapping: versioned, snapshot: lookup)
        released.signal()
        holding.wait()
        let readWithoutWaiting = releasedInTime.load(ordering: .relaxed)
        #expect(readWithoutWaiting, "the read-ahead waited for the write under way")
        #expect(lookup.snapshotHead == committed, "the snapshot is the last commit's")

        let readPayload = try #require(read)
        let result = try store.write { (tx) throws(CartographError) in try engine.map(readPayload, into: tx) }.value
        #expect(result.inserted == 1 && result.unchanged == 1 && result.updated == 0)
        let stored = try storedItems(store)
        #expect(stored[1]?.first?.name == "one" && stored[2]?.first?.name == "two" && stored[3]?.first?.name == "three")
    }

    /// With nothing written since the snapshot, the payload maps as read: one lookup, no second read.
    @Test func R_P7_aSnapshotNoWriteMovedPastMapsAsRead() throws {
        let (store, engine, versioned, _) = try itemsStore()
        _ = try store.write { (tx) throws(CartographError) in try engine.map(items([(1, "one", 5)]), mapping: versioned, into: tx) }
        let read = try engine.read(.whole(items([(1, "one, renamed", 5), (2, "two", 1)])), mapping: versioned, snapshot: readAhead(store, engine))
        let readPayload = try #require(read)
        let result = try store.write { (tx) throws(CartographError) in try engine.map(readPayload, into: tx) }.value
        #expect(result.inserted == 1 && result.unchanged == 1 && result.updated == 0)
        #expect(try storedItems(store)[1]?.first?.name == "one", "version 5 is not newer than the stored 5 (R-P7)")
    }

    /// A payload read shallowly (only the identity and modification members of its top-level objects, the
    /// others parsed whole from their offsets) maps exactly as the whole document does: the same
    /// response, stored objects and feed, or the same error. Items 1-4 are stored at version 2.
    @Test(arguments: [
        #"{"items": [{"id": 1, "name": "x", "version": 2}, {"id": 2, "name": "new name", "version": 3}, null, {"id": 9, "name": "nine", "version": 1}]}"#,
        #"{"items": [{"id": 1, "name": "a", "version": 2}, {"id": 1, "name": "b", "version": 5}]}"#,
        #"{"items": [{"id": 3, "name": "ok", "version": 2}, {"id": 5, "name": "five", "version": "x"}]}"#,
        #"{"items": [1, {"id": 2, "name": "n", "version": 9}, {"id": 4, "name": "same \"text\"\n", "version": 1}]}"#,
    ])
    func R_P7_aPayloadReadShallowlyMapsAsTheWholeDocument(payload: String) throws {
        func outcome(shallow: Bool) throws -> (response: JSONValue?, error: CartographError?, contents: [Int64: JSONValue], feed: [Int64: JSONValue]) {
            let (store, engine, versioned, plain) = try itemsStore()
            _ = try store.write { (tx) throws(CartographError) in
                try engine.map(items((1...4).map { ($0, "item \($0)", 2) }), mapping: plain, into: tx)
            }
            let bytes = Array(payload.utf8)
            let prepared: PreparedPayload = shallow
                ? try engine.prepare(body: bytes, reader: JSONReader(), mapping: versioned, metadata: .object(JSONObject()), explain: false) : .whole(try JSONReader().parse(bytes))
            if shallow, case .shallow = prepared {} else if shallow { Issue.record("the payload was not read shallowly") }
            var result: (response: JSONValue?, error: CartographError?, contents: [Int64: JSONValue], feed: [Int64: JSONValue]) = (nil, nil, [:], [:])
            do {
                let read = try engine.read(prepared, mapping: versioned, snapshot: readAhead(store, engine))
                let readPayload = try #require(read)
                let (mapped, seq) = try store.write { (tx) throws(CartographError) in try engine.map(readPayload, into: tx) }
                result.response = try JSONReader().parse(ResultDocument.bytes(of: mapped, changeSeq: seq))
            } catch let error as CartographError {
                result.error = error
            }
            result.contents = try storeContents(store, roots: ["Item"])
            result.feed = try replayFeed(store)
            return result
        }
        let (whole, shallow) = (try outcome(shallow: false), try outcome(shallow: true))
        #expect(shallow.response == whole.response)
        #expect(shallow.error?.code == whole.error?.code && shallow.error?.errors == whole.error?.errors)
        #expect(shallow.contents == whole.contents)
        #expect(shallow.feed == whole.feed)
        #expect(whole.response != nil || whole.error != nil)
    }

    /// The read-ahead answers identities by position (`firstObjects`): what identification finds for
    /// each (`findAll`'s oldest), nil for none, a sub-entity's lookup not finding its sibling's
    /// object of the same identity, the same identity asked twice answered twice, positions past the
    /// first chunk of a compound identity's lookup (450 per query) kept.
    @Test func R_P7_theReadAheadAnswersEachIdentityByPositionAsIdentificationWould() throws {
        let store = try makeStore(["entities": [
            ["name": "Node", "userInfo": ["identityAttributes": "owner,name"],
             "attributes": [["name": "owner", "type": "string"], ["name": "name", "type": "string"], ["name": "version", "type": "integer64"]]],
            ["name": "File", "parent": "Node"],
            ["name": "Folder", "parent": "Node"],
        ]])
        let model = try #require(store.model)
        func identity(_ owner: String, _ name: String) -> [AttributeValue] { [.string(owner), .string(name)] }
        let ids = try store.write { (tx) throws(CartographError) -> [Int64] in
            var ids: [Int64] = []
            for (entity, owner, name, version) in [("File", "ann", "a.txt", 1), ("File", "ann", "a.txt", 2), ("Folder", "bob", "docs", 3),
                                                   ("File", "cy", "z", 4)] {
                ids.append(try tx.insert(entity: entity, values: ["owner": .string(owner), "name": .string(name), "version": .integer(Int64(version))]))
            }
            return ids
        }.value
        let lookup = store.readAheadLookup(for: model)
        let absent = (0..<1000).map { identity("nobody", "\($0)") }
        let identities = [identity("ann", "a.txt"), identity("bob", "docs"), identity("ann", "b.txt"), identity("ann", "a.txt")] + absent
            + [identity("cy", "z")]
        for entity in ["File", "Node"] {
            let first = try lookup.firstObjects(entity: entity, attributes: ["owner", "name"], identities: identities, predicate: nil, reading: ["version"])
            let all = try store.read { (reader) throws(CartographError) in
                try reader.reader.findAll(entity: entity, attributes: ["owner", "name"], identities: identities, reading: ["version"])
            }
            #expect(first.objects.count == identities.count && first.values.count == identities.count)
            #expect(first.objects.map { $0?.id } == identities.map { all[$0]?.first?.id })
            #expect(first.objects[0]?.id == ids[0] && first.objects[0]?.entity == "File" && first[0, 0] == .integer(1))
            #expect(first.objects[3] == first.objects[0] && first[3, 0] == .integer(1))
            #expect(first.objects[1]?.id == (entity == "Node" ? ids[2] : nil) && first[1, 0] == (entity == "Node" ? .integer(3) : nil))
            #expect(first.objects[2] == nil && first.objects[4..<1004].allSatisfy { $0 == nil } && first.values[4..<1004].allSatisfy { $0 == nil })
            #expect(first.objects[1004]?.id == ids[3] && first[1004, 0] == .integer(4))
        }
    }

    /// With an identificationPredicate the read-ahead compares the modification value of the object the
    /// predicate picks (R-I3), not of the oldest with the identity: the older item 1 is newer than the
    /// payload, the one named 'b' is not, so 'b' is updated.
    @Test func R_P7_R_I3_theReadAheadComparesTheObjectTheIdentificationPredicatePicks() throws {
        let store = try makeStore(itemsModel)
        let model = try #require(store.model)
        _ = try store.write { (tx) throws(CartographError) in
            for (name, version) in [("a", 5), ("b", 1)] {
                _ = try tx.insert(entity: "Item", values: ["id": .integer(1), "name": .string(name), "version": .integer(Int64(version))])
            }
        }
        let mapping: JSONValue = ["entity": "Item", "keyPath": "items", "attributes": ["id": "id", "version": "version"],
                                  "modificationAttribute": "version", "identificationPredicate": "name == 'b'"]
        let body = ["items": [["id": 1, "version": 3]]] as JSONValue
        let ingested = try store.ingest(body.jsonBytes, mapping: .document(mapping, name: nil), model: model, options: IngestOptions(),
                                        answer: ResultDocument.bytes)
        #expect(ingested.committed?.updated == 1 && ingested.committed?.unchanged == 0)
        let versions = try #require(try storedItems(store)[1]).sorted { $0.name < $1.name }.map(\.version)
        #expect(versions == [5, 3])
    }

    /// The feed is written from the touched list: runs of consecutive ids, each object once, in first-touch order.
    @Test func R_D4_touchedObjectsKeepFirstTouchOrderInRuns() {
        var touched = TouchedObjects()
        let appended: [(Int64, String)] = [(10, "A"), (11, "A"), (12, "A"), (13, "B"), (14, "B"), (3, "B"), (15, "A"), (16, "A"), (4, "C")]
        for (id, entity) in appended { touched.append(id, entity) }
        /// Each object of the runs, in order.
        func objects(_ touched: TouchedObjects) -> [(id: Int64, entity: String)] {
            touched.idRuns.flatMap { run in (0..<Int64(run.count)).map { (run.first + $0, run.entity) } }
        }
        #expect(touched.count == appended.count)
        #expect(objects(touched).map(\.id) == appended.map(\.0))
        #expect(objects(touched).map(\.entity) == appended.map(\.1))
        var many = TouchedObjects()
        for id in Int64(1)...200_000 { many.append(id, "Item") }
        #expect(many.count == 200_000)
        #expect(Array(objects(many).suffix(2)).map(\.id) == [199_999, 200_000])
        #expect(Array(many.idRuns).count == 1, "consecutive ids of one entity are one run")
    }
}
