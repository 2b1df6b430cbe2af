// The text of a query over a list of ids (`… IN (?, ?, …) …`), built once per list length: a page
// runs several such queries per request (its rows, its to-many destinations, their keys), and building
// each one's placeholders and text again on every request was a visible share of a list's CPU.

/// One query shape over a list of ids: `head`, `(?, …)` with one placeholder per id, then `tail`.
/// A class: the layout (or a row reader it keeps) holds one per shape and fills in its texts as list
/// lengths are asked for; like the layout, it is used by one thread at a time.
final class IDListQuery {
    /// The ids bound to one statement; a longer list is read in chunks of this many. Well under
    /// SQLite's parameter limit, and a page of up to 500 objects is one query.
    static let maximumCount = 500

    private let head: String
    private let tail: String
    /// The text for each list length, indexed by the length (0 is never asked for); made on first use,
    /// as most row readers never read a list.
    private var texts: [String?] = []

    init(head: String, tail: String = "") {
        self.head = head
        self.tail = tail
    }

    /// The query's text for `count` ids (1 through `maximumCount`).
    func sql(count: Int) -> String {
        precondition((1...Self.maximumCount).contains(count), "an id list holds 1 to \(Self.maximumCount) ids")
        if texts.isEmpty { texts = Array(repeating: nil, count: Self.maximumCount + 1) }
        if let text = texts[count] { return text }
        let text = head + "(" + Array(repeating: "?", count: count).joined(separator: ", ") + ")" + tail
        texts[count] = text
        return text
    }
}
