// The rows of one hierarchy's table as a page reads them for its renderer (`ObjectRenderer`): which
// column holds each attribute of each entity, read once per layout, so a row is handed over without an
// `ExistingObject` of its values and a lookup per value.
import CSQLite
public import CartographCore
import CartographMapping

/// The rows of one table for a renderer: its entities, each with its attributes' columns. A class, as
/// `RowReader` is: the layout builds it once per table.
public final class TableRows {
    /// The table's entities (the root of a hierarchy and its sub-entities).
    public let entities: [Entity]
    /// `SELECT <columns> FROM table`: the full `RowReader`'s columns.
    let selectList: String
    /// The full `RowReader`'s `SELECT <columns> FROM table WHERE _id IN (…)`.
    let selectByIDs: IDListQuery
    /// The number of columns `selectList` names: a query may select more after them.
    let columnCount: Int32
    private let reader: RowReader
    /// `selectList` qualified by a table alias, by alias (a page query names its table `"t0"`).
    private var qualifiedSelectLists: [String: String] = [:]
    private let table: String
    /// Each entity's place in `entities`.
    private let entityIndexes: [String: Int]
    /// The place of the last row's entity.
    private var lastEntity = LastEntity<Int>()
    /// The last renderer's preparation of this table (a server has one renderer).
    private var prepared: (renderer: ObjectIdentifier, table: AnyObject)?

    /// One entity's columns. A class: a row takes it with one retain.
    public final class Entity {
        public let name: String
        /// Its attributes in property order.
        public let attributes: [AttributeColumn]
        /// Its to-one relationships stored in the row, with their columns.
        let toOne: [(name: String, column: Int32)]

        init(name: String, attributes: [AttributeColumn], toOne: [(name: String, column: Int32)]) {
            self.name = name
            self.attributes = attributes
            self.toOne = toOne
        }
    }

    init(layout: StoreLayout, table: String) {
        let reader = layout.rowReader(for: table)
        self.table = table
        self.selectList = reader.selectList
        self.selectByIDs = reader.selectByIDs
        self.columnCount = Int32(reader.columnNames.count)
        self.reader = reader
        self.entities = layout.model.entityAndSubentities(of: table).map { entity in
            let properties = layout.properties(of: entity)
            let keyAttributes = layout.identificationAttributes(of: entity)
            let attributes = properties.attributes.compactMap { (attribute) -> AttributeColumn? in
                guard let column = layout.column(ofAttribute: attribute.name, entity: entity),
                      let index = reader.columnNames.firstIndex(of: column) else { return nil }
                return AttributeColumn(name: attribute.name, type: attribute.type, column: Int32(index),
                                       isKey: keyAttributes.contains(attribute.name))
            }
            let toOne = properties.relationships.compactMap { (relationship) -> (name: String, column: Int32)? in
                guard !relationship.toMany, case .foreignKey(_, let column)? = layout.storage(of: relationship.name, entity: entity),
                      let index = reader.columnNames.firstIndex(of: column) else { return nil }
                return (relationship.name, Int32(index))
            }
            return Entity(name: entity, attributes: attributes, toOne: toOne)
        }
        self.entityIndexes = Dictionary(uniqueKeysWithValues: entities.enumerated().map { ($0.element.name, $0.offset) })
    }

    /// `selectList` with every column qualified by `alias`, built once per alias.
    func selectList(alias: String) -> String {
        if let cached = qualifiedSelectLists[alias] { return cached }
        let list = reader.selectList(alias: alias)
        qualifiedSelectLists[alias] = list
        return list
    }

    /// What `renderer` makes of this table, made once.
    func prepared<Renderer: ObjectRenderer>(by renderer: Renderer) -> Renderer.PreparedTable {
        let kind = ObjectIdentifier(Renderer.self)
        if let prepared, prepared.renderer == kind { return unsafeDowncast(prepared.table, to: Renderer.PreparedTable.self) }
        let table = renderer.prepare(self)
        prepared = (kind, table)
        return table
    }

    /// The head `renderer` writes of the current row of `statement` (selected with `selectList`; `prepared`
    /// is what `renderer` made of this table), with what its relationships need: its id, entity, stub flag
    /// and to-one destinations (no attribute values). The renderer and its table come as they are, not in
    /// a generic struct: reading such a struct's fields asked the runtime for its layout on every row.
    func head<Renderer: ObjectRenderer>(of statement: SQLiteStatement, renderer: Renderer, table prepared: Renderer.PreparedTable,
                                        fields: Set<String>?) -> ObjectReader.RenderedHead {
        var document: [UInt8] = []
        document.reserveCapacity(1024)
        let id = statement.columnInteger(0)
        let index = entityIndex(of: statement)
        let entity = index.map { entities[$0].name } ?? statement.column(1).textValue ?? table
        let isStub = statement.columnInteger(2) == 1
        renderer.writeHead(of: StoredRow(statement: statement, id: id, entity: entity, entityIndex: index, isStub: isStub),
                           table: prepared, fields: fields, into: &document)
        var object = ExistingObject(id: id, entity: entity, isStub: isStub, values: [:])
        if let index {
            for (name, column) in entities[index].toOne where statement.columnType(column) == SQLITE_INTEGER {
                object.toOne[name] = statement.columnInteger(column)
            }
        }
        return ObjectReader.RenderedHead(object: object, bytes: document)
    }

    /// The place of the current row's entity (`_entity`, column 1; the table's name when NULL); nil for
    /// an entity the model does not have.
    private func entityIndex(of statement: SQLiteStatement) -> Int? {
        guard statement.columnType(1) == SQLITE_TEXT else { return entityIndexes[table] }
        return lastEntity.value(in: statement, column: 1) { $0.flatMap { entityIndexes[$0] } }
    }
}

/// Where one attribute of an entity is in its table's rows, and how it is stored.
public struct AttributeColumn: Sendable {
    public let name: String
    public let type: AttributeType
    public let column: Int32
    /// An identification attribute: part of the object's key.
    public let isKey: Bool

    /// Whether a document limited to `fields` (nil: every attribute) holds this attribute: the
    /// identification attributes, which make the key, always come (R-Q4).
    public func isSelected(by fields: Set<String>?) -> Bool { Self.isSelected(name, isKey: isKey, by: fields) }

    static func isSelected(_ name: String, isKey: Bool, by fields: Set<String>?) -> Bool { isKey || fields?.contains(name) ?? true }
}
