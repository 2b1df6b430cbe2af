// The narrow interface through which the mapping engine reads and writes a store, inside one write
// transaction. The engine stays pure; the store module conforms its transaction to this.
public import CartographCore
public import CartographPredicate

/// A stored object as the store reads it, the engine compares it and the annotation exporter renders it.
public struct ExistingObject: Sendable, Equatable {
    public let id: Int64
    /// The concrete entity.
    public let entity: String
    public let isStub: Bool
    /// Attribute values by name (absent = nil); a read may decode only some attributes.
    public var values: [String: AttributeValue]
    /// To-one destinations by relationship name (`_id`s), when the read decoded them; absent = none.
    public var toOne: [String: Int64]

    public init(id: Int64, entity: String, isStub: Bool, values: [String: AttributeValue], toOne: [String: Int64] = [:]) {
        self.id = id
        self.entity = entity
        self.isStub = isStub
        self.values = values
        self.toOne = toOne
    }
}

/// What R-P7's read-ahead finds (`MappingLookup.firstObjects`): per identity asked, the oldest object,
/// and the values it read of that object, in one flat array rather than a dictionary per object (the
/// read-ahead decodes an object of every top-level representation, under the write lock).
public struct FirstObjects: Sendable {
    /// By position; nil where no object has the identity. Their own `values` may be empty.
    public var objects: [ExistingObject?]
    /// The values of the `reading` attributes of `objects[position]`, at `position * width + k`.
    public var values: [AttributeValue?]
    /// How many attributes were read for each object.
    public let width: Int

    /// Nothing found yet for `count` identities, reading `width` attributes of each.
    public init(count: Int, width: Int) {
        objects = Array(repeating: nil, count: count)
        values = Array(repeating: nil, count: count * width)
        self.width = width
    }

    /// The value of the `k`th attribute read of the object found at `position`.
    public subscript(position: Int, k: Int) -> AttributeValue? { values[position * width + k] }
}

/// What reading a payload (phase 1) looks up: R-P7's read-ahead of its top-level objects. The store's
/// read-ahead lookup serves before the write transaction; the transaction itself serves inside it.
public protocol MappingLookup {
    /// R-P7's read-ahead: for each of `identities`, in their order, the oldest object of `entity` or a
    /// sub-entity whose `attributes` equal it and that satisfies `predicate` (as identification would
    /// find it), and its values of `reading`. Positional, so the caller hashes no identity and the store
    /// decodes none.
    func firstObjects(entity: String, attributes: [String], identities: [[AttributeValue]],
                      predicate: CheckedPredicate?, reading: [String]) throws(CartographError) -> FirstObjects
    /// The change feed's head (R-D4) when the lookups were made, which the write transaction re-checks
    /// what they found against; nil when they looked inside that transaction, or made none.
    var snapshotHead: Int64? { get }
}

/// The read snapshot a payload is read in before its write transaction: R-P7's read-ahead, and the
/// identification of the payload's other objects (`MappingRun.identifyAhead`), which the write re-checks.
public protocol SnapshotLookup: MappingLookup {
    /// As `MappingStore.existingObjects` reading every attribute, in a read snapshot, and the change feed's
    /// head of that snapshot; nil when it looked nowhere (a migration committed since the payload's model).
    func existingObjectsAhead(entity: String, attributes: [String], identities: [[AttributeValue]],
                              predicate: CheckedPredicate?) throws(CartographError) -> (found: [[AttributeValue]: [ExistingObject]], head: Int64)?
}

/// What the engine needs from a store during one payload.
public protocol MappingStore: AnyObject, MappingLookup {
    var model: Model { get }
    /// Batched lookup for identification (R-I1…R-I3) and foreign-key connections (R-C2): objects of
    /// `entity` or a sub-entity whose `attributes` equal one of `identities` and that satisfy
    /// `predicate`, keyed by identity, oldest first. With `reading`, only those attributes (and `attributes`)
    /// have values: nil reads them all.
    func existingObjects(entity: String, attributes: [String], identities: [[AttributeValue]],
                         predicate: CheckedPredicate?, reading: [String]?) throws(CartographError) -> [[AttributeValue]: [ExistingObject]]
    /// The change feed's head (R-D4) now: the sequence number of the latest committed change.
    func changeFeedHead() throws(CartographError) -> Int64
    /// Which of `ids` changed (or were deleted) after the feed position `seq`, the feed being at `head`
    /// now (`changeFeedHead()`): what a read snapshot taken at `seq` saw of them may no longer hold.
    func changedObjects(among ids: [Int64], since seq: Int64, head: Int64) throws(CartographError) -> Set<Int64>
    /// What the commits after the feed position `seq` wrote to identification attributes, the feed being at
    /// `head` now; nil when the store does not know (then every identity a snapshot at `seq` found absent
    /// is looked up again).
    func identitiesWritten(since seq: Int64, head: Int64) -> WrittenIdentities?
    /// Objects of the predicate's entity (and sub-entities) matching it, oldest first; only among `ids` when given.
    func objects(matching predicate: CheckedPredicate, among ids: [Int64]?) throws(CartographError) -> [(id: Int64, entity: String)]
    /// Inserts an object; `toOne` sets to-one relationships with it (relationship -> destination `_id`).
    func insertObject(entity: String, values: [String: AttributeValue], stub: Bool, toOne: [String: Int64]) throws(CartographError) -> Int64
    /// Writes the values that differ from `stored` (the object as read in this transaction, all its
    /// values; nil: the store reads it); true when anything changed.
    func updateObject(id: Int64, entity: String, values: [String: AttributeValue?], clearStub: Bool,
                      stored: ExistingObject?) throws(CartographError) -> Bool
    func destinationIDs(of id: Int64, entity: String, relationship: String) throws(CartographError) -> [Int64]
    /// Makes a relationship exactly `destinations`; `current` is what the caller just read (saves a read).
    /// True when that changed what is stored; false when it was stored already (the same destinations in
    /// another order, where the store keeps no order for this side), and nothing was written.
    @discardableResult
    func setDestinations(of id: Int64, entity: String, relationship: String, from current: [Int64], to destinations: [Int64]) throws(CartographError) -> Bool
    /// Whether any object of `entity` (or a sub-entity) still has `id` among its `relationship` destinations.
    func isReferenced(_ id: Int64, through relationship: String, of entity: String) throws(CartographError) -> Bool
    /// Deletes with delete rules; returns how many objects were deleted.
    func deleteObject(id: Int64, entity: String) throws(CartographError) -> Int
    /// The API key of a stored object (docs/api.md#object-keys); nil when it does not exist (any more).
    func key(ofObject id: Int64, entity: String) throws(CartographError) -> JSONValue?

    // Late binding (R-C5): foreign-key connections waiting for their destination.
    /// Replaces what `source`'s `relationship` waits for (an empty list: it waits for nothing).
    func replacePendingConnections(source: Int64, sourceEntity: String, relationship: String,
                                   with pending: [PendingConnection]) throws(CartographError)
    /// Completes waiting to-one connections: each source's `relationship` becomes `destination`, and
    /// the sources wait no more.
    func completeWaiting(sources: [Int64], sourceEntity: String, relationship: String, with destination: Int64) throws(CartographError)
    /// Whether any connection waits at all (most stores: none, and arriving objects need no lookup).
    func hasPendingConnections() throws(CartographError) -> Bool
    /// The connections waiting for an object of `entity` with these attribute values, oldest source first.
    func pendingConnections(awaiting entity: String, values: [String: AttributeValue]) throws(CartographError) -> [PendingConnection]
}

/// A foreign-key connection that found no destination, stored until one arrives (R-C5).
public struct PendingConnection: Sendable, Hashable {
    /// What a destination object must be to complete a pending connection.
    public struct Target: Sendable, Hashable {
        /// The relationship's destination entity.
        public var entity: String
        /// Destination attributes, in the connection's pair order.
        public var attributes: [String]
        public var includesSubentities: Bool
        /// The connection's `destinationPredicate`, as written.
        public var predicate: String?

        public init(entity: String, attributes: [String], includesSubentities: Bool, predicate: String?) {
            self.entity = entity
            self.attributes = attributes
            self.includesSubentities = includesSubentities
            self.predicate = predicate
        }
    }

    public var sourceID: Int64
    public var sourceEntity: String
    public var relationship: String
    public var target: Target
    /// The destination attribute values that would match, coerced to the destination's types.
    public var values: [AttributeValue]

    public init(sourceID: Int64, sourceEntity: String, relationship: String, target: Target, values: [AttributeValue]) {
        self.sourceID = sourceID
        self.sourceEntity = sourceEntity
        self.relationship = relationship
        self.target = target
        self.values = values
    }
}
