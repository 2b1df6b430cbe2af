// The scan projection (docs/storage.md, "Scans"): a covering index of each table's narrow columns that a
// list without a declared index reads instead of the rows (R-Q5), kept by migrations (R-M6) and added to
// stores written before it when they are opened.
import Foundation
import Synchronization
import Testing
import CartographCore
@testable import CartographStore

/// Articles with long text, narrow columns of every kind, a to-one and a to-many; authors and tags
/// with text only; counters with numbers only.
private let newsModel: JSONValue = [
    "entities": [
        ["name": "Article", "userInfo": ["identityAttributes": "articleID"],
         "attributes": [["name": "articleID", "type": "string"], ["name": "title", "type": "string"], ["name": "body", "type": "string"],
                        ["name": "publishedAt", "type": "date"], ["name": "views", "type": "integer64"],
                        ["name": "rating", "type": "double"], ["name": "featured", "type": "boolean"]],
         "relationships": [["name": "author", "destination": "Author", "inverse": "articles"],
                           ["name": "tags", "destination": "Tag", "toMany": true, "inverse": "articles"]]],
        ["name": "Author", "attributes": [["name": "authorID", "type": "string"], ["name": "name", "type": "string"]],
         "relationships": [["name": "articles", "destination": "Article", "toMany": true, "inverse": "author"]]],
        ["name": "Tag", "attributes": [["name": "name", "type": "string"]],
         "relationships": [["name": "articles", "destination": "Article", "toMany": true, "inverse": "tags"]]],
        ["name": "Counter", "attributes": [["name": "hits", "type": "integer64"], ["name": "at", "type": "date"]]],
    ],
]

private func indexNames(_ store: ModelStore) throws -> Set<String> {
    try SchemaPlan.existingIndexes(SQLiteConnection(path: store.path))
}

/// 300 articles by 3 authors with scattered views and dates (some nil), in one write.
private func newsStore() throws -> ModelStore {
    let store = try makeStore(newsModel)
    _ = try store.write { (tx) throws(CartographError) in
        var authors: [Int64] = []
        for name in ["Ada", "Grace", "Edsger"] { authors.append(try tx.insert(entity: "Author", values: ["authorID": .string(name), "name": .string(name)])) }
        for k in 0..<300 {
            var values: [String: AttributeValue] = [
                "articleID": .string("a\(k)"), "title": .string("Title \(k)"), "body": .string(String(repeating: "word ", count: 40)),
                "views": .integer(Int64((k * 7_919) % 1_000)), "rating": .double(Double(k % 5) / 2), "featured": .boolean(k % 3 == 0),
            ]
            if k % 10 != 0 { values["publishedAt"] = .date(millisecondsSince1970: Int64((k * 104_729) % 500) * 86_400_000) }
            _ = try tx.insert(entity: "Article", values: values, toOne: ["author": authors[k % 3]])
        }
    }
    return store
}

struct ScanProjectionTests {
    @Test func R_Q5_aTableWithTextGetsAScanProjectionOfItsNarrowColumns() throws {
        let store = try makeStore(newsModel)
        let names = try indexNames(store)
        #expect(names.contains("ix:Article:_id,publishedAt,views,rating,featured,author"), "\(names.sorted())")
        #expect(!names.contains { $0.hasPrefix("ix:Author:_id") }, "text only: nothing narrow to keep")
        #expect(!names.contains { $0.hasPrefix("ix:Counter:_id") }, "numbers only: the index would be the table again")
        #expect(SchemaPlan.indexColumns("ix:Article:_id,-publishedAt,views")?.columns == ["_id", "publishedAt", "views"])
    }

    @Test func R_Q5_aListWithoutADeclaredIndexReadsTheScanProjectionAndPagesAsTheRowsOrderThem() throws {
        let store = try newsStore()
        let query = { (cursor: String?, explain: Bool) throws -> ObjectPage in
            try store.read { (r) throws(CartographError) in
                try r.page(ObjectQuery(entity: "Article", predicate: "views > 400 AND featured == NO", orderBy: [("publishedAt", true)],
                                       limit: 17, cursor: cursor, explain: explain))
            }
        }
        let first = try query(nil, true)
        let plan = try #require(first.plan)
        #expect(plan.fullScan)
        #expect(plan.steps.first?.hasPrefix("SCAN Article USING COVERING INDEX ix:Article:_id,") == true, "\(plan.steps)")
        #expect(plan.summary.contains("scan projection") && plan.summary.contains("Article.publishedAt"), "\(plan.summary)")

        // Every match once, in the order the rows give: publishedAt descending (nil last), then _id descending.
        let all = try store.read { (r) throws(CartographError) in try r.page(ObjectQuery(entity: "Article", limit: 1000)) }.items
        let expected = all.filter { ($0["views"]?.numberValue?.int64Value ?? 0) > 400 && $0["featured"] == false }
            .sorted { a, b in
                let (x, y) = (a["publishedAt"]?.stringValue, b["publishedAt"]?.stringValue)
                if x != y { return (x ?? "") > (y ?? "") }
                return (a["_id"]?.numberValue?.int64Value ?? 0) > (b["_id"]?.numberValue?.int64Value ?? 0)
            }
            .map { $0["articleID"] }
        var listed = first.items.map { $0["articleID"] }
        var next = first.next
        while let cursor = next {
            let page = try query(cursor, false)
            listed += page.items.map { $0["articleID"] }
            next = page.next
        }
        #expect(expected.count > 17 * 2, "several pages")
        #expect(listed == expected)
        // A page renders whole rows: text, the to-one's key, the to-many's keys.
        #expect(first.items.first?["body"]?.stringValue?.hasPrefix("word ") == true)
        #expect(first.items.first?["author"]?.stringValue != nil)
        #expect(first.items.first?["tags"] == [])
    }

    /// A reader's page cache holds a projection between lists (16 MiB, grown as used); the process's budget
    /// for all SQLite memory (`--sqlite-memory-mib`, set by `serve`) is SQLite's soft heap limit, read back.
    @Test func aReaderKeepsSixteenMiBOfPagesAndTheMemoryBudgetReadsBack() throws {
        let store = try newsStore()
        let cacheSize = try store.read { (r) throws(CartographError) in
            try? r.reader.connection.rows("PRAGMA cache_size").first?.first?.integerValue
        }
        #expect(cacheSize == -16_384)
        let before = SQLiteConnection.limitMemory(bytes: nil)
        defer { SQLiteConnection.limitMemory(bytes: before) }
        SQLiteConnection.limitMemory(bytes: 96 << 20)
        #expect(SQLiteConnection.limitMemory(bytes: nil) == 96 << 20)
    }

    @Test func R_M6_aStoreWrittenBeforeTheScanProjectionGainsItWhenOpened() throws {
        let store = try newsStore()
        let projection = "ix:Article:_id,publishedAt,views,rating,featured,author"
        try SQLiteConnection(path: store.path).execute("DROP INDEX \(quoted(projection))")
        #expect(try !indexNames(store).contains(projection))
        let reopened = try ModelStore(name: "library", path: store.path)
        #expect(try indexNames(reopened).contains(projection))
        let page = try reopened.read { (r) throws(CartographError) in
            try r.page(ObjectQuery(entity: "Article", predicate: "views > 990", count: true, explain: true))
        }
        #expect(page.total == (0..<300).filter { ($0 * 7_919) % 1_000 > 990 }.count)
        #expect(page.plan?.indexes == [projection])
    }

    /// SQLite will not drop a column an index names: a migration that redefines one drops the index
    /// first and builds it again after.
    @Test func R_M6_redefiningAnIndexedColumnMigratesAndKeepsTheOtherColumns() throws {
        let store = try newsStore()
        var entities = newsModel["entities"]!.arrayValue!
        var article = entities[0].objectValue!
        var attributes = article["attributes"]!.arrayValue!
        attributes[4] = ["name": "views", "type": "double", "indexed": true]
        article["attributes"] = .array(attributes)
        entities[0] = .object(article)
        let (model, outcome) = try store.register(try ModelDocument.parse(json: ["entities": .array(entities)], name: "library"), allowDestructive: true)
        #expect(outcome == .migrated)
        #expect(model.attribute("views", of: "Article")?.type == .double)
        let names = try indexNames(store)
        #expect(names.contains("ix:Article:views") && names.contains("ix:Article:_id,publishedAt,views,rating,featured,author"), "\(names.sorted())")
        let page = try store.read { (r) throws(CartographError) in try r.page(ObjectQuery(entity: "Article", predicate: "rating == 2", count: true)) }
        #expect(page.total == 60, "the other columns kept their values")
    }
}

struct ReaderPoolTests {
    /// A store keeps as many idle read connections as threads may read at once (`serve` passes its thread
    /// count, at least 8), so reads past 8 at a time do not open and close a connection each.
    @Test(arguments: [8, 12])
    func aStoreKeepsOneIdleReaderPerThreadThatMayRead(idleReaders: Int) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("readers-\(UUID().uuidString).sqlite").path
        let store = try ModelStore(name: "library", path: path, idleReaders: idleReaders)
        _ = try store.register(try ModelDocument.parse(json: libraryModel, name: "library"), allowDestructive: false)
        // Twelve reads at once, each holding its connection until all twelve have one.
        let started = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        for _ in 0..<12 {
            Thread {
                _ = try? store.read { (_) throws(CartographError) in started.signal(); proceed.wait() }
                done.signal()
            }.start()
        }
        for _ in 0..<12 { started.wait() }
        for _ in 0..<12 { proceed.signal() }
        for _ in 0..<12 { done.wait() }
        #expect(store.readers.withLock { $0.idle.count } == idleReaders)
    }
}
