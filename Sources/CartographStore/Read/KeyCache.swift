// API keys of destinations kept by a pooled read connection from one read to the next while nothing is
// committed to the store (`ModelStore.read` empties it when `PRAGMA data_version` moves): a list names
// the same authors and tags request after request, and reading their keys again was a query per
// destination table on every page, and one per to-one on every get.
import Synchronization
import CartographCore

/// Keys by `_id` (`_id`s are unique across a store's tables and never reused). A class: its pooled
/// connection owns it, and like the connection it is used by one thread at a time.
final class KeyCache {
    /// Keys kept at most (a few dozen bytes each): past it, the cache starts over.
    static let capacity = 2_048

    private var keys: [Int64: JSONValue] = [:]
    /// What every cache of the process may keep together (these are outside SQLite's memory budget).
    private let budget: KeyCacheBudget

    init(budget: KeyCacheBudget = .shared) { self.budget = budget }

    /// The keys kept, taken out for a read to use and add to; `keep` gives them back.
    func take() -> [Int64: JSONValue] {
        var taken: [Int64: JSONValue] = [:]
        swap(&taken, &keys)
        budget.release(taken.count)
        return taken
    }

    /// Keeps `keys` (read in this read's snapshot, or kept from one with the same data) for the next read,
    /// unless they are more than one cache or the process's caches may hold.
    func keep(_ keys: [Int64: JSONValue]) {
        budget.release(self.keys.count)
        self.keys = keys.count <= Self.capacity && budget.reserve(keys.count) ? keys : [:]
    }

    /// Forgets every key: something was committed since they were read.
    func removeAll() {
        budget.release(keys.count)
        keys = [:]
    }

    deinit { budget.release(keys.count) }
}

/// The keys all `KeyCache`s of a process hold together, against a limit: 2,048 keys in each of 8 idle
/// readers of 256 open stores would otherwise be ~300 MB.
final class KeyCacheBudget: Sendable {
    /// About 5 MB of keys.
    static let shared = KeyCacheBudget(limit: 65_536)

    let limit: Int
    private let held = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Keys held now.
    var count: Int { held.load(ordering: .relaxed) }

    /// Takes `count` keys from the budget; false (and nothing taken) when that would pass the limit.
    func reserve(_ count: Int) -> Bool {
        guard count > 0 else { return true }
        if held.add(count, ordering: .relaxed).newValue <= limit { return true }
        held.subtract(count, ordering: .relaxed)
        return false
    }

    func release(_ count: Int) {
        if count > 0 { held.subtract(count, ordering: .relaxed) }
    }
}
