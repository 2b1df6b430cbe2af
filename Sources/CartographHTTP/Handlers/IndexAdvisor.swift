// The index advisor's log (R-Q5, docs/predicates.md "Indexes and query plans"): `explain=true` tells one
// request how SQLite ran it; this tells the operator which list keeps reading whole tables. A list whose
// query stepped through `scanThreshold` rows or more without an index counts for its shape (tenant,
// model, entity, whether it filters, its orderBy); the `repeats`-th such list of a shape logs one notice
// naming what to declare, and the shape starts counting again.
import Logging
import Synchronization
import CartographStore

final class IndexAdvisor: Sendable {
    static let scanThreshold = 10_000
    static let repeats = 20
    /// Shapes counted; past this many the counts start over (a bound on memory, not a policy).
    static let shapeLimit = 1_000
    private let counts = Mutex<[String: Int]>([:])
    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    func note(_ page: ObjectPage, query: ObjectQuery, tenant: String, model: String) {
        guard page.fullScanRows >= Self.scanThreshold else { return }
        let order = query.orderBy.map { ($0.descending ? "-" : "") + $0.attribute }.joined(separator: ",")
        let filtered = query.predicate.map { !$0.isEmpty } ?? false
        let shape = "\(tenant)/\(model)/\(query.entity)|\(filtered ? "where" : "")|\(order)"
        let due = counts.withLock { (counts) -> Bool in
            if counts.count >= Self.shapeLimit, counts[shape] == nil { counts = [:] }
            counts[shape, default: 0] += 1
            guard counts[shape] == Self.repeats else { return false }
            counts[shape] = 0
            return true
        }
        guard due else { return }
        var advice: [String] = []
        if let first = query.orderBy.first {
            advice.append("declare \"indexed\": true on \(query.entity).\(first.attribute) (or a fetch index starting with it) so the order is read from an index")
        }
        if filtered {
            advice.append("an index on an attribute the where predicate compares narrows the scan")
        }
        logger.notice("a list keeps reading every row: declare an index", metadata: [
            "tenant": "\(tenant)", "model": "\(model)", "entity": "\(query.entity)", "orderBy": "\(order)",
            "where": "\(filtered ? "yes" : "no")", "rowsScanned": "\(page.fullScanRows)", "times": "\(Self.repeats)",
            "advice": "\(advice.isEmpty ? "list with a where predicate or an orderBy an index can serve" : advice.joined(separator: "; "))",
        ])
    }
}
