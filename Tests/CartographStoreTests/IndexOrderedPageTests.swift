// A page whose order an index delivers is read with one statement that selects the rendered columns
// (docs/storage.md "Reading a page"), the others by `_id` after choosing the page: both must give the
// same documents, cursors and counts (R-Q3, R-Q4), whichever the plan allows.
import Foundation
import Testing
import CartographCore
@testable import CartographStore

/// Articles with a date to order by (declared indexed or not), a to-one and a to-many.
private func newsModel(indexed: Bool) -> JSONValue {
    [
        "entities": [
            ["name": "Article", "userInfo": ["identityAttributes": "articleID"],
             "attributes": [["name": "articleID", "type": "string"], ["name": "title", "type": "string"],
                            ["name": "publishedAt", "type": "date", "indexed": .bool(indexed)], ["name": "views", "type": "integer64"]],
             "relationships": [["name": "author", "destination": "Author", "inverse": "articles"],
                               ["name": "tags", "destination": "Tag", "toMany": true, "inverse": "articles"]]],
            ["name": "Author", "userInfo": ["identityAttributes": "authorID"], "attributes": [["name": "authorID", "type": "string"]],
             "relationships": [["name": "articles", "destination": "Article", "toMany": true, "inverse": "author"]]],
            ["name": "Tag", "userInfo": ["identityAttributes": "name"], "attributes": [["name": "name", "type": "string"]],
             "relationships": [["name": "articles", "destination": "Article", "toMany": true, "inverse": "tags"]]],
        ],
    ]
}

/// 200 articles by 3 authors with up to 3 tags each, dates that repeat and some nil, written in the
/// same order into each store (so `_id`s agree).
private func newsStore(indexed: Bool) throws -> ModelStore {
    let store = try makeStore(newsModel(indexed: indexed))
    _ = try store.write { (tx) throws(CartographError) in
        let authors = try ["Ada", "Grace", "Edsger"].map { (name) throws(CartographError) in
            try tx.insert(entity: "Author", values: ["authorID": .string(name)])
        }
        let tags = try (0..<5).map { (k) throws(CartographError) in try tx.insert(entity: "Tag", values: ["name": .string("tag \(k)")]) }
        for k in 0..<200 {
            var values: [String: AttributeValue] = ["articleID": .string("a\(k)"), "title": .string("Title \"\(k)\""),
                                                    "views": .integer(Int64((k * 7_919) % 1_000))]
            if k % 9 != 0 { values["publishedAt"] = .date(millisecondsSince1970: Int64((k * 104_729) % 40) * 86_400_000) }
            let id = try tx.insert(entity: "Article", values: values, toOne: ["author": authors[k % 3]])
            try tx.setRelationship(id: id, entity: "Article", relationship: "tags", to: (0..<(k % 4)).map { tags[($0 + k) % tags.count] })
        }
    }
    return store
}

struct IndexOrderedPageTests {
    /// Every page of `query`, following its cursor to the end.
    private func pages(_ store: ModelStore, _ query: ObjectQuery) throws -> [ObjectPage] {
        var pages: [ObjectPage] = []
        var query = query
        repeat {
            let page = try store.read { (reader) throws(CartographError) in try reader.page(query) }
            pages.append(page)
            query.cursor = page.next
        } while query.cursor != nil && pages.count < 100
        return pages
    }

    @Test func R_Q3_aPageAnIndexOrdersIsThePageReadWithoutTheIndex() throws {
        let indexed = try newsStore(indexed: true), plain = try newsStore(indexed: false)
        let queries = [
            ObjectQuery(entity: "Article", predicate: "views > 300", orderBy: [("publishedAt", true)], limit: 7),
            ObjectQuery(entity: "Article", orderBy: [("publishedAt", false)], limit: 11, count: true),
            ObjectQuery(entity: "Article", predicate: "author.authorID == 'Ada'", orderBy: [("publishedAt", true)], limit: 5,
                        fields: ["title", "tags"]),
            ObjectQuery(entity: "Article", predicate: "publishedAt > CAST(864000, 'NSDate')", orderBy: [("publishedAt", false)], limit: 200),
        ]
        for query in queries {
            // The index delivers the order: the page is read in it, without sorting every match.
            var explained = query
            explained.explain = true
            let plan = try #require(try indexed.read { (reader) throws(CartographError) in try reader.page(explained) }.plan)
            #expect(!plan.sortsEveryMatch && !plan.fullScan && plan.indexes.contains { $0.contains("publishedAt") }, "\(plan.steps)")

            let ordered = try pages(indexed, query), sorted = try pages(plain, query)
            #expect(ordered.count == sorted.count)
            for (a, b) in zip(ordered, sorted) {
                #expect(a.items.map(\.bytes) == b.items.map(\.bytes), "\(query.predicate ?? "")")
                #expect(a.next == b.next && a.total == b.total)
            }
            #expect(ordered.flatMap(\.items).count == sorted.flatMap(\.items).count)
        }
    }
}
