// A set of ids from a base on, one bit each: what a transaction remembers of every object it inserted
// costs an eighth of a byte per object, not a hash-table entry (issue 30: a payload's peak memory).

/// Ids from `base` on, as bits.
struct IDBitSet {
    let base: Int64
    private var words: [UInt64] = []

    init(base: Int64) { self.base = base }

    func contains(_ id: Int64) -> Bool {
        guard id >= base else { return false }
        let (word, bit) = Self.position(id - base)
        return word < words.count && words[word] & bit != 0
    }

    /// Adds `id`; an id below `base` is ignored.
    mutating func insert(_ id: Int64) {
        guard id >= base else { return }
        let (word, bit) = Self.position(id - base)
        if word >= words.count { words.append(contentsOf: repeatElement(0, count: word + 1 - words.count)) }
        words[word] |= bit
    }

    private static func position(_ offset: Int64) -> (word: Int, bit: UInt64) {
        (Int(offset >> 6), 1 << UInt64(offset & 63))
    }
}
