// A page that no index orders is chosen by its sort keys alone, `_id` ordering their ties afterwards
// (`SortedMatches`): with many ties, inside pages and across their ends, the pages must list exactly
// what ordering by the keys and then `_id` lists.
import Foundation
import Testing
import CartographCore
@testable import CartographStore

private let eventModel: JSONValue = [
    "entities": [
        ["name": "Event", "userInfo": ["identityAttributes": "eventID"],
         "attributes": [["name": "eventID", "type": "string"], ["name": "note", "type": "string"], ["name": "at", "type": "date"],
                        ["name": "level", "type": "integer64"], ["name": "score", "type": "double"]]],
    ],
]

/// 240 events with four distinct dates (and nil), three levels and two scores (and nil): every sort key
/// repeats dozens of times.
private func eventStore() throws -> ModelStore {
    let store = try makeStore(eventModel)
    _ = try store.write { (tx) throws(CartographError) in
        for k in 0..<240 {
            var values: [String: AttributeValue] = ["eventID": .string("e\(k)"), "note": .string("note \(k)"), "level": .integer(Int64(k * 7 % 3))]
            if k % 5 != 0 { values["at"] = .date(millisecondsSince1970: Int64(k * 13 % 4) * 86_400_000) }
            if k % 7 != 0 { values["score"] = .double(Double(k % 2) / 2) }
            _ = try tx.insert(entity: "Event", values: values)
        }
    }
    return store
}

struct SortedMatchesTests {
    @Test(arguments: [
        [("at", true)], [("at", false)], [("level", true), ("at", false)], [("score", false), ("level", true)],
    ] as [[(String, Bool)]], [1, 7, 50])
    func R_Q3_pagesOfTiedSortKeysListWhatOrderingByTheKeysThenIDLists(orderBy: [(String, Bool)], limit: Int) throws {
        let store = try eventStore()
        let all = try store.read { (r) throws(CartographError) in try r.page(ObjectQuery(entity: "Event", limit: 1000)) }.items
        func value(_ item: RenderedJSON, _ key: String) -> Double? {
            item[key].flatMap { $0.numberValue?.doubleValue ?? $0.stringValue.flatMap(ISO8601Instant.milliseconds(from:)).map(Double.init) }
        }
        // nil sorts first ascending, last descending; ties by _id in the last key's direction.
        let expected = all.filter { (value($0, "level") ?? 0) > 0 }.sorted { a, b in
            for (key, descending) in orderBy {
                let (x, y) = (value(a, key), value(b, key))
                if x == y { continue }
                let ascending = x == nil || (y != nil && x! < y!)
                return descending ? !ascending : ascending
            }
            let (x, y) = (value(a, "_id")!, value(b, "_id")!)
            return orderBy.last!.1 ? x > y : x < y
        }.map { $0["eventID"] }
        var listed: [JSONValue?] = []
        var cursor: String?
        repeat {
            let page = try store.read { (r) throws(CartographError) in
                try r.page(ObjectQuery(entity: "Event", predicate: "level > 0", orderBy: orderBy.map { (attribute: $0.0, descending: $0.1) },
                                       limit: limit, cursor: cursor))
            }
            #expect(page.items.count <= limit)
            listed += page.items.map { $0["eventID"] }
            cursor = page.next
        } while cursor != nil
        #expect(expected.count == 160)
        #expect(listed == expected)
    }

    @Test func R_Q3_aRunOfEqualKeysAtThePagesEndIsLeftToTheQueryOrderedByID() {
        let rows: [SortedMatch] = [(1, [.integer(9)]), (3, [.integer(5)]), (2, [.integer(5)]), (4, [.integer(5)])]
        #expect(SortedMatches.resolvingTies(rows, needed: 3, idDescending: true) == nil, "the run of 5s goes on past the third row")
        let resolved = SortedMatches.resolvingTies(Array(rows.prefix(3)), needed: 3, idDescending: false)
        #expect(resolved?.map(\.id) == [1, 2, 3], "every match was read: the run is ordered by _id")
        let nextIsWorse: [SortedMatch] = [(5, [.null]), (2, [.null]), (7, [.integer(1)])]
        #expect(SortedMatches.resolvingTies(nextIsWorse, needed: 2, idDescending: true)?.map(\.id) == [5, 2])
        // Integer 5 and real 5.0 are equal to SQLite: such neighbours are not ordered here.
        #expect(SortedMatches.resolvingTies([(1, [.integer(5)]), (2, [.real(5)])], needed: 2, idDescending: true) == nil)
    }
}
