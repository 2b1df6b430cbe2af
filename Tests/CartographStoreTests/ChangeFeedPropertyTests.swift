// R-D4 as a property: whatever a sequence of writes does — inserts, stubs filled in, attribute updates,
// relationships set from either side and in bulk, deletions — a follower replaying the change feed
// from 0 holds exactly what the store holds. The feed renders objects when it is read; inside a
// transaction, relationship reads answer from the lists it wrote (`StoreTransaction.writtenJoinDestinations`,
// `bareInserts`) instead of queries, and this keeps those caches honest.
import Foundation
import Testing
import CartographCore
import CartographTesting
@testable import CartographStore

struct ChangeFeedPropertyTests {
    /// Every kind of relationship storage: a foreign key with an inverse (Doc.owner / Person.docs), a
    /// many-to-many join table written from both sides (Doc.tags / Tag.docs), an ordered to-many in a
    /// join table whose inverse is a foreign key (Doc.parts / Part.doc), a foreign key without an
    /// inverse (Doc.ref).
    static let model: JSONValue = ["entities": [
        ["name": "Doc", "attributes": [["name": "id", "type": "integer64"], ["name": "s", "type": "string"]],
         "relationships": [
            ["name": "owner", "destination": "Person", "inverse": "docs"],
            ["name": "tags", "destination": "Tag", "toMany": true, "inverse": "docs"],
            ["name": "parts", "destination": "Part", "toMany": true, "ordered": true, "inverse": "doc"],
            ["name": "ref", "destination": "Person"],
         ]],
        ["name": "Person", "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"]],
         "relationships": [["name": "docs", "destination": "Doc", "toMany": true, "inverse": "owner"]]],
        ["name": "Tag", "attributes": [["name": "id", "type": "integer64"], ["name": "label", "type": "string"]],
         "relationships": [["name": "docs", "destination": "Doc", "toMany": true, "inverse": "tags"]]],
        ["name": "Part", "attributes": [["name": "id", "type": "integer64"], ["name": "n", "type": "integer64"]],
         "relationships": [["name": "doc", "destination": "Doc", "inverse": "parts"]]],
    ]]

    /// Relationships the feed leaves out: stored by the other side.
    static let derived = ["Person": "docs", "Tag": "docs"]
    /// The attribute each entity has besides its identity, which the random writes set.
    static let attribute = ["Doc": "s", "Person": "name", "Tag": "label", "Part": "n"]

    /// The bulk to-one write (one UPDATE for many objects) patches the rows the feed keeps.
    @Test func R_D4_aBulkToOneWriteOfNewObjectsReachesTheFeed() throws {
        let store = try makeStore(Self.model)
        _ = try store.write { (tx) throws(CartographError) in
            let people = try (1...2).map { (n) throws(CartographError) in try tx.insert(entity: "Person", values: ["id": .integer(Int64(n))]) }
            let docs = try (3...5).map { (n) throws(CartographError) in
                try tx.insert(entity: "Doc", values: ["id": .integer(Int64(n))], toOne: ["owner": people[0]])
            }
            try tx.setToOne(docs, entity: "Doc", relationship: "owner", to: people[1])
            try tx.setToOne(Array(docs.prefix(2)), entity: "Doc", relationship: "ref", to: people[0])
        }
        let stored = withoutDerived(try storeContents(store, roots: ["Doc", "Person", "Tag", "Part"]), Self.derived)
        #expect(stored.values.filter { $0["_entity"] == "Doc" }.map { $0["owner"] } == [2, 2, 2])
        #expect(try replayFeed(store) == stored)
    }

    /// A many-to-many written from the side that does not own its order (Tag.docs) moves no other
    /// object's list: a doc that stays keeps its tags in their order, one that comes gets the tag
    /// appended — so nothing changes that the feed does not record.
    @Test func R_D4_writingAManyToManyFromTheOtherSideMovesNoOtherObjectsList() throws {
        let store = try makeStore(Self.model)
        var docs: [Int64] = [], tags: [Int64] = []
        _ = try store.write { (tx) throws(CartographError) in
            tags = try (1...2).map { (n) throws(CartographError) in try tx.insert(entity: "Tag", values: ["id": .integer(Int64(n))]) }
            docs = try (3...5).map { (n) throws(CartographError) in try tx.insert(entity: "Doc", values: ["id": .integer(Int64(n))]) }
            try tx.setRelationship(id: docs[0], entity: "Doc", relationship: "tags", to: [tags[0], tags[1]])
            try tx.setRelationship(id: docs[1], entity: "Doc", relationship: "tags", to: [tags[1]])
        }
        _ = try store.write { (tx) throws(CartographError) in
            // Doc 3 stays (listed second now), doc 4 comes, nothing leaves.
            try tx.setRelationship(id: tags[0], entity: "Tag", relationship: "docs", to: [docs[1], docs[0]])
        }
        let stored = try storeContents(store, roots: ["Doc", "Person", "Tag", "Part"])
        let tagsOf = { (id: Int64) in stored.values.first { $0["id"] == .number(JSONNumber(id)) && $0["_entity"] == "Doc" }?["tags"] }
        #expect(tagsOf(3) == [1, 2])
        #expect(tagsOf(4) == [2, 1])
        #expect(tagsOf(5) == [])
        #expect(try replayFeed(store) == withoutDerived(stored, Self.derived))
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func R_D4_aFollowerOfTheFeedHoldsWhatTheStoreHoldsAfterAnySequenceOfWrites(seed: Int) throws {
        let store = try makeStore(Self.model)
        var random = SeededRandom(seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15)
        var live: [(id: Int64, entity: String)] = []
        var nextKey: Int64 = 1
        func pick(_ entity: String? = nil) -> (id: Int64, entity: String)? {
            let candidates = entity.map { name in live.filter { $0.entity == name } } ?? live
            return candidates.isEmpty ? nil : candidates[Int(random.next() % UInt64(candidates.count))]
        }
        func some(_ entity: String, upTo count: Int) -> [Int64] {
            (0..<Int(random.next() % UInt64(count + 1))).compactMap { _ in pick(entity)?.id }
        }
        for _ in 0..<12 {
            _ = try store.write { (tx) throws(CartographError) in
                for _ in 0..<30 {
                    switch random.next() % 12 {
                    case 0, 1, 2:
                        let entity = ["Doc", "Person", "Tag", "Part"][Int(random.next() % 4)]
                        let attribute = Self.attribute[entity]!
                        let value: AttributeValue = entity == "Part" ? .integer(Int64(random.next() % 100)) : .string("v\(random.next() % 100)")
                        let owner = entity == "Doc" && random.next() % 2 == 0 ? pick("Person")?.id : nil
                        let id = try tx.insert(entity: entity, values: ["id": .integer(nextKey), attribute: value],
                                               stub: entity == "Person" && random.next() % 3 == 0, toOne: owner.map { ["owner": $0] } ?? [:])
                        nextKey += 1
                        live.append((id, entity))
                    case 3:
                        guard let object = pick() else { continue }
                        let attribute = Self.attribute[object.entity]!
                        let value: AttributeValue? = random.next() % 4 == 0 ? nil
                            : object.entity == "Part" ? .integer(Int64(random.next() % 100)) : .string("u\(random.next() % 100)")
                        try tx.update(id: object.id, entity: object.entity, values: [attribute: value], clearStub: random.next() % 2 == 0)
                    case 4, 5, 6, 7, 8:
                        let (entity, relationship, destinations): (String, String, [Int64]) = switch random.next() % 7 {
                        case 0: ("Doc", "owner", some("Person", upTo: 1))
                        case 1: ("Doc", "tags", some("Tag", upTo: 4))
                        case 2: ("Tag", "docs", some("Doc", upTo: 4))
                        case 3: ("Doc", "parts", some("Part", upTo: 4))
                        case 4: ("Part", "doc", some("Doc", upTo: 1))
                        case 5: ("Person", "docs", some("Doc", upTo: 3))
                        default: ("Doc", "ref", some("Person", upTo: 1))
                        }
                        guard let source = pick(entity) else { continue }
                        try tx.setRelationship(id: source.id, entity: entity, relationship: relationship, to: destinations)
                    case 9, 10:
                        guard let person = pick("Person") else { continue }
                        try tx.setToOne(Array(Set(some("Doc", upTo: 4))), entity: "Doc", relationship: random.next() % 2 == 0 ? "owner" : "ref", to: person.id)
                    default:
                        guard let object = pick() else { continue }
                        try tx.delete(id: object.id, entity: object.entity)
                        live.removeAll { $0.id == object.id }
                    }
                }
            }
        }
        let stored = withoutDerived(try storeContents(store, roots: ["Doc", "Person", "Tag", "Part"]), Self.derived)
        let replayed = try replayFeed(store)
        #expect(stored.count == live.count)
        #expect(replayed == stored)
        // The runs reach every kind of write: some docs hold tags, parts, owners and references.
        #expect(stored.values.contains { ($0["tags"]?.arrayValue?.count ?? 0) > 1 })
        #expect(stored.values.contains { ($0["parts"]?.arrayValue?.count ?? 0) > 1 })
        #expect(stored.values.contains { $0["owner"]?.isNull == false } && stored.values.contains { $0["ref"]?.isNull == false })
    }
}
