// `explain=true`'s plan as the API writes it (R-Q5, docs/predicates.md "Indexes and query plans").
import CartographCore
import CartographStore

extension QueryPlan {
    var json: JSONValue {
        .object(JSONObject([
            ("summary", .string(summary)), ("fullScan", .bool(fullScan)), ("sortsEveryMatch", .bool(sortsEveryMatch)),
            ("indexes", .array(indexes.map(JSONValue.string))), ("steps", .array(steps.map(JSONValue.string))),
        ]))
    }
}
