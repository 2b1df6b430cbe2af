// The change feed's page as the API writes it (R-D4, docs/change-feed.md): `{"epoch", "changes", "next"}`,
// each change `{"seq", "op", "entity", "key"}` with the object (`shape=model`, its stored relationships)
// for an upsert and the time for a delete.
import CartographCore
import CartographStore

extension ChangeFeedPage {
    /// The page's document, for the store whose feed has `epoch`.
    func json(epoch: String) -> JSONValue {
        ["epoch": .string(epoch), "changes": .array(entries.map(\.json)), "next": .number(JSONNumber(next))]
    }
}

extension ChangeFeedEntry {
    var json: JSONValue {
        var entry = JSONObject()
        entry.append("seq", .number(JSONNumber(seq)))
        switch change {
        case .upsert(let object):
            entry.append("op", "upsert")
            entry.append("entity", .string(entity))
            entry.append("key", key)
            entry.append("object", ModelShapeRenderer.json(of: object))
        case .delete(let milliseconds):
            entry.append("op", "delete")
            entry.append("entity", .string(entity))
            entry.append("key", key)
            entry.append("deletedAt", .string(ISO8601Instant.render(milliseconds: milliseconds)))
        }
        return .object(entry)
    }
}
