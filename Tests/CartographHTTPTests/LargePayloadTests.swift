// A payload of several chunks through the routes, in process (issue 14, bounded memory): mapped chunk by
// chunk in one transaction, answered with every top-level object (the response written straight from the
// result, or through the stored response of an Idempotency-Key), and rolled back whole on an invalid object.
import Foundation
import Testing
import CartographCore
import CartographTesting

@Suite(.serialized) struct LargePayloadTests {
    static let model: JSONValue = ["entities": [
        ["name": "Item", "userInfo": ["identityAttributes": "id"],
         "attributes": [["name": "id", "type": "integer64"], ["name": "name", "type": "string", "minLength": 1]]],
    ]]
    static let mapping: JSONValue = ["entity": "Item", "keyPath": "items", "attributes": ["id": "id", "name": "name"]]
    /// More than four chunks of the server's (2,048 representations each).
    static let count = 9000

    @Test func R_P11_R_P12_aPayloadOfSeveralChunksIsAnsweredWithEveryObjectOrStoresNothing() throws {
        try ModelAPI.with(model: Self.model, mappings: ["items": Self.mapping]) { api in
            let items: [JSONValue] = (0..<Self.count).map { ["id": .number(JSONNumber($0)), "name": .string("item \($0)")] }
            var invalid = items
            invalid[Self.count - 1] = ["id": .number(JSONNumber(Self.count - 1)), "name": ""]
            let failed = try api.post("items", ["items": .array(invalid)])
            #expect(failed.status == 422)
            #expect(try failed.json()["errors"]?.arrayValue?.map { $0["pointer"] } == [.string("/items/\(Self.count - 1)/name")])
            #expect(try api.get("entities/Item/objects?count=true")["total"] == 0, "the chunks before the last were rolled back")

            let response = try api.post("items", ["items": .array(items)], headers: [("Idempotency-Key", "large")])
            try #require(response.status == 200, "\(response.text.prefix(300))")
            let result = try response.json()
            #expect(result["inserted"] == .number(JSONNumber(Self.count)))
            #expect(result["objects"]?.arrayValue?.count == Self.count)
            #expect(result["objects"]?.arrayValue?.last == ["entity": "Item", "key": .number(JSONNumber(Self.count - 1))])
            #expect(try api.post("items", ["items": .array(items)], headers: [("Idempotency-Key", "large")]).json() == result,
                    "the stored response is replayed")
            #expect(try api.get("entities/Item/objects?count=true")["total"] == .number(JSONNumber(Self.count)))

            // Without a key the response is written from the result's bytes: the same members in the same order.
            let again = try api.map("items", ["items": .array(items)])
            #expect(again["unchanged"] == .number(JSONNumber(Self.count)))
            #expect(again["objects"] == result["objects"])
            #expect(again.objectValue?.keys == result.objectValue?.keys)
        }
    }
}
