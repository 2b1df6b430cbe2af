// Full-text search (R-Q6, docs/queries.md#search): `searchable` attributes get an FTS5 index kept in
// the write's own transaction; `search=` ranks by bm25, combines with `where` and keyset cursors,
// `fields=_snippet` highlights; a bad search is a 400 at its offset.
import Foundation
import Testing
import CartographCore
import CartographStore
import CartographTesting

private func articlesModel(searchable: Bool) -> JSONValue {
    func text(_ name: String) -> JSONValue {
        searchable ? ["name": .string(name), "type": "string", "searchable": true] : ["name": .string(name), "type": "string"]
    }
    return ["entities": [
        ["name": "Article", "userInfo": ["identityAttributes": "id"],
         "attributes": [["name": "id", "type": "integer64"], text("title"), text("body"), ["name": "views", "type": "integer64"]]],
        ["name": "Note", "userInfo": ["identityAttributes": "id"],
         "attributes": [["name": "id", "type": "integer64"], ["name": "text", "type": "string"]]],
    ]]
}

private let searchArticlesMapping: JSONValue = ["entity": "Article", "attributes": ["id", "title", "body", "views"]]

/// A tenant with the articles model on an in-process server, its data directory known.
private struct SearchAPI {
    let server: InProcessServer
    let key: String
    let base = "/v1/tenants/acme/models/m"

    init(searchable: Bool = true) throws {
        server = try InProcessServer()
        key = try #require(try server.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        try register(searchable: searchable)
        let mapping = try server.sendJSON("PUT", base + "/mappings/articles", searchArticlesMapping, token: key)
        try #require(mapping.status == 201, "\(mapping.text)")
    }

    func register(searchable: Bool) throws {
        let response = try server.sendJSON("PUT", base, articlesModel(searchable: searchable), token: key)
        try #require([200, 201].contains(response.status), "\(response.text)")
    }

    func post(_ articles: [(id: Int, title: String, body: String, views: Int)]) throws {
        let payload: JSONValue = .array(articles.map { ["id": .number(JSONNumber($0.id)), "title": .string($0.title), "body": .string($0.body),
                                                        "views": .number(JSONNumber($0.views))] })
        let response = try server.sendJSON("POST", base + "/mappings/articles/payloads", payload, token: key)
        try #require(response.status == 200, "\(response.text)")
    }

    /// GET of the Article list with these query parameters (values percent-encoded here).
    func list(_ parameters: [(String, String)]) throws -> RawResponse {
        let query = parameters.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0.1)" }.joined(separator: "&")
        return try server.send("GET", base + "/entities/Article/objects?" + query, token: key)
    }

    func ids(_ parameters: [(String, String)]) throws -> [Int] {
        let response = try list(parameters)
        try #require(response.status == 200, "\(response.text)")
        return try ids(of: response.json())
    }

    func ids(of page: JSONValue) -> [Int] {
        page["items"]?.arrayValue?.compactMap { $0["id"]?.numberValue?.int64Value.map(Int.init) } ?? []
    }

    /// Every page of a search (limit 2), following the cursor.
    func pages(_ parameters: [(String, String)]) throws -> [Int] {
        var ids: [Int] = []
        var cursor: String?
        repeat {
            let response = try list(parameters + [("limit", "2")] + (cursor.map { [("cursor", $0)] } ?? []))
            try #require(response.status == 200, "\(response.text)")
            let page = try response.json()
            ids += self.ids(of: page)
            cursor = page["next"]?.stringValue
        } while cursor != nil && ids.count < 100
        return ids
    }

    /// The store's file, opened beside the server (read-only).
    func file() throws -> SQLiteConnection {
        try SQLiteConnection(path: server.dataDirectory.appendingPathComponent("data/tenants/acme/m.sqlite").path, readOnly: true)
    }

    /// Names of the store's search indexes (FTS5 tables).
    func searchIndexes() throws -> [String] {
        try file().rows("SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name").compactMap { $0.first?.textValue }
    }

    /// FTS5's own check of the index against the rows (external content: rank 1 compares with the table).
    func checkIndex() throws {
        let connection = try SQLiteConnection(path: server.dataDirectory.appendingPathComponent("data/tenants/acme/m.sqlite").path)
        for name in try searchIndexes() {
            let fts = "\"\(name)\""
            try connection.run("INSERT INTO \(fts) (\(fts), rank) VALUES ('integrity-check', 1)")
        }
    }
}

private let corpus: [(id: Int, title: String, body: String, views: Int)] = [
    (1, "Foxes of the north", "A fox and another fox and a third fox run.", 10),
    (2, "Dogs", "The dog sleeps; no fox here.", 20),
    (3, "Gardens", "Roses and tulips.", 30),
    (4, "Fox", "fox", 40),
    (5, "Winter", "Snow falls on the fox den and the fox sleeps.", 50),
    (6, "Cats", "A cat watches a fox.", 60),
    (7, "Spiders", "Spider-Man and spiderwebs.", 70),
    (8, "Fox news", "Foxglove is a plant; a fox is not.", 80),
]

struct SearchTests {
    @Test func R_Q6_searchRanksByBm25AndPagesWithWhereAndACursorExactly() throws {
        let api = try SearchAPI()
        try api.post(corpus)
        let all = try api.ids([("search", "fox"), ("limit", "100")])
        // Every article holding the word (not "foxes", "foxglove": words, not substrings), the shortest
        // with the most of it first (bm25).
        #expect(Set(all) == [1, 2, 4, 5, 6, 8])
        #expect(all.first == 4)
        // Ranked order, paged 2 at a time: the pages together are the whole result, once each.
        let paged = try api.pages([("search", "fox")])
        #expect(paged == all)
        // With `where`: the same order, without the filtered out.
        let filtered = try api.pages([("search", "fox"), ("where", "views >= 20 AND views <= 60")])
        #expect(filtered == all.filter { [2, 4, 5, 6].contains($0) })
        // An explicit order replaces the rank; `_rank` can be named, descending too.
        #expect(try api.pages([("search", "fox"), ("orderBy", "-views")]) == [8, 6, 5, 4, 2, 1])
        #expect(try api.pages([("search", "fox"), ("orderBy", "-_rank")]) == all.reversed())
        // Equal ranks are ordered by `_id` (in the rank's direction), and pages split runs of them exactly.
        try api.post([(20, "Twin", "otter", 1), (21, "Twin", "otter", 1), (22, "Twin", "otter", 1)])
        #expect(try api.pages([("search", "otter")]) == [20, 21, 22])
        #expect(try api.pages([("search", "otter"), ("orderBy", "-_rank")]) == [22, 21, 20])
        // Prefix, phrase, OR and NOT.
        #expect(Set(try api.ids([("search", "fox*")])) == [1, 2, 4, 5, 6, 8])
        #expect(Set(try api.ids([("search", "spider*")])) == [7])
        #expect(try api.ids([("search", "\"fox den\"")]) == [5])
        #expect(Set(try api.ids([("search", "tulips OR dog")])) == [2, 3])
        #expect(Set(try api.ids([("search", "fox NOT sleeps")])) == [1, 4, 6, 8])
        #expect(Set(try api.ids([("search", "fox -sleeps -cat")])) == [1, 4, 8])
        // The count is of every match, and the POST query takes `search` too.
        #expect(try api.list([("search", "fox"), ("count", "true"), ("limit", "1")]).json()["total"]?.numberValue?.int64Value == 6)
        // Facets (R-Q8) count over the search's matches, not the whole entity: views of 10, 20, 40, 50, 60, 80 once each.
        let faceted = try api.list([("search", "fox"), ("facets", "views"), ("facetLimit", "100"), ("limit", "1")]).json()
        let counted = faceted["facets"]?["views"]?["values"]?.arrayValue?.compactMap { value -> Int? in
            guard value["count"]?.numberValue?.int64Value == 1 else { return nil }
            return value["value"]?.numberValue?.int64Value.map(Int.init)
        } ?? []
        #expect(Set(counted) == [10, 20, 40, 50, 60, 80] && counted.count == 6, "\(faceted)")
        // explain names the full-text index and advises no index on the rank.
        let summary = try api.list([("search", "fox"), ("explain", "true")]).json()["plan"]?["summary"]?.stringValue ?? ""
        #expect(summary.contains("full-text index") && !summary.contains("_rank"), "\(summary)")
        let posted = try api.server.sendJSON("POST", api.base + "/entities/Article/query",
                                             ["search": "fox", "where": "views > $v", "arguments": ["v": 40], "limit": 10], token: api.key)
        #expect(posted.status == 200)
        #expect(try api.ids(of: posted.json()) == all.filter { [5, 6, 8].contains($0) })
    }

    @Test func R_Q6_snippetHighlightsTheMatchedWords() throws {
        let api = try SearchAPI()
        try api.post(corpus)
        let response = try api.list([("search", "tulips"), ("fields", "title,_snippet")])
        #expect(response.status == 200, "\(response.text)")
        let item = try #require(try response.json()["items"]?.arrayValue?.first)
        #expect(item["_snippet"]?.stringValue == "Roses and <mark>tulips</mark>.")
        #expect(item["title"]?.stringValue == "Gardens")
        #expect(item["body"] == nil)
        // Without search there is nothing to excerpt.
        let unsearched = try api.list([("fields", "_snippet")])
        #expect(unsearched.status == 400)
        #expect(try unsearched.json()["errors"]?.arrayValue?.first?["pointer"]?.stringValue == "/fields")
    }

    @Test func R_Q6_anUpdateChangesWhatMatchesAndDeletesAndTombstonesLeaveTheIndex() throws {
        let api = try SearchAPI()
        try api.post(corpus)
        // The title of 3 changes: the old word no longer finds it, the new one does.
        try api.post([(3, "Orchards", "Apples and pears.", 30)])
        #expect(try api.ids([("search", "tulips")]) == [])
        #expect(try api.ids([("search", "pears")]) == [3])
        // A delete by key, and a bulk delete: each leaves a tombstone (R-D3) and leaves the index.
        #expect(try api.server.send("DELETE", api.base + "/entities/Article/objects/4", token: api.key).status == 204)
        #expect(try api.server.send("DELETE", api.base + "/entities/Article/objects?where=views%20%3E%3D%2080", token: api.key).status == 200)
        #expect(Set(try api.ids([("search", "fox")])) == [1, 2, 5, 6])
        // A mapping's deletionPredicate (R-D1) deletes after its payload: article 1 (10 views) goes.
        let purge = try api.server.sendJSON("PUT", api.base + "/mappings/purge",
                                            ["entity": "Article", "attributes": ["id", "views"], "deletionPredicate": "views < 15"], token: api.key)
        #expect(purge.status == 201, "\(purge.text)")
        #expect(try api.server.sendJSON("POST", api.base + "/mappings/purge/payloads", [["id": 2, "views": 20]], token: api.key).status == 200)
        #expect(Set(try api.ids([("search", "fox")])) == [2, 5, 6])
        let changes = try api.server.send("GET", api.base + "/changes?since=0&limit=1000", token: api.key).json()["changes"]?.arrayValue ?? []
        let tombstones = changes.filter { $0["op"]?.stringValue == "delete" }.compactMap { $0["key"]?.numberValue?.int64Value }
        #expect(Set(tombstones) == [1, 4, 8], "\(changes)")
        // The index holds exactly what the rows hold (FTS5's integrity check against the table).
        try api.checkIndex()
    }

    @Test func R_Q6_aMigrationAddingSearchableIndexesTheStoredRowsAndDroppingItRemovesTheIndex() throws {
        let api = try SearchAPI(searchable: false)
        try api.post(corpus)
        #expect(try api.searchIndexes() == [])
        let before = try api.list([("search", "fox")])
        #expect(before.status == 400)
        #expect(before.text.contains("(its string attributes: body, title)"), "\(before.text)")
        try api.register(searchable: true)
        #expect(try api.searchIndexes() == ["fts:Article:title,body"])
        #expect(Set(try api.ids([("search", "fox")])) == [1, 2, 4, 5, 6, 8])
        try api.checkIndex()
        try api.register(searchable: false)
        #expect(try api.searchIndexes() == [])
        #expect(try api.file().rows("SELECT count(*) FROM sqlite_master WHERE name LIKE 'fts:%'").first?.first?.integerValue == 0)
        #expect(try api.list([("search", "fox")]).status == 400)
        // Writes go on without the index's triggers.
        try api.post([(9, "Fox again", "fox", 90)])
        #expect(try api.ids([("where", "views == 90")]) == [9])
    }

    @Test func R_Q6_aMalformedSearchIsA400AtItsOffset() throws {
        let api = try SearchAPI()
        try api.post(corpus)
        for (search, offset) in [("spider \"man", 7), ("fox OR", 4), ("OR fox", 0), ("(fox", 0), ("fox)", 3), ("NOT fox", 0), ("", 0), ("a * b", 2)] {
            let response = try api.list([("search", search)])
            #expect(response.status == 400, "\(search): \(response.text)")
            let problem = try response.json()
            #expect(problem["offset"]?.numberValue?.int64Value == Int64(offset), "\(search): \(response.text)")
            #expect(problem["errors"]?.arrayValue?.first?["pointer"]?.stringValue == "/search", "\(search)")
        }
        let posted = try api.server.sendJSON("POST", api.base + "/entities/Article/query", ["search": "fox AND"], token: api.key)
        #expect(posted.status == 400)
        #expect(try posted.json()["offset"]?.numberValue?.int64Value == 4)
        // Characters FTS5's own syntax would refuse are only words here.
        #expect(try api.list([("search", "e-mail: 10:30 {x} ^y")]).status == 200)
        // A NUL (which FTS5 would read as the end of its query) is never a 500.
        let nul = try api.list([("search", "fox\u{0}\"a\u{0}b\"")])
        #expect([200, 400].contains(nul.status), "\(nul.text)")
    }

    @Test func R_Q6_aSubEntitysSearchCoversItsOwnObjectsAndItsInheritedAndOwnSearchableAttributes() throws {
        // Post (title searchable) and its sub-entity Story (body searchable) share one table and one index.
        let model: JSONValue = ["entities": [
            ["name": "Post", "userInfo": ["identityAttributes": "id"],
             "attributes": [["name": "id", "type": "integer64"], ["name": "title", "type": "string", "searchable": true]]],
            ["name": "Story", "parent": "Post", "attributes": [["name": "body", "type": "string", "searchable": true]]],
        ]]
        let mappings: [String: JSONValue] = ["posts": ["entity": "Post", "attributes": ["id", "title"]],
                                             "stories": ["entity": "Story", "attributes": ["id", "title", "body"]]]
        try ModelAPI.with(model: model, mappings: mappings) { api in
            try api.map("posts", [["id": 1, "title": "fox"], ["id": 2, "title": "dog"]])
            try api.map("stories", [["id": 3, "title": "fox and fox", "body": "a fox"], ["id": 4, "title": "cat", "body": "fox"],
                                    ["id": 5, "title": "cat", "body": "dog"], ["id": 6, "title": "fox", "body": "fox den"]])
            func ids(_ entity: String, _ query: String) throws -> [Int] {
                var ids: [Int] = [], cursor: String?
                repeat {
                    let page = try api.get("entities/\(entity)/objects?\(query)&limit=1"
                                           + (cursor.map { "&cursor=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" } ?? ""))
                    ids += page["items"]?.arrayValue?.compactMap { $0["id"]?.numberValue?.int64Value.map(Int.init) } ?? []
                    cursor = page["next"]?.stringValue
                } while cursor != nil && ids.count < 20
                return ids
            }
            // The parent finds every fox (from the index alone: it has the table to itself); the sub-entity only its
            // own (joined to the table for its `_entity`), through its inherited title and its body, in the same order.
            let posts = try ids("Post", "search=fox")
            #expect(Set(posts) == [1, 3, 4, 6] && posts.count == 4, "\(posts)")
            #expect(try ids("Story", "search=fox") == posts.filter { [3, 4, 6].contains($0) })
            #expect(try ids("Story", "search=fox&where=title%20%3D%3D%20%27cat%27") == [4])
            #expect(Set(try ids("Story", "search=den%20OR%20dog")) == [5, 6])
        }
    }

    @Test func R_Q6_searchOnAnEntityWithoutSearchableAttributesNamesTheCandidates() throws {
        let api = try SearchAPI()
        let response = try api.server.send("GET", api.base + "/entities/Note/objects?search=x", token: api.key)
        #expect(response.status == 400)
        #expect(response.text.contains("(its string attributes: text)"), "\(response.text)")
        #expect(try response.json()["errors"]?.arrayValue?.first?["pointer"]?.stringValue == "/search")
        // `_rank` without a search has nothing to order by.
        #expect(try api.list([("orderBy", "_rank")]).status == 400)
    }
}
