// An object read as values for its renderer (`ObjectRenderer.render`): what `include` embeds and what
// the change feed lists, where the rows are not written as they are stepped.
public import CartographCore

/// An object's attributes and relationships as read, in property order.
public struct ObjectValues: Sendable {
    public let id: Int64
    /// The concrete entity.
    public let entity: String
    public let isStub: Bool
    /// Its attributes (those the read selected), nil where the object has no value.
    public let attributes: [Attribute]
    /// Its relationships (those the read selected).
    public let relationships: [Relationship]

    public struct Attribute: Sendable {
        public let name: String
        public let value: AttributeValue?
    }

    public struct Relationship: Sendable {
        public let name: String
        public let toMany: Bool
        /// Its destinations in relationship order (a to-one has at most one).
        public let destinations: Destinations
    }

    public enum Destinations: Sendable {
        /// Each destination's key (docs/api.md#object-keys).
        case keys([JSONValue])
        /// The destinations themselves (`include`).
        case objects([ObjectValues])
    }
}
