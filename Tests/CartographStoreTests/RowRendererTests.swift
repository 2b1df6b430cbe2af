// Pages and gets render objects straight from their rows (`ModelShapeRenderer.writeHead` through
// `TableRows`, docs/storage.md "Reading a page"): the bytes must be those of the decoded path (the
// object's values, `ObjectReader.values(of:)`, written by `ModelShapeRenderer.render`, R-Q4) for
// every attribute type, stored value and relationship storage, or a client would see a different
// document depending on the route.
import Foundation
import Testing
import CartographCore
import CartographMapping
import CartographTesting
@testable import CartographStore

/// Every attribute type, inheritance (a sub-entity's own column), a to-one to a compound identity, a
/// to-one to an entity without identification (key `_id`), a one-to-many read through its inverse's
/// column, an ordered many-to-many join table, and stubs.
private let everyTypeModel: JSONValue = [
    "entities": [
        ["name": "Thing", "userInfo": ["identityAttributes": "code"],
         "attributes": [["name": "code", "type": "string"], ["name": "i16", "type": "integer16"], ["name": "i32", "type": "integer32"],
                        ["name": "i64", "type": "integer64"], ["name": "price", "type": "decimal"], ["name": "ratio", "type": "double"],
                        ["name": "weight", "type": "float"], ["name": "flag", "type": "boolean"], ["name": "at", "type": "date"],
                        ["name": "blob", "type": "binary"], ["name": "uid", "type": "uuid"], ["name": "link", "type": "uri"],
                        ["name": "extra", "type": "transformable"]],
         "relationships": [["name": "card", "destination": "Card", "inverse": "things"],
                           ["name": "note", "destination": "Note", "inverse": "thing"],
                           ["name": "parts", "destination": "Part", "toMany": true, "inverse": "thing"],
                           ["name": "labels", "destination": "Label", "toMany": true, "ordered": true, "inverse": "things"]]],
        ["name": "Gadget", "parent": "Thing", "attributes": [["name": "volts", "type": "integer32"]]],
        ["name": "Card", "userInfo": ["identityAttributes": "suit,value"],
         "attributes": [["name": "suit", "type": "string"], ["name": "value", "type": "integer16"]],
         "relationships": [["name": "things", "destination": "Thing", "toMany": true, "inverse": "card"]]],
        ["name": "Note", "attributes": [["name": "text", "type": "string"]],
         "relationships": [["name": "thing", "destination": "Thing", "inverse": "note"]]],
        ["name": "Part", "userInfo": ["identityAttributes": "number"], "attributes": [["name": "number", "type": "integer64"]],
         "relationships": [["name": "thing", "destination": "Thing", "inverse": "parts"]]],
        ["name": "Label", "userInfo": ["identityAttributes": "name"], "attributes": [["name": "name", "type": "string"]],
         "relationships": [["name": "things", "destination": "Thing", "toMany": true, "inverse": "labels"]]],
    ],
]

/// Text that JSON must escape or that is not ASCII.
private let awkwardTexts = ["plain", "", "quote \" and \\ backslash", "tab\tnew\nline\r\u{01}\u{1F}", "naïve café", "emoji 🗺️ 👩🏽‍💻",
                            "</script>", String(repeating: "long ", count: 300)]

/// 60 things (every fourth a Gadget, some stubs, some values nil) connected to cards, notes, parts and labels.
private func everyTypeStore() throws -> (ModelStore, [Int64]) {
    let store = try makeStore(everyTypeModel)
    var random = SeededRandom(seed: 42)
    let (ids, _) = try store.write { (tx) throws(CartographError) -> [Int64] in
        let cards = try (0..<4).map { (k) throws(CartographError) in
            try tx.insert(entity: "Card", values: ["suit": .string(k % 2 == 0 ? "hearts, red" : "spades"), "value": .integer(Int64(k))])
        }
        let labels = try awkwardTexts.map { (name) throws(CartographError) in try tx.insert(entity: "Label", values: ["name": .string(name)]) }
        var things: [Int64] = []
        for k in 0..<60 {
            var values: [String: AttributeValue] = ["code": .string("\(awkwardTexts[k % awkwardTexts.count]) #\(k)")]
            func maybe(_ name: String, _ value: AttributeValue) { if random.next(upperBound: UInt64(5)) != 0 { values[name] = value } }
            maybe("i16", .integer(Int64(random.next(upperBound: UInt64(65_536))) - 32_768))
            maybe("i32", .integer(Int64(random.next(upperBound: UInt64(1) << 31)) * (k % 2 == 0 ? 1 : -1)))
            maybe("i64", .integer(k % 7 == 0 ? Int64.min : Int64(bitPattern: random.next())))
            maybe("price", .decimal(Decimal(string: ["0", "-0.001", "12345678901234567.891", "1e3", "9.5"][k % 5])!))
            maybe("ratio", .double([0, -1.5, 1e300, 3.0, 0.1, 1e15, 123456789012345680][k % 7]))
            maybe("weight", .double(Double(k) / 3))
            maybe("flag", .boolean(k % 3 == 0))
            maybe("at", .date(millisecondsSince1970: [0, -1, 1_479_840_815_000, 253_402_300_800_000, -62_167_219_200_001][k % 5] + Int64(k)))
            maybe("blob", .binary((0..<(k % 9)).map { UInt8(($0 * 37 + k) % 256) }))
            maybe("uid", .uuid("0f8fad5b-d9cb-469f-a165-70867728950\(k % 10)"))
            maybe("link", .uri("https://example.com/things/\(k)?q=a%20b"))
            maybe("extra", .json(["k": .number(JSONNumber(k)), "text": .string(awkwardTexts[k % awkwardTexts.count]), "list": [true, .null]]))
            if k % 4 == 3 { values["volts"] = .integer(Int64(k * 10)) }
            let entity = k % 4 == 3 ? "Gadget" : "Thing"
            var toOne: [String: Int64] = [:]
            if k % 3 != 0 { toOne["card"] = cards[k % cards.count] }
            let id = try tx.insert(entity: entity, values: values, stub: k % 11 == 5, toOne: toOne)
            if k % 2 == 0 { _ = try tx.insert(entity: "Note", values: ["text": .string("note \(k)")], toOne: ["thing": id]) }
            for part in 0..<(k % 4) { _ = try tx.insert(entity: "Part", values: ["number": .integer(Int64(k * 10 + part))], toOne: ["thing": id]) }
            let chosen = (0..<(k % 5)).map { labels[($0 * 3 + k) % labels.count] }
            try tx.setRelationship(id: id, entity: entity, relationship: "labels", to: Array(chosen.reversed()))
            things.append(id)
        }
        return things
    }
    return (store, ids)
}

struct RowRendererTests {
    /// The decoded path's bytes for each of `ids`.
    private func decoded(_ reader: StoreReader, _ ids: [Int64], entity: String, fields: Set<String>?) throws -> [[UInt8]] {
        try ids.map { id in
            let object = try #require(try reader.reader.object(id: id, entity: entity))
            return try reader.reader.document(of: object, fields: fields)
        }
    }

    /// Expects `ids` of `table` rendered from their rows to be the documents a decoded read renders.
    private func expectRenderedAsDecoded(_ reader: StoreReader, _ ids: [Int64], table: String, entity: String? = nil) throws {
        #expect(try reader.reader.rendered(ids: ids, table: table, fields: nil).map(\.bytes)
                == decoded(reader, ids, entity: entity ?? table, fields: nil))
    }

    @Test func R_Q4_aPageRenderedFromItsRowsIsTheDocumentADecodedReadRenders() throws {
        let (store, ids) = try everyTypeStore()
        try store.read { (reader) throws(CartographError) in
            do {
                for fields: Set<String>? in [nil, ["price"], ["labels", "at"], ["volts", "note"], ["card", "parts", "extra", "blob"]] {
                    let rendered = try reader.reader.rendered(ids: ids, table: "Thing", fields: fields).map(\.bytes)
                    let expected = try decoded(reader, ids, entity: "Thing", fields: fields)
                    #expect(rendered.count == 60)
                    for (index, bytes) in rendered.enumerated() where bytes != expected[index] {
                        Issue.record("fields \(String(describing: fields)), object \(ids[index]):\n\(String(decoding: bytes, as: UTF8.self))\n\(String(decoding: expected[index], as: UTF8.self))")
                    }
                }
                // Destinations: compound keys, `_id` keys, inverse foreign keys.
                for (entity, table) in [("Card", "Card"), ("Note", "Note"), ("Part", "Part"), ("Label", "Label")] {
                    let all = try reader.reader.connection.rows("SELECT _id FROM \(quoted(table)) ORDER BY _id DESC").compactMap { $0.first?.integerValue }
                    try expectRenderedAsDecoded(reader, all, table: table, entity: entity)
                }
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func R_Q4_valuesStoredInAClassTheirTypeDoesNotReadRenderAsADecodedReadDoes() throws {
        let (store, ids) = try everyTypeStore()
        // What another writer (or a damaged file) may leave: text in number columns, numbers in text
        // columns, bytes that are not UTF-8, a real in an integer column.
        let connection = try SQLiteConnection(path: store.path)
        try connection.execute("""
            UPDATE Thing SET i64 = 'not a number', code = 42, link = CAST(X'68C3FF80' AS TEXT), i32 = 2.5, flag = 'yes',
                at = 'yesterday', price = 7, ratio = '1.5', uid = X'00' WHERE _id = \(ids[4]);
            UPDATE Thing SET code = CAST(X'61FF62' AS TEXT) WHERE _id = \(ids[5])
            """)
        try store.read { (reader) throws(CartographError) in
            do {
                let some = Array(ids.prefix(8))
                try expectRenderedAsDecoded(reader, some, table: "Thing")
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func R_Q4_anObjectReadByItsKeyIsTheDocumentADecodedReadRenders() throws {
        let (store, ids) = try everyTypeStore()
        func encoded(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text }
        try store.read { (reader) throws(CartographError) in
            do {
                for (index, id) in ids.enumerated() {
                    let object = try #require(try reader.reader.object(id: id, entity: "Thing"))
                    let key = encoded(object.values["code"]?.jsonValue.stringValue ?? "")
                    for fields: Set<String>? in [nil, ["labels", "i64"]] {
                        #expect(try reader.reader.rendered(entity: "Thing", rawKey: key, fields: fields)?.bytes
                                == reader.reader.document(of: object, fields: fields))
                    }
                    // A sub-entity's route finds only its own objects.
                    let asGadget = try reader.reader.rendered(entity: "Gadget", rawKey: key, fields: nil)
                    #expect((asGadget != nil) == (index % 4 == 3))
                }
                // A compound key and an `_id` key.
                let card = try #require(try reader.reader.object(entity: "Card", rawKey: "hearts%2C%20red,2"))
                #expect(try reader.reader.rendered(entity: "Card", rawKey: "hearts%2C%20red,2", fields: nil)?.bytes
                        == reader.reader.document(of: card))
                let noteID = try #require(try reader.reader.connection.rows("SELECT max(_id) FROM Note").first?.first?.integerValue)
                let note = try #require(try reader.reader.object(id: noteID, entity: "Note"))
                #expect(try reader.reader.rendered(entity: "Note", rawKey: String(noteID), fields: nil)?.bytes == reader.reader.document(of: note))
                #expect(try reader.reader.rendered(entity: "Note", rawKey: "999999", fields: nil) == nil)
                #expect(try reader.reader.rendered(entity: "Part", rawKey: "-12", fields: nil) == nil)
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    /// Decimal texts a store may hold: canonical ones (written by the store) and others (another
    /// writer's), near the edges of the canonical form and of a Decimal's 38 digits.
    private static func decimalTexts() -> [String] {
        var random = SeededRandom(seed: 9)
        func digits(_ count: Int) -> String { String((0..<count).map { _ in Character(String(random.next() % 10)) }) }
        var texts = ["0", "-0", "1", "-1", "10", "0.5", "-0.001", "0.10", "00", "01", "1.", ".5", "-", "", "1e3", "+1", "1.0", "0.0",
                     "12345678901234567890123456789012345678", "123456789012345678901234567890123456789",
                     "0.00000000000000000000000000000000000001", "1234567890123456789.0123456789012345678",
                     "1234567890123456789.01234567890123456789", "-99999999999999999999999999999999999999", " 1", "1 ", "١"]
        for _ in 0..<400 {
            let integer = random.next() % 3 == 0 ? "0" : String(1 + random.next() % 9) + digits(Int(random.next() % 25))
            let fraction = random.next() % 2 == 0 ? "" : "." + digits(Int(random.next() % 25)) + String(1 + random.next() % 9)
            texts.append((random.next() % 4 == 0 ? "-" : "") + integer + fraction + (random.next() % 10 == 0 ? "0" : ""))
        }
        return texts
    }

    @Test func R_Q4_storedDecimalTextsRenderAsADecodedReadRendersThem() throws {
        let (store, ids) = try everyTypeStore()
        let texts = Self.decimalTexts()
        let connection = try SQLiteConnection(path: store.path)
        for (index, text) in texts.enumerated() {
            try connection.run("UPDATE Thing SET price = ? WHERE _id = ?", [.text(text), .integer(ids[index % ids.count])])
            try store.read { (reader) throws(CartographError) in
                do {
                    let object = try #require(try reader.reader.object(id: ids[index % ids.count], entity: "Thing"))
                    #expect(try reader.reader.rendered(ids: [object.id], table: "Thing", fields: ["price"]).first?.bytes
                            == reader.reader.document(of: object, fields: ["price"]), "\(text)")
                } catch {
                    Issue.record("\(text): \(error)")
                }
            }
        }
    }

    /// Rows, destinations and keys are read `IDListQuery.maximumCount` ids at a time: longer lists take
    /// several queries, whose rows must land in the same documents.
    @Test func R_Q4_listsLongerThanOneQueryOfIDsRenderAsADecodedReadRendersThem() throws {
        let store = try makeStore(everyTypeModel)
        let count = IDListQuery.maximumCount * 2 + 100
        let ((thing, parts), _) = try store.write { (tx) throws(CartographError) -> (Int64, [Int64]) in
            let thing = try tx.insert(entity: "Thing", values: ["code": .string("many parts")])
            let parts = try (0..<count).map { (k) throws(CartographError) in
                try tx.insert(entity: "Part", values: ["number": .integer(Int64(k))], toOne: ["thing": thing])
            }
            return (thing, parts)
        }
        try store.read { (reader) throws(CartographError) in
            do {
                // One object with more destinations than one query reads, and more objects than one query reads.
                try expectRenderedAsDecoded(reader, [thing], table: "Thing")
                let page = Array(parts.reversed())
                try expectRenderedAsDecoded(reader, page, table: "Part")
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func R_Q4_anObjectMissingFromAPageIsLeftOutAndTheOthersKeepTheirOrder() throws {
        let (store, ids) = try everyTypeStore()
        let rendered = try store.read { (reader) throws(CartographError) in
            do { return try reader.reader.rendered(ids: [ids[9], 999_999, ids[2], ids[30]], table: "Thing", fields: ["code"]) } catch {
                throw CartographError.store(error, "read")
            }
        }
        #expect(rendered.map { (try? JSONReader().parse($0.bytes))?["_id"] } == [ids[9], ids[2], ids[30]].map { .number(JSONNumber($0)) })
    }
}
