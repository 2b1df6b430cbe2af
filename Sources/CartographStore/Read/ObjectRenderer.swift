// What the store hands the code that writes objects for a client (CartographHTTP's `shape=model`,
// docs/architecture.md): the store reads, its renderer writes. A page's rows reach the renderer as
// they are stepped, through a borrowed view of each row's columns, so nothing is decoded into a value
// on the way: a dictionary of values per row, then a document of them, took 40% more server CPU per
// list than writing from the rows (docs/storage.md "Reading a page"). Objects with embedded
// destinations (`include`) and the change feed's objects go as values (`ObjectValues`).
internal import CSQLite
public import CartographCore

/// Writes objects read from a store as documents (R-Q4). A page's document is written in place: its head
/// from the row, then one member per relationship, then closed.
public protocol ObjectRenderer {
    /// What the renderer makes of one table's layout once (its members' names written out): the store
    /// keeps it with the layout, which lives as long as its model on one read connection.
    associatedtype PreparedTable: AnyObject
    func prepare(_ table: TableRows) -> PreparedTable
    /// Opens the document of `row`'s object and writes what the row holds: its `_id`, entity, stub flag
    /// and attributes (those `fields` selects, `AttributeColumn.isSelected`; nil: all).
    func writeHead(of row: borrowing StoredRow, table: PreparedTable, fields: Set<String>?, into document: inout [UInt8])
    /// Writes a to-one relationship of the open document: its destination's key, nil when it has none.
    func writeToOne(_ name: String, key: JSONValue?, into document: inout [UInt8])
    /// Writes a to-many relationship of the open document: its destinations' keys, in relationship order.
    func writeToMany(_ name: String, keys: [JSONValue], into document: inout [UInt8])
    /// Closes a document `writeHead` opened, after its relationships.
    func close(_ document: inout [UInt8])
    /// The document of an object read as values.
    func render(_ object: ObjectValues) -> RenderedJSON
}

/// The row of one object, lent to `ObjectRenderer.writeHead` for the call: its `_id`, entity and stub
/// flag, and its attributes' columns as SQLite stored them (`TableRows.Entity.attributes` says which
/// column is which). Not copyable, so it cannot outlive the call (the statement steps on).
public struct StoredRow: ~Copyable {
    let statement: SQLiteStatement
    public let id: Int64
    /// The object's entity: a table's entity, or a name the model does not know (then `entityIndex` is nil).
    public let entity: String
    /// Where the entity is in `TableRows.entities`.
    public let entityIndex: Int?
    public let isStub: Bool

    /// How `column` is stored in this row.
    public func storage(of column: Int32) -> StorageClass {
        switch statement.columnType(column) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    /// `column` as an integer (as SQLite converts it).
    public func integer(_ column: Int32) -> Int64 { statement.columnInteger(column) }

    /// The bytes of text `column`, valid only inside `body`: no String is made.
    public func withText<R>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { statement.withColumnText(column, body) }

    /// Text `column` as a String (bytes that are not UTF-8 repaired, as a decoded read repairs them); nil when not text.
    public func text(_ column: Int32) -> String? { statement.column(column).textValue }

    /// `column` decoded as a read decodes an attribute of `type`; nil for NULL or a value `type` does not read.
    public func value(_ column: Int32, as type: AttributeType) -> AttributeValue? {
        ValueStorage.attributeValue(statement.column(column), type: type)
    }
}

/// SQLite's storage classes.
public enum StorageClass: Sendable {
    case null, integer, real, text, blob
}
