// Rendering rows of one hierarchy's table straight into the API's `shape=model` JSON (R-Q4): the bytes
// `ObjectReader.json(of:)` writes for the same object, without an `ExistingObject` and a `JSONValue`
// per value in between. Building those, then writing them out, was a third of the CPU of a page of 50
// articles (perf, 100k articles, docs/storage.md).
import CSQLite
import CartographCore
import CartographMapping

/// Writes the head of each row's document: `_id`, `_entity`, `_stub` and the attributes. Relationships
/// follow (`ObjectReader.rendered`), since their keys come from other tables. A class, as `RowReader` is.
final class RowRenderer {
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
    /// By entity of the table.
    private let entities: [String: EntityColumns]
    /// The columns of the last row's entity.
    private var lastEntity = LastEntity<EntityColumns>()

    /// Where one entity's members are in the row. A class: a row takes it with one retain.
    private final class EntityColumns {
        let name: String
        /// `,"_entity":"<name>"`
        let entityMember: [UInt8]
        /// Its attributes in property order, as `json(of:)` writes them.
        let attributes: [Member]
        /// The attributes' names, in the same order.
        let names: [String]
        /// Each attribute's `,"name":`, one after the other (a `Member` holds its range).
        let prefixes: [UInt8]
        /// Its to-one relationships stored in the row, with their columns.
        let toOne: [(name: String, column: Int32)]
        /// Its identification attributes, always written when `fields` limits the others.
        let keyAttributes: [String]

        init(entity: String, attributes: [(name: String, column: Int32, type: AttributeType)], toOne: [(name: String, column: Int32)],
             keyAttributes: [String]) {
            self.name = entity
            var entityMember = Array(#","_entity":"#.utf8)
            JSONWriter.writeString(entity, into: &entityMember)
            self.entityMember = entityMember
            var prefixes: [UInt8] = []
            self.attributes = attributes.map { attribute in
                let start = prefixes.count
                prefixes.append(UInt8(ascii: ","))
                JSONWriter.writeString(attribute.name, into: &prefixes)
                prefixes.append(UInt8(ascii: ":"))
                return Member(prefix: start..<prefixes.count, column: attribute.column, type: attribute.type)
            }
            self.names = attributes.map(\.name)
            self.prefixes = prefixes
            self.toOne = toOne
            self.keyAttributes = keyAttributes
        }
    }

    /// One attribute of an entity: where its value is and how it is written. Nothing in it is counted
    /// by reference, so walking a row's members retains nothing (with a name and a byte array in each,
    /// the retains and releases were a third of the time spent writing a row's head).
    private struct Member {
        /// Where `,"name":` is in `EntityColumns.prefixes`.
        let prefix: Range<Int>
        let column: Int32
        let type: AttributeType
    }

    init(layout: StoreLayout, table: String) {
        let reader = layout.rowReader(for: table)
        self.table = table
        self.selectList = reader.selectList
        self.selectByIDs = reader.selectByIDs
        self.columnCount = Int32(reader.columnNames.count)
        self.reader = reader
        var entities: [String: EntityColumns] = [:]
        for entity in layout.model.entityAndSubentities(of: table) {
            let properties = layout.properties(of: entity)
            let attributes = properties.attributes.compactMap { (attribute) -> (name: String, column: Int32, type: AttributeType)? in
                guard let column = layout.column(ofAttribute: attribute.name, entity: entity),
                      let index = reader.columnNames.firstIndex(of: column) else { return nil }
                return (attribute.name, Int32(index), attribute.type)
            }
            let toOne = properties.relationships.compactMap { (relationship) -> (name: String, column: Int32)? in
                guard !relationship.toMany, case .foreignKey(_, let column)? = layout.storage(of: relationship.name, entity: entity),
                      let index = reader.columnNames.firstIndex(of: column) else { return nil }
                return (relationship.name, Int32(index))
            }
            entities[entity] = EntityColumns(entity: entity, attributes: attributes, toOne: toOne, keyAttributes: layout.identificationAttributes(of: entity))
        }
        self.entities = entities
    }

    /// `selectList` with every column qualified by `alias`, built once per alias.
    func selectList(alias: String) -> String {
        if let cached = qualifiedSelectLists[alias] { return cached }
        let list = reader.selectList(alias: alias)
        qualifiedSelectLists[alias] = list
        return list
    }

    /// Writes the current row of `statement` (selected with `selectList`) as an object left open after
    /// its attributes (those in `fields` and the key's, when `fields` is given), and returns what its
    /// relationships need: its id, entity, stub flag and to-one destinations (no attribute values).
    func writeHead(of statement: SQLiteStatement, fields: Set<String>?, into out: inout [UInt8]) -> ExistingObject {
        let id = statement.columnInteger(0)
        let columns = entityColumns(of: statement)
        let entity = columns?.name ?? statement.column(1).textValue ?? table
        let isStub = statement.columnInteger(2) == 1
        out.append(contentsOf: #"{"_id":"#.utf8)
        JSONWriter.writeInteger(id, into: &out)
        if let columns {
            out.append(contentsOf: columns.entityMember)
        } else {
            out.append(contentsOf: #","_entity":"#.utf8)
            JSONWriter.writeString(entity, into: &out)
        }
        if isStub { out.append(contentsOf: #","_stub":true"#.utf8) }
        if let columns {
            columns.prefixes.withUnsafeBufferPointer { prefixes in
                for (index, member) in columns.attributes.enumerated() {
                    if let fields, !fields.contains(columns.names[index]), !columns.keyAttributes.contains(columns.names[index]) { continue }
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: prefixes[member.prefix]))
                    Self.writeValue(of: statement, column: member.column, type: member.type, into: &out)
                }
            }
        }
        var object = ExistingObject(id: id, entity: entity, isStub: isStub, values: [:])
        for (name, column) in columns?.toOne ?? [] where statement.columnType(column) == SQLITE_INTEGER {
            object.toOne[name] = statement.columnInteger(column)
        }
        return object
    }

    /// The columns of the current row's entity (`_entity`, column 1; the table's name when NULL); nil for
    /// an entity the model does not have.
    private func entityColumns(of statement: SQLiteStatement) -> EntityColumns? {
        guard statement.columnType(1) == SQLITE_TEXT else { return entities[table] }
        return lastEntity.value(in: statement, column: 1) { $0.flatMap { entities[$0] } }
    }

    /// True when `text` is a decimal in the form `Decimal.canonicalText` writes and reads back unchanged:
    /// `-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?`, not `-0`, with at most 38 significant digits (what a Decimal
    /// holds exactly).
    static func isCanonicalDecimal(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        var index = 0
        let negative = index < text.count && text[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < text.count, isDigit(text[index]) else { return false }
        let integerStart = index
        while index < text.count, isDigit(text[index]) { index += 1 }
        let integerDigits = index - integerStart
        let integerIsZero = integerDigits == 1 && text[integerStart] == UInt8(ascii: "0")
        guard integerIsZero || text[integerStart] != UInt8(ascii: "0") else { return false }
        var significant = integerIsZero ? 0 : integerDigits
        if index < text.count {
            guard text[index] == UInt8(ascii: "."), index + 1 < text.count, text[text.count - 1] != UInt8(ascii: "0") else { return false }
            index += 1
            var leadingZeros = integerIsZero
            while index < text.count {
                guard isDigit(text[index]) else { return false }
                if leadingZeros, text[index] == UInt8(ascii: "0") { index += 1; continue }
                leadingZeros = false
                significant += 1
                index += 1
            }
        } else if negative, integerIsZero {
            return false
        }
        return significant <= 38
    }

    /// Writes a stored value as `AttributeValue.jsonValue` would: integers, booleans, dates and UTF-8
    /// text directly; anything else (decimals, doubles, binary, transformable, other text, a value
    /// stored in a class its type does not read) through `ValueStorage`, as a read would decode it.
    private static func writeValue(of statement: SQLiteStatement, column: Int32, type: AttributeType, into out: inout [UInt8]) {
        let storage = statement.columnType(column)
        switch (type, storage) {
        case (_, SQLITE_NULL):
            out.append(contentsOf: "null".utf8)
        case (.integer16, SQLITE_INTEGER), (.integer32, SQLITE_INTEGER), (.integer64, SQLITE_INTEGER):
            JSONWriter.writeInteger(statement.columnInteger(column), into: &out)
        case (.boolean, SQLITE_INTEGER):
            out.append(contentsOf: (statement.columnInteger(column) != 0 ? "true" : "false").utf8)
        case (.date, SQLITE_INTEGER):
            // A rendered date has no byte a JSON string escapes.
            out.append(UInt8(ascii: "\""))
            ISO8601Instant.write(milliseconds: statement.columnInteger(column), into: &out)
            out.append(UInt8(ascii: "\""))
        case (.decimal, SQLITE_TEXT):
            // Decimals are stored in their canonical text, which is what they render as: parsing it into a
            // Decimal and printing it again (1 µs each, 50 per page) would give the same digits. Other
            // text is decoded as a read decodes it.
            let written = statement.withColumnText(column) { (text) -> Bool in
                guard Self.isCanonicalDecimal(text) else { return false }
                out.append(UInt8(ascii: "\""))
                out.append(contentsOf: text)
                out.append(UInt8(ascii: "\""))
                return true
            }
            if !written { writeDecoded(of: statement, column: column, type: type, into: &out) }
        case (.string, SQLITE_TEXT), (.uuid, SQLITE_TEXT), (.uri, SQLITE_TEXT):
            // Well-formed UTF-8 is copied as it is; anything else goes through String, which repairs it,
            // so the bytes are those a decoded read writes.
            if !statement.withColumnText(column, { JSONWriter.writeString(validatingUTF8: $0, into: &out) }) {
                JSONWriter.writeString(statement.column(column).textValue ?? "", into: &out)
            }
        default:
            writeDecoded(of: statement, column: column, type: type, into: &out)
        }
    }

    /// Writes a stored value through `ValueStorage`, as a decoded read renders it.
    private static func writeDecoded(of statement: SQLiteStatement, column: Int32, type: AttributeType, into out: inout [UInt8]) {
        JSONWriter.write(ValueStorage.attributeValue(statement.column(column), type: type)?.jsonValue ?? .null, into: &out)
    }
}
