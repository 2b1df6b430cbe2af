// A list's facet on the wire (R-Q8): `{"values": [{"value", "count"}…], "otherValues", "otherCount"}`.
import CartographCore
import CartographStore

extension Facet {
    var json: JSONValue {
        .object(JSONObject([
            ("values", .array(values.map { .object(JSONObject([("value", $0.value), ("count", .number(JSONNumber($0.count)))])) })),
            ("otherValues", .number(JSONNumber(otherValues))), ("otherCount", .number(JSONNumber(otherCount))),
        ]))
    }
}
