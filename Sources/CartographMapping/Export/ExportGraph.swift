// The object graph an annotation export (R-Q4 `shape=json`) walks. The exporter is pure: it asks
// this protocol for related objects and never touches a store. The store fulfils it over one read
// snapshot; the unit tests with a dictionary.
public import CartographCore

/// Related objects for an export.
public protocol ExportGraph {
    /// The destinations of `relationship` (declared on `object`'s entity or an ancestor) for
    /// `object`, in the relationship's order: payload order for an ordered to-many, the store's
    /// order otherwise — the order a mapping compares a re-imported relationship with. Each
    /// destination carries its concrete entity.
    func destinations(of object: ExistingObject, relationship: Relationship) throws(CartographError) -> [ExistingObject]
}
