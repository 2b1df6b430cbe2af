// The change feed's page as the API writes it (R-D4, docs/change-feed.md): `{"epoch", "changes", "next"}`,
// each change `{"seq", "op", "entity", "key"}` with the object (`shape=model`, its stored relationships)
// for an upsert and the time for a delete. Written straight into bytes, as a page of objects is.
import CartographCore
import CartographStore

extension ChangeFeedPage {
    /// The page's document, for the store whose feed has `epoch`.
    func document(epoch: String) -> RenderedJSON {
        var out: [UInt8] = []
        out.reserveCapacity(256 + entries.count * 512)
        out.append(contentsOf: #"{"epoch":"#.utf8)
        JSONWriter.writeString(epoch, into: &out)
        ChangeFeedEntry.writeChanges(entries, next: next, into: &out)
        return RenderedJSON(bytes: out)
    }
}

extension ChangeFeedEntry {
    /// `,"changes":[…],"next":<next>}`: the entries and the position after them, ending the document
    /// (a feed page's, or a webhook delivery's).
    static func writeChanges(_ entries: [ChangeFeedEntry], next: Int64, into out: inout [UInt8]) {
        out.append(contentsOf: #","changes":["#.utf8)
        for (index, entry) in entries.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            entry.write(into: &out)
        }
        out.append(contentsOf: #"],"next":"#.utf8)
        JSONWriter.writeInteger(next, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    func write(into out: inout [UInt8]) {
        out.append(contentsOf: #"{"seq":"#.utf8)
        JSONWriter.writeInteger(seq, into: &out)
        switch change {
        case .upsert: out.append(contentsOf: #","op":"upsert","entity":"#.utf8)
        case .delete: out.append(contentsOf: #","op":"delete","entity":"#.utf8)
        }
        JSONWriter.writeString(entity, into: &out)
        out.append(contentsOf: #","key":"#.utf8)
        JSONWriter.write(key, into: &out)
        switch change {
        case .upsert(let object):
            out.append(contentsOf: #","object":"#.utf8)
            ModelShapeRenderer.write(object, into: &out)
        case .delete(let milliseconds):
            // A rendered date has no byte a JSON string escapes.
            out.append(contentsOf: #","deletedAt":""#.utf8)
            ISO8601Instant.write(milliseconds: milliseconds, into: &out)
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
    }
}
