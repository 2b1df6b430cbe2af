// Wire/ writes objects read as values and the change feed's page straight into bytes (issue 31): the
// bytes must be those of a JSON value with the same members in the same order, written by `JSONWriter`
// as every other document is (and as these documents were before), for every kind of member.
import Testing
import CartographCore
@testable import CartographStore
@testable import CartographHTTP

struct WireDocumentTests {
    private static let author = ObjectValues(
        id: 7, entity: "Author", isStub: true, attributes: [.init(name: "name", value: .string("Ada \"A\" Lovelace"))], relationships: [])

    /// Every kind of attribute value and relationship: keys and embedded objects, to-one and to-many, none.
    private static let article = ObjectValues(
        id: 12, entity: "Article", isStub: false,
        attributes: [.init(name: "title", value: .string("naïve\n\u{01}</script>")), .init(name: "views", value: .integer(-3)),
                     .init(name: "price", value: nil), .init(name: "ratio", value: .double(0.1)),
                     .init(name: "at", value: .date(millisecondsSince1970: 1_479_840_815_000)), .init(name: "flag", value: .boolean(true)),
                     .init(name: "extra", value: .json(["k": [true, .null]]))],
        relationships: [.init(name: "author", toMany: false, destinations: .objects([author])),
                        .init(name: "editor", toMany: false, destinations: .objects([])),
                        .init(name: "publisher", toMany: false, destinations: .keys([])),
                        .init(name: "card", toMany: false, destinations: .keys([["hearts, red", 2]])),
                        .init(name: "tags", toMany: true, destinations: .keys(["a", 9])),
                        .init(name: "notes", toMany: true, destinations: .objects([author, author])),
                        .init(name: "parts", toMany: true, destinations: .keys([]))])

    /// `object`'s document as a JSON value: `_id`, `_entity`, `_stub` for a stub, its attributes, then its
    /// relationships (a to-one's first destination or null, a to-many's array).
    private static func json(of object: ObjectValues) -> JSONValue {
        var document = JSONObject()
        document.append("_id", .number(JSONNumber(object.id)))
        document.append("_entity", .string(object.entity))
        if object.isStub { document.append("_stub", .bool(true)) }
        for attribute in object.attributes { document.append(attribute.name, attribute.value?.jsonValue ?? .null) }
        for relationship in object.relationships {
            let destinations: [JSONValue]
            switch relationship.destinations {
            case .keys(let keys): destinations = keys
            case .objects(let objects): destinations = objects.map(json(of:))
            }
            document.append(relationship.name, relationship.toMany ? .array(destinations) : (destinations.first ?? .null))
        }
        return .object(document)
    }

    @Test func R_Q4_anObjectReadAsValuesIsWrittenAsItsJSONValueIs() {
        for object in [Self.article, Self.author] {
            #expect(ModelShapeRenderer().render(object).bytes == Self.json(of: object).jsonBytes)
        }
    }

    @Test func R_D4_theChangeFeedsPageIsWrittenAsItsJSONValueIs() {
        let page = ChangeFeedPage(entries: [
            ChangeFeedEntry(seq: 41, entity: "Article", key: "a-1", change: .upsert(Self.article)),
            ChangeFeedEntry(seq: 42, entity: "Card", key: ["hearts", 2], change: .delete(atMilliseconds: -62_167_219_200_001)),
        ], next: 42)
        var upsert = JSONObject(), deletion = JSONObject()
        upsert.append("seq", 41); upsert.append("op", "upsert"); upsert.append("entity", "Article"); upsert.append("key", "a-1")
        upsert.append("object", Self.json(of: Self.article))
        deletion.append("seq", 42); deletion.append("op", "delete"); deletion.append("entity", "Card"); deletion.append("key", ["hearts", 2])
        deletion.append("deletedAt", .string(ISO8601Instant.render(milliseconds: -62_167_219_200_001)))
        let expected: JSONValue = ["epoch": "e\"1", "changes": [.object(upsert), .object(deletion)], "next": 42]
        #expect(page.document(epoch: "e\"1").bytes == expected.jsonBytes)
        #expect(ChangeFeedPage(entries: [], next: 7).document(epoch: "e").bytes == (["epoch": "e", "changes": [], "next": 7] as JSONValue).jsonBytes)
    }
}
