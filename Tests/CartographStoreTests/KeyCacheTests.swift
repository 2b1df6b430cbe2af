// A pooled read connection keeps the destination keys it read while nothing is committed to the store
// (`KeyCache`, `ModelStore.read`): a page rendered after a commit, by the store or by another
// connection, must show the keys as they are now (R-Q4).
import Foundation
import Testing
import CartographCore
@testable import CartographStore

private let tagModel: JSONValue = [
    "entities": [
        ["name": "Post", "userInfo": ["identityAttributes": "code"], "attributes": [["name": "code", "type": "string"]],
         "relationships": [["name": "author", "destination": "Person", "inverse": "posts"],
                           ["name": "tags", "destination": "Tag", "toMany": true, "inverse": "posts"]]],
        ["name": "Person", "userInfo": ["identityAttributes": "handle"], "attributes": [["name": "handle", "type": "string"]],
         "relationships": [["name": "posts", "destination": "Post", "toMany": true, "inverse": "author"]]],
        ["name": "Tag", "userInfo": ["identityAttributes": "name"], "attributes": [["name": "name", "type": "string"]],
         "relationships": [["name": "posts", "destination": "Post", "toMany": true, "inverse": "tags"]]],
    ],
]

struct KeyCacheTests {
    /// The page and a get as the store renders them, and as the decoded path renders the same objects.
    private func renderedAndDecoded(_ store: ModelStore) throws -> (rendered: [[UInt8]], decoded: [[UInt8]]) {
        let (page, get, decoded) = try store.read { (reader) throws(CartographError) in
            let page = try reader.page(ObjectQuery(entity: "Post", limit: 100))
            let get = try reader.object(entity: "Post", key: "p1")
            do {
                let ids = try reader.reader.connection.rows("SELECT _id FROM Post ORDER BY _id").compactMap { $0.first?.integerValue }
                let decoded = try ids.compactMap { (id) throws(SQLiteError) in
                    try reader.reader.object(id: id, entity: "Post").map { (object) throws(SQLiteError) in try reader.reader.document(of: object) }
                }
                return (page, get, decoded)
            } catch {
                throw CartographError.store(error, "read")
            }
        }
        return (page.items.map(\.bytes) + [try #require(get).bytes], decoded + [decoded[1]])
    }

    @Test func R_Q4_keysKeptBetweenReadsFollowEveryCommit() throws {
        let store = try makeStore(tagModel)
        let ((ada, tags), _) = try store.write { (tx) throws(CartographError) -> (Int64, [Int64]) in
            let ada = try tx.insert(entity: "Person", values: ["handle": .string("ada")])
            let tags = try ["red", "green"].map { (name) throws(CartographError) in try tx.insert(entity: "Tag", values: ["name": .string(name)]) }
            for k in 0..<3 {
                let post = try tx.insert(entity: "Post", values: ["code": .string("p\(k)")], toOne: ["author": ada])
                try tx.setRelationship(id: post, entity: "Post", relationship: "tags", to: tags)
            }
            return (ada, tags)
        }
        var (rendered, decoded) = try renderedAndDecoded(store)
        #expect(rendered == decoded)
        #expect(String(decoding: rendered[0], as: UTF8.self).contains(#""author":"ada","tags":["red","green"]"#))

        // A commit through the store.
        _ = try store.write { (tx) throws(CartographError) in
            _ = try tx.update(id: ada, entity: "Person", values: ["handle": .string("lovelace")])
        }
        (rendered, decoded) = try renderedAndDecoded(store)
        #expect(rendered == decoded)
        #expect(String(decoding: rendered[0], as: UTF8.self).contains(#""author":"lovelace""#))

        // A commit by another connection (another writer, a restore).
        let connection = try SQLiteConnection(path: store.path)
        try connection.run("UPDATE Tag SET name = 'blue' WHERE _id = ?", [.integer(tags[0])])
        (rendered, decoded) = try renderedAndDecoded(store)
        #expect(rendered == decoded)
        #expect(String(decoding: rendered[0], as: UTF8.self).contains(#""tags":["blue","green"]"#))
    }

    @Test func R_Q4_keyCachesTogetherKeepNoMoreThanTheirBudget() {
        let budget = KeyCacheBudget(limit: 5)
        let first = KeyCache(budget: budget), second = KeyCache(budget: budget)
        let three: [Int64: JSONValue] = [1: "a", 2: "b", 3: "c"]
        first.keep(three)
        #expect(budget.count == 3)
        second.keep(three)
        #expect(budget.count == 3, "past the budget a cache keeps nothing")
        #expect(second.take().isEmpty)
        var taken = first.take()
        #expect(taken == three)
        #expect(budget.count == 0, "taken keys are out of the cache")
        taken[4] = "d"
        first.keep(taken)
        second.keep([9: "z"])
        #expect(budget.count == 5)
        first.removeAll()
        #expect(budget.count == 1)
        do {
            let third = KeyCache(budget: budget)
            third.keep([7: "q"])
            withExtendedLifetime(third) { #expect(budget.count == 2) }
        }
        #expect(budget.count == 1, "a cache's keys go back with its connection")
    }
}
