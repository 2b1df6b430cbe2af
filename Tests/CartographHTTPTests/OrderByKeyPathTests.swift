// `orderBy` through to-one key paths (R-Q3, docs/queries.md#orderby), as NSSortDescriptor takes
// them: `publisher.name`, `-publisher.country.name`; objects with no destination sort as nil, and the
// keyset cursor pages through exactly the order of one unpaged list. And `fields=` (R-Q4), which limits
// what is rendered.
import Foundation
import Testing
import CartographCore
import CartographTesting

private let booksModel: JSONValue = ["entities": [
    ["name": "Country", "userInfo": ["identityAttributes": "id"],
     "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"]]],
    ["name": "Publisher", "userInfo": ["identityAttributes": "id"],
     "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string"]],
     "relationships": [["name": "country", "destination": "Country"], ["name": "books", "destination": "Book", "toMany": true, "inverse": "publisher"]]],
    ["name": "Book", "userInfo": ["identityAttributes": "id"],
     "attributes": [["name": "id", "type": "integer64"], ["name": "title", "type": "string"]],
     "relationships": [["name": "publisher", "destination": "Publisher", "inverse": "books"],
                       ["name": "tags", "destination": "Tag", "toMany": true, "ordered": true, "inverse": "books"]]],
    ["name": "Tag", "userInfo": ["identityAttributes": "name"],
     "attributes": [["name": "name", "type": "string"]],
     "relationships": [["name": "books", "destination": "Book", "toMany": true, "inverse": "tags"]]],
]]

private let booksMapping: JSONValue = [
    "entity": "Book", "attributes": ["id", "title"],
    "relationships": [["to": "tags", "mapping": ["entity": "Tag", "attributes": ["name"]]], ["to": "publisher", "mapping": [
        "entity": "Publisher", "attributes": ["id", "name"],
        "relationships": [["to": "country", "mapping": ["entity": "Country", "attributes": ["id", "name"]]]],
    ]]],
]

struct OrderByKeyPathTests {
    /// Books 1-9: publishers A (country Zed), B (country Alpha), C (no country); books 7-9 have no publisher.
    private let books: JSONValue = .array((1...9).map { n -> JSONValue in
        var book = JSONObject([("id", .number(JSONNumber(n))), ("title", .string("title \(10 - n)"))])
        let publishers: [Int: JSONValue] = [
            1: ["id": 1, "name": "A", "country": ["id": 1, "name": "Zed"]],
            2: ["id": 2, "name": "B", "country": ["id": 2, "name": "Alpha"]],
            3: ["id": 3, "name": "C"],
        ]
        if n <= 6 { book["publisher"] = publishers[(n - 1) % 3 + 1] }
        // Tags in an order of the book's own: the to-many is ordered.
        book["tags"] = .array(["t\(n % 3)", "t\(n % 2)", "shared"].map { ["name": .string($0)] })
        return .object(book)
    })

    /// Every page of `query` (limit 2), following the cursor; the books' ids in order.
    private func pages(_ api: ModelAPI, _ orderBy: String) throws -> [Int] {
        var ids: [Int] = []
        var cursor: String?
        repeat {
            let path = "entities/Book/objects?orderBy=\(orderBy)&limit=2" + (cursor.map { "&cursor=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" } ?? "")
            let page = try api.get(path)
            ids += page["items"]?.arrayValue?.compactMap { $0["id"]?.numberValue?.int64Value.map(Int.init) } ?? []
            cursor = page["next"]?.stringValue
        } while cursor != nil && ids.count < 20
        return ids
    }

    @Test func R_Q3_orderByAKeyPathThroughToOneRelationshipsSortsMissingDestinationsAsNilAndPagesExactly() throws {
        try ModelAPI.with(model: booksModel, mappings: ["books": booksMapping]) { api in
            try api.map("books", books)
            // Publisher name ascending (nil first, as nil attributes sort), ties by _id.
            #expect(try pages(api, "publisher.name") == [7, 8, 9, 1, 4, 2, 5, 3, 6])
            #expect(try pages(api, "-publisher.name") == [6, 3, 5, 2, 4, 1, 9, 8, 7])
            // Two steps: country of the publisher; a publisher without a country and a book without a publisher are both nil.
            #expect(try pages(api, "publisher.country.name,title") == [9, 8, 7, 6, 3, 5, 2, 4, 1])
            #expect(try pages(api, "-publisher.country.name,-title") == [1, 4, 2, 5, 3, 6, 7, 8, 9])

            // Through a to-many, or to nothing: 400 naming the key.
            let toMany = try api.client.send("GET", api.base + "/entities/Publisher/objects?orderBy=books.title", token: api.key)
            #expect(toMany.status == 400)
            #expect(toMany.text.contains("to-many"))
            let unknown = try api.client.send("GET", api.base + "/entities/Book/objects?orderBy=publisher.nope", token: api.key)
            #expect(unknown.status == 400)
            #expect(unknown.text.contains("'Publisher' has no attribute 'nope'"))
            let doubleDot = try api.client.send("GET", api.base + "/entities/Book/objects?orderBy=publisher..name", token: api.key)
            #expect(doubleDot.status == 400)
            #expect(doubleDot.text.contains("key path of names joined by '.'"))
            let deep = try api.client.send("GET", api.base + "/entities/Book/objects?orderBy=" + Array(repeating: "publisher", count: 40).joined(separator: ".") + ".name", token: api.key)
            #expect(deep.status == 400)
            #expect(deep.text.contains("at most 32 relationships"))
        }
    }

    @Test func R_Q4_fieldsLimitWhatIsRenderedAndTheKeyAlwaysComes() throws {
        try ModelAPI.with(model: booksModel, mappings: ["books": booksMapping]) { api in
            try api.map("books", books)
            let titles = try api.get("entities/Book/objects?orderBy=id&limit=2&fields=title")["items"]?.arrayValue ?? []
            #expect(titles.count == 2)
            #expect(titles.first?.objectValue.map { Array($0.keys) } == ["_id", "_entity", "id", "title"])
            let publishers = try api.get("entities/Book/objects?orderBy=id&limit=1&fields=%20publisher")["items"]?.arrayValue?.first
            #expect(publishers?.objectValue.map { Array($0.keys) } == ["_id", "_entity", "id", "publisher"])
            #expect(publishers?["publisher"] == 1)
            // include brings its relationship even when fields leaves it out.
            let included = try api.get("entities/Book/objects?orderBy=id&limit=1&fields=title&include=publisher")["items"]?.arrayValue?.first
            #expect(included?["publisher"]?["name"] == "A")
            #expect(try api.get("entities/Book/objects/2?fields=title").objectValue.map { Array($0.keys) } == ["_id", "_entity", "id", "title"])
            let queried = try api.client.sendJSON("POST", api.base + "/entities/Book/query", ["fields": ["title"], "limit": 1], token: api.key).json()
            #expect(queried["items"]?.arrayValue?.first?.objectValue.map { Array($0.keys) } == ["_id", "_entity", "id", "title"])

            let unknown = try api.client.send("GET", api.base + "/entities/Book/objects?fields=title,nope,zilch", token: api.key)
            #expect(unknown.status == 400)
            #expect(unknown.text.contains("'nope', 'zilch'"))
            let empty = try api.client.send("GET", api.base + "/entities/Book/objects?fields=title,", token: api.key)
            #expect(empty.status == 400)
            #expect(try empty.json()["errors"]?.arrayValue?.first?["pointer"] == "/fields")
            let json = try api.client.send("GET", api.base + "/entities/Book/objects?fields=title&shape=json", token: api.key)
            #expect(json.status == 400)
            #expect(json.text.contains("fields applies to shape=model"))
        }
    }

    /// A page reads its objects' relationships for the whole page at once (`ObjectReader.prefetch`): every
    /// object of a list renders exactly as it does alone, to-one and to-many (a foreign key on either side,
    /// a join table from either side, ordered), whatever `fields` keeps.
    @Test(arguments: ["", "&fields=books", "&fields=country,name"])
    func R_Q4_aListRendersEachObjectAsItRendersAlone(fields: String) throws {
        try ModelAPI.with(model: booksModel, mappings: ["books": booksMapping]) { api in
            try api.map("books", books)
            for entity in ["Book", "Publisher", "Tag"] {
                let field = entity == "Publisher" ? fields : ""
                let page = try api.get("entities/\(entity)/objects?limit=50\(field)")["items"]?.arrayValue ?? []
                #expect(page.count >= 3, "\(entity)")
                for item in page {
                    let key = item[entity == "Tag" ? "name" : "id"]?.jsonText.trimmingCharacters(in: ["\""]) ?? ""
                    #expect(try api.get("entities/\(entity)/objects/\(key)?\(field.dropFirst())") == item, "\(entity) \(key)")
                }
            }
            let book = try api.get("entities/Book/objects?orderBy=id&limit=1")["items"]?.arrayValue?.first
            #expect(book?["tags"] == ["t1", "shared"], "book 1: its tags in their order, t1 once")
            #expect(try api.get("entities/Publisher/objects?orderBy=id&limit=1")["items"]?.arrayValue?.first?["books"] == [1, 4])
        }
    }
}
