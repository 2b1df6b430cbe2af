// The objects one write transaction changed, from which the change feed is written at commit (R-D4).

/// Objects in first-touch order, each once, kept as runs of consecutive ids of one entity: a payload's
/// inserts get consecutive ids, so 200,000 new objects are one run rather than 200,000 entries of an
/// id and an entity name (6 MiB of a tiny-object payload's peak, issue 14).
struct TouchedObjects {
    /// Entity names, indexed by the runs.
    private var entities: [String] = []
    private var runs: [(first: Int64, count: UInt32, entity: UInt32)] = []
    /// How many objects.
    private(set) var count = 0

    /// Appends an object the caller knows is not listed yet.
    mutating func append(_ id: Int64, _ entity: String) {
        count += 1
        if let last = runs.last, last.first + Int64(last.count) == id, last.count < UInt32.max, entities[Int(last.entity)] == entity {
            runs[runs.count - 1].count += 1
            return
        }
        let index = entities.firstIndex(of: entity) ?? {
            entities.append(entity)
            return entities.count - 1
        }()
        runs.append((id, 1, UInt32(index)))
    }

    /// The objects as runs of consecutive ids of one entity, in first-touch order.
    var idRuns: some Sequence<(first: Int64, count: Int, entity: String)> {
        runs.lazy.map { ($0.first, Int($0.count), entities[Int($0.entity)]) }
    }
}
