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

// The same page in CSV and NDJSON (R-Q7, docs/change-feed.md#formats): one row per change. The feed mixes
// entities, so a CSV row holds the object as its `shape=model` JSON document in one cell.
extension ChangeFeedPage {
    /// The CSV columns of a change.
    static let csvColumns = ["seq", "op", "entity", "key", "deletedAt", "object"]

    /// A header row and a row per change.
    func csv() -> [UInt8] {
        let renderer = CSVRenderer(columns: Self.csvColumns)
        var out = renderer.headerRow
        for entry in entries {
            var row: [UInt8] = []
            renderer.writeCell(0, into: &row) { JSONWriter.writeInteger(entry.seq, into: &$0) }
            switch entry.change {
            case .upsert: renderer.writeCell(1, into: &row) { $0 += "upsert".utf8 }
            case .delete: renderer.writeCell(1, into: &row) { $0 += "delete".utf8 }
            }
            renderer.writeCell(2, into: &row) { JSONWriter.writeString(entry.entity, into: &$0) }
            renderer.writeCell(3, into: &row) { JSONWriter.write(entry.key, into: &$0) }
            switch entry.change {
            case .upsert(let object): renderer.writeCell(5, into: &row) { ModelShapeRenderer.write(object, into: &$0) }
            case .delete(let milliseconds): renderer.writeCell(4, into: &row) { ISO8601Instant.write(milliseconds: milliseconds, into: &$0) }
            }
            renderer.close(&row)
            out += row
        }
        return out
    }

    /// A line per change: the change as the JSON page lists it.
    func ndjson() -> [UInt8] {
        var out: [UInt8] = []
        for entry in entries {
            entry.write(into: &out)
            out.append(0x0A)
        }
        return out
    }
}
