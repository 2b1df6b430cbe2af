// What the SQL compiler needs to know about the store's tables (issue 4 implements it): where an
// entity's rows live, which column holds an attribute, and how a relationship joins. Every name
// given here is quoted by the compiler; nothing from a predicate ever becomes an identifier.

/// The store's storage layout, as the SQL compiler reads it.
///
/// Storage the compiled SQL relies on: integers INTEGER, double/float REAL, boolean INTEGER 0/1,
/// string/uuid/uri TEXT compared with the BINARY collation (no `COLLATE NOCASE`), date INTEGER
/// milliseconds since 1970 UTC, decimal TEXT (declared TEXT, so SQLite keeps the text and
/// `cartograph_compare` reads every digit), binary BLOB, transformable TEXT. The connection must
/// have the predicate functions registered (`SQLiteConnection.registerPredicateFunctions()`).
public protocol PredicateSQLSchema {
    /// The table holding `entity`'s objects (its hierarchy's table, R-M3); nil when unknown.
    func table(forEntity entity: String) -> PredicateSQLTable?
    /// The column holding `attribute` of `entity` (declared on it or a parent); nil when unknown.
    func column(forAttribute attribute: String, ofEntity entity: String) -> String?
    /// How `relationship` of `entity` (declared on it or a parent) is stored; nil when unknown.
    func storage(forRelationship relationship: String, ofEntity entity: String) -> PredicateSQLRelationship?
}

/// The table of an entity hierarchy.
public struct PredicateSQLTable: Sendable, Equatable {
    /// The table's name.
    public var name: String
    /// The integer primary key (`_id`) that foreign keys and join tables reference.
    public var idColumn: String
    /// The column naming each row's concrete entity (`_entity`); nil when every row of the table
    /// belongs to the queried entity.
    public var entityColumn: String?
    /// The concrete entities a query on this entity includes: itself and its sub-entities.
    public var entityNames: [String]

    public init(name: String, idColumn: String, entityColumn: String?, entityNames: [String]) {
        self.name = name
        self.idColumn = idColumn
        self.entityColumn = entityColumn
        self.entityNames = entityNames
    }
}

/// How a relationship's destinations are found.
public enum PredicateSQLRelationship: Sendable, Equatable {
    /// A column of the source's table holding the destination's id (a to-one).
    case foreignKey(column: String)
    /// A column of the destination's table holding the source's id (a to-many whose inverse is
    /// a to-one, or the non-owning side of a one-to-one).
    case destinationForeignKey(column: String)
    /// A table of (source id, destination id) pairs (many-to-many, or no inverse).
    case joinTable(name: String, sourceColumn: String, destinationColumn: String)
}
