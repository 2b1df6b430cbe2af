// The aggregate route's body (R-Q9): `{"where", "arguments", "search", "groupBy", "aggregates": {"n": "count",
// "views": "sum:views"}, "orderBy", "limit"}` read into the store's query, each mistake a 400 at its member.
import CartographCore
import CartographStore

extension ModelRoutes {
    static func aggregateQuery(_ body: JSONValue, entity: String) throws(CartographError) -> AggregateQuery {
        guard case .object(let members) = body else { throw CartographError(.badRequest, "The aggregate body must be a JSON object.") }
        let known: Set<String> = ["where", "arguments", "search", "groupBy", "aggregates", "orderBy", "limit"]
        if let unknown = members.keys.first(where: { !known.contains($0) }) {
            throw invalid("/\(unknown)", "is not a member of an aggregate query (members: \(known.sorted().joined(separator: ", ")))")
        }
        var query = AggregateQuery(entity: entity)
        query.predicate = try optionalString(members, "where")
        query.arguments = try arguments(members)
        query.search = try optionalString(members, "search")
        query.groupBy = try stringList(members, "groupBy")
        if let aggregates = members["aggregates"], !aggregates.isNull {
            guard case .object(let named) = aggregates else { throw invalid("/aggregates", "expected an object of name: \"function:keyPath\"") }
            query.aggregates = try named.map { (name, value) throws(CartographError) -> Aggregate in
                let pointer = "/aggregates/" + name
                guard let text = value.stringValue else { throw invalid(pointer, "expected a string such as \"count\" or \"sum:views\"") }
                let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
                guard let function = Aggregate.Function(rawValue: parts.first ?? "") else {
                    throw invalid(pointer, "unknown function '\(parts.first ?? "")' (functions: \(Aggregate.Function.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                guard parts.count == 1 || !parts[1].isEmpty else { throw invalid(pointer, "a key path follows the colon") }
                return Aggregate(name: name, function: function, keyPath: parts.count == 2 ? parts[1] : nil)
            }
        }
        query.orderBy = try stringList(members, "orderBy").map { key in
            key.hasPrefix("-") ? (String(key.dropFirst()), true) : (key, false)
        }
        query.limit = try optionalInteger(members, "limit") ?? query.limit
        return query
    }
}
