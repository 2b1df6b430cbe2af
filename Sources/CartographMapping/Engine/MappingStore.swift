// The narrow interface through which the mapping engine reads and writes a store, inside one write
// transaction. The engine stays pure; the store module conforms its transaction to this.
public import CartographCore
public import CartographPredicate

/// A stored object as the engine (and the annotation exporter) sees it.
public struct ExistingObject: Sendable, Equatable {
    public let id: Int64
    /// The concrete entity.
    public let entity: String
    public let isStub: Bool
    /// Attribute values by name (absent = nil).
    public let values: [String: AttributeValue]

    public init(id: Int64, entity: String, isStub: Bool, values: [String: AttributeValue]) {
        self.id = id
        self.entity = entity
        self.isStub = isStub
        self.values = values
    }
}

/// What the engine needs from a store during one payload.
public protocol MappingStore: AnyObject {
    var model: Model { get }
    /// Batched identification (R-I1…R-I3): objects of `entity` or a sub-entity whose `attributes` equal one
    /// of `identities` and that satisfy `predicate`, keyed by identity (the oldest wins a tie).
    func existingObjects(entity: String, attributes: [String], identities: [[AttributeValue]],
                         predicate: CheckedPredicate?) throws(CartographError) -> [[AttributeValue]: ExistingObject]
    func insertObject(entity: String, values: [String: AttributeValue], stub: Bool) throws(CartographError) -> Int64
    /// Writes the values that differ; true when anything changed.
    func updateObject(id: Int64, entity: String, values: [String: AttributeValue?], clearStub: Bool) throws(CartographError) -> Bool
    func destinationIDs(of id: Int64, entity: String, relationship: String) throws(CartographError) -> [Int64]
    func setDestinations(of id: Int64, entity: String, relationship: String, to destinations: [Int64]) throws(CartographError)
    /// Deletes with delete rules; returns how many objects were deleted.
    func deleteObject(id: Int64, entity: String) throws(CartographError) -> Int
    /// The API key of a stored object (DESIGN §10).
    func key(ofObject id: Int64, entity: String) throws(CartographError) -> JSONValue
}
