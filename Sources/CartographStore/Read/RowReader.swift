// Decoding one object from a row of its table.
import CartographCore
import CartographMapping

/// Reads rows of one hierarchy's table into `ExistingObject`s. A class: readers are cached by the
/// layout and handed out for every row read, and a struct of this many arrays and dictionaries cost a
/// retain and a release of each on every copy.
final class RowReader {
    let table: String
    /// `SELECT <columns> FROM table`, with the columns in `fields` order after `_id, _entity, _stub`.
    let selectList: String
    /// `SELECT <select list> FROM table WHERE _id = ?`, built once.
    let selectByID: String
    /// `SELECT <select list> FROM table WHERE _id IN (…)`.
    let selectByIDs: IDListQuery
    let columnNames: [String]
    /// How each field after `_id, _entity, _stub` decodes (a name and a type: copying the model's
    /// `Attribute` for every value read retained each of its parts).
    private let fields: [Kind]
    /// The indexes of `fields` each entity of the table has: one lookup per row, not one per field.
    private let fieldsByEntity: [String: [Int]]
    /// The columns and types of each entity's identification attributes, in their order, for the
    /// entities whose every identification attribute this reader reads (a page reads a key per
    /// destination: nothing else about the row is looked at).
    private let keyColumns: [String: [(column: Int32, type: AttributeType)]]

    enum Kind {
        case attribute(name: String, type: AttributeType)
        case toOne(String)
    }

    /// - Parameter attributes: the attributes to read; nil reads every attribute and to-one foreign key.
    init(layout: StoreLayout, table: String, attributes: Set<String>? = nil) {
        self.table = table
        var columns = [StoreLayout.idColumn, StoreLayout.entityColumn, StoreLayout.stubColumn]
        var fields: [(kind: Kind, entities: Set<String>)] = []
        for entry in layout.attributeColumns(ofTable: table) where attributes?.contains(entry.attribute.name) ?? true {
            columns.append(entry.column)
            fields.append((.attribute(name: entry.attribute.name, type: entry.attribute.type), Set(layout.model.entityAndSubentities(of: entry.entity))))
        }
        for name in layout.model.entityAndSubentities(of: table) where attributes == nil {
            guard let entity = layout.model.entity(named: name) else { continue }
            for relationship in entity.relationships where !relationship.toMany {
                guard case .foreignKey(_, let column)? = layout.storage(of: relationship.name, entity: name) else { continue }
                columns.append(column)
                fields.append((.toOne(relationship.name), Set(layout.model.entityAndSubentities(of: name))))
            }
        }
        self.fields = fields.map(\.kind)
        self.columnNames = columns
        self.selectList = columns.map(quoted).joined(separator: ", ")
        self.selectByID = "SELECT \(selectList) FROM \(quoted(table)) WHERE \(quoted(StoreLayout.idColumn)) = ?"
        self.selectByIDs = IDListQuery(head: "SELECT \(selectList) FROM \(quoted(table)) WHERE \(quoted(StoreLayout.idColumn)) IN ")
        self.fieldsByEntity = Dictionary(uniqueKeysWithValues: layout.model.entityAndSubentities(of: table).map { entity in
            (entity, fields.indices.filter { fields[$0].entities.contains(entity) })
        })
        var keyColumns: [String: [(column: Int32, type: AttributeType)]] = [:]
        for entity in layout.model.entityAndSubentities(of: table) {
            let columns = layout.identificationAttributes(of: entity).compactMap { (name) -> (column: Int32, type: AttributeType)? in
                for (index, field) in fields.enumerated() where field.entities.contains(entity) {
                    if case .attribute(name, let type) = field.kind { return (3 + Int32(index), type) }
                }
                return nil
            }
            if columns.count == layout.identificationAttributes(of: entity).count { keyColumns[entity] = columns }
        }
        self.keyColumns = keyColumns
    }

    /// The select list with every column qualified by a table alias (for queries with joins).
    func selectList(alias: String) -> String { columnNames.map { "\(alias).\(quoted($0))" }.joined(separator: ", ") }

    /// The `_id` and API key of the current row's object (see `ObjectReader.key(id:values:)`), decoding
    /// only its identification attributes; nil when this reader does not read them all.
    func key(from statement: SQLiteStatement) -> (id: Int64, key: JSONValue)? {
        let id = statement.columnInteger(0)
        guard let columns = keyColumns[statement.column(1).textValue ?? table] else { return nil }
        let values = columns.map { ValueStorage.attributeValue(statement.column($0.column), type: $0.type) }
        return (id, ObjectReader.key(id: id, values: values))
    }

    /// The last row's entity and the indexes of its fields, for the next row of the same read.
    typealias EntityMemo = LastEntity<(entity: String, indexes: [Int])>

    /// Decodes the current row of `statement` (selected with `selectList`, starting at `offset`).
    func object(from statement: SQLiteStatement, offset: Int32 = 0, memo: inout EntityMemo) -> ExistingObject {
        let id = statement.column(offset).integerValue ?? 0
        let (entity, indexes) = memo.value(in: statement, column: offset + 1) { (name) in
            let entity = name ?? table
            return (entity, fieldsByEntity[entity] ?? [])
        } ?? (table, [])
        var object = ExistingObject(id: id, entity: entity, isStub: statement.column(offset + 2).integerValue == 1,
                                    values: Dictionary(minimumCapacity: indexes.count))
        for index in indexes {
            let value = statement.column(offset + 3 + Int32(index))
            switch fields[index] {
            case .attribute(let name, let type):
                if let decoded = ValueStorage.attributeValue(value, type: type) { object.values[name] = decoded }
            case .toOne(let name):
                if let destination = value.integerValue { object.toOne[name] = destination }
            }
        }
        return object
    }
}

/// The entity a read's last row named (its `_entity` column) and what a reader made of it: the rows of
/// one read are mostly of one entity, so a row naming the same one needs no String and no lookup (a
/// third of the time spent writing a row's head). One per read or renderer, used on one thread.
struct LastEntity<Value> {
    private var last: (name: [UInt8], value: Value)?

    init() {}

    /// What `make` gives for the entity named in `column` of `statement`'s current row (`make` gets nil
    /// for NULL): the last row's value when the row names the same entity. A nil from `make` is not kept.
    mutating func value(in statement: SQLiteStatement, column: Int32, make: (String?) -> Value?) -> Value? {
        if let last, statement.withColumnText(column, { $0.elementsEqual(last.name) }) { return last.value }
        let name = statement.column(column).textValue
        guard let value = make(name) else { return nil }
        if let name { last = (Array(name.utf8), value) }
        return value
    }
}
