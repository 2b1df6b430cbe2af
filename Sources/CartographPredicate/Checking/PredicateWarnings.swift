// What a predicate that checks may still not mean: NSPredicate's LIKE takes `*` and `?` as its
// wildcards, so a pattern written with SQL's (`LIKE 'Spider%'`) matches its `%` literally and finds
// next to nothing, silently.

/// Something a valid predicate probably does not mean, at the offset of its cause.
public struct PredicateWarning: Sendable, Equatable {
    /// Character offset in the predicate string.
    public let offset: Int
    public let message: String
}

extension Predicate {
    /// The predicate's warnings, in the order they appear.
    public var warnings: [PredicateWarning] {
        switch self {
        case .constant: []
        case .not(let inner): inner.warnings
        case .and(let parts), .or(let parts): parts.flatMap(\.warnings)
        case .comparison(let comparison): comparison.warnings
        }
    }
}

extension Comparison {
    var warnings: [PredicateWarning] {
        guard comparisonOperator == .like, case .literal(.string(let pattern)) = rhs.kind,
              pattern.contains(where: { $0 == "%" || $0 == "_" }), !pattern.contains(where: { $0 == "*" || $0 == "?" }) else { return [] }
        let meant = String(pattern.map { $0 == "%" ? "*" : $0 == "_" ? "?" : $0 })
        return [PredicateWarning(offset: rhs.offset.value,
                                 message: "LIKE's wildcards are * (any characters) and ? (one character); '%' and '_' match only themselves, "
                                     + "so '\(pattern)' finds text holding them as written: for SQL's meaning write '\(meant)'")]
    }
}
