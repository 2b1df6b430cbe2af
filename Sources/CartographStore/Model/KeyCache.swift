// API keys of destinations kept by a pooled read connection from one read to the next while nothing is
// committed to the store (`ModelStore.read` empties it when `PRAGMA data_version` moves): a list names
// the same authors and tags request after request, and reading their keys again was a query per
// destination table on every page, and one per to-one on every get.
import CartographCore

/// Keys by `_id` (`_id`s are unique across a store's tables and never reused). A class: its pooled
/// connection owns it, and like the connection it is used by one thread at a time.
final class KeyCache {
    /// Keys kept at most, past which the cache starts over: about 150 KB at some 70 bytes a key, so
    /// about 1.2 MB for a store's 8 idle readers (not counted in SQLite's memory budget); enough for the
    /// authors and tags the benchmarks' pages name (700 and 1,000).
    static let capacity = 2_048

    private var keys: [Int64: JSONValue] = [:]

    /// The keys kept, taken out for a read to use and add to; `keep` gives them back.
    func take() -> [Int64: JSONValue] {
        var taken: [Int64: JSONValue] = [:]
        swap(&taken, &keys)
        return taken
    }

    /// Keeps `keys` (read in this read's snapshot, or kept from one with the same data) for the next read.
    func keep(_ keys: [Int64: JSONValue]) { self.keys = keys.count > Self.capacity ? [:] : keys }

    /// Forgets every key: something was committed since they were read.
    func removeAll() { keys = [:] }
}
