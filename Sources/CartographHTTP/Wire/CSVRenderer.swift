// Objects as CSV rows (R-Q7, docs/queries.md#formats), RFC 4180: one row per object under a header row of
// fixed columns — `_id`, `_entity`, then the attributes and relationships in model order, or as `fields`
// names them. A cell holds what `shape=model` writes for the value (`ModelShapeRenderer`'s bytes, so both
// formats agree on dates, decimals, binary), a JSON string unquoted: text as it is, numbers and booleans
// as JSON writes them, a to-one as its destination's key, a to-many as the JSON array of its keys, an
// embedded object (`include`) as its JSON document. A nil is an empty cell; an empty string is `""`.
//
// The store calls a renderer in its own order (head, then each relationship), and a page may mix entities
// with different properties (R-M3): each value is written as a cell tagged with its column, and `close`
// lays the cells out in the header's order.
import CartographCore
import CartographStore

/// Writes objects as CSV rows under `headerRow`.
struct CSVRenderer: ObjectRenderer, Sendable {
    /// The header's column names.
    let columns: [String]
    /// Each column's place in `columns`.
    private let positions: [String: Int]

    init(columns: [String]) {
        self.columns = columns
        positions = Dictionary(columns.enumerated().map { ($0.element, $0.offset) }) { first, _ in first }
    }

    /// The columns of a list of `entity`'s objects: `_id`, `_entity`, then, without `fields`, the attributes of
    /// the entity and its sub-entities in model order and their relationships; with `fields`, the key's
    /// attributes (always rendered, R-Q4), the fields in their order and the relationships `include` embeds.
    static func columns(entity: String, model: Model, fields: [String]?, include: [[String]]) -> [String] {
        let entities = model.entityAndSubentities(of: entity)
        var names = ["_id", "_entity"]
        if let fields {
            names += entities.flatMap { model.identificationAttributes(of: $0) } + fields + include.compactMap(\.first)
        } else {
            names += entities.flatMap { model.allAttributes(of: $0).map(\.name) } + entities.flatMap { model.allRelationships(of: $0).map(\.name) }
        }
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }

    /// The header row.
    var headerRow: [UInt8] {
        var row: [UInt8] = []
        for (index, name) in columns.enumerated() {
            if index > 0 { row.append(UInt8(ascii: ",")) }
            Self.appendQuoted(Array(name.utf8)[...], into: &row)
        }
        row.append(contentsOf: [0x0D, 0x0A])
        return row
    }

    /// A table's entities' attribute columns (what `writeHead` needs does not depend on the header, which the
    /// store does not see: it keeps one preparation per renderer type).
    final class PreparedTable {
        fileprivate let entities: [[AttributeColumn]]

        fileprivate init(entities: [[AttributeColumn]]) { self.entities = entities }
    }

    func prepare(_ table: TableRows) -> PreparedTable { PreparedTable(entities: table.entities.map(\.attributes)) }

    func writeHead(of row: borrowing StoredRow, table: PreparedTable, fields: Set<String>?, into out: inout [UInt8]) {
        writeCell(0, into: &out) { JSONWriter.writeInteger(row.id, into: &$0) }
        writeCell(1, into: &out) { JSONWriter.writeString(row.entity, into: &$0) }
        guard let index = row.entityIndex else { return }
        for attribute in table.entities[index] where attribute.isSelected(by: fields) {
            guard let position = positions[attribute.name] else { continue }
            let tag = Self.openCell(&out)
            // Text goes in as it is (most of a list's bytes are text): escaping it for JSON only to undo the
            // escapes made CSV half as fast as NDJSON. Anything else is written as `shape=model` writes it.
            if Self.textTypes.contains(attribute.type), row.storage(of: attribute.column) == .text {
                out += (row.text(attribute.column) ?? "").utf8
                Self.closeCell(opened: tag, position: position, &out, json: false)
            } else {
                ModelShapeRenderer.writeValue(of: row, column: attribute.column, type: attribute.type, into: &out)
                Self.closeCell(opened: tag, position: position, &out)
            }
        }
    }

    func writeToOne(_ name: String, key: JSONValue?, into document: inout [UInt8]) {
        guard let position = positions[name], let key else { return }
        writeCell(position, into: &document) { JSONWriter.write(key, into: &$0) }
    }

    func writeToMany(_ name: String, keys: [JSONValue], into document: inout [UInt8]) {
        guard let position = positions[name] else { return }
        writeCell(position, into: &document) { JSONWriter.write(.array(keys), into: &$0) }
    }

    func render(_ object: ObjectValues) -> RenderedJSON {
        var document: [UInt8] = []
        writeCell(0, into: &document) { JSONWriter.writeInteger(object.id, into: &$0) }
        writeCell(1, into: &document) { JSONWriter.writeString(object.entity, into: &$0) }
        for attribute in object.attributes {
            guard let position = positions[attribute.name], let value = attribute.value else { continue }
            writeCell(position, into: &document) { JSONWriter.write(value.jsonValue, into: &$0) }
        }
        for relationship in object.relationships {
            switch relationship.destinations {
            case .keys(let keys):
                if relationship.toMany { writeToMany(relationship.name, keys: keys, into: &document) } else {
                    writeToOne(relationship.name, key: keys.first, into: &document)
                }
            case .objects(let objects):
                guard let position = positions[relationship.name], relationship.toMany || !objects.isEmpty else { continue }
                writeCell(position, into: &document) { out in
                    guard relationship.toMany else { return ModelShapeRenderer.write(objects[0], into: &out) }
                    out.append(UInt8(ascii: "["))
                    for (index, destination) in objects.enumerated() {
                        if index > 0 { out.append(UInt8(ascii: ",")) }
                        ModelShapeRenderer.write(destination, into: &out)
                    }
                    out.append(UInt8(ascii: "]"))
                }
            }
        }
        close(&document)
        return RenderedJSON(bytes: document)
    }

    /// Replaces the tagged cells with the row, in the header's order, ended by CRLF.
    func close(_ document: inout [UInt8]) {
        var cells = [Range<Int>?](repeating: nil, count: columns.count)
        var index = 0
        while index + Self.tagBytes <= document.count {
            let position = Int(document[index]) | Int(document[index + 1]) << 8
            let length = (2..<6).reduce(0) { $0 | Int(document[index + $1]) << (8 * ($1 - 2)) }
            cells[position] = index + Self.tagBytes..<index + Self.tagBytes + length
            index += Self.tagBytes + length
        }
        var row: [UInt8] = []
        row.reserveCapacity(document.count + columns.count + 2)
        for (column, cell) in cells.enumerated() {
            if column > 0 { row.append(UInt8(ascii: ",")) }
            if let cell { Self.appendQuoted(document[cell], into: &row) }
        }
        row.append(contentsOf: [0x0D, 0x0A])
        document = row
    }

    // MARK: Cells

    /// A cell's tag: its column (2 bytes) and its length (4 bytes), little-endian.
    private static let tagBytes = 6

    /// The attribute types whose stored text is their value as it is.
    private static let textTypes: Set<AttributeType> = [.string, .uuid, .uri]

    /// Appends the cell of column `position`: what `write` writes as JSON, a string unquoted, nothing for null.
    func writeCell(_ position: Int, into out: inout [UInt8], _ write: (inout [UInt8]) -> Void) {
        let tag = Self.openCell(&out)
        write(&out)
        Self.closeCell(opened: tag, position: position, &out)
    }

    /// Starts a cell at the end of `out`; returns where its tag is.
    private static func openCell(_ out: inout [UInt8]) -> Int {
        out.append(contentsOf: repeatElement(0, count: tagBytes))
        return out.count - tagBytes
    }

    /// Ends the cell opened at `tag`, made a cell of column `position`: the JSON that follows the tag (unless
    /// `json` is false: then the text that follows is the cell).
    private static func closeCell(opened tag: Int, position: Int, _ out: inout [UInt8], json: Bool = true) {
        let start = tag + tagBytes
        // Temporaries only: a slice of `out` kept across its mutation would copy the whole document.
        if json, out[start...].elementsEqual("null".utf8) {
            out.removeSubrange(tag...)
            return
        }
        if json, out.count > start, out[start] == UInt8(ascii: "\"") {
            if out[start...].contains(UInt8(ascii: "\\")), let text = (try? JSONReader().parse(Array(out[start...])))?.stringValue {
                out.replaceSubrange(start..., with: text.utf8)
            } else {
                out.removeLast()
                out.remove(at: start)
            }
        }
        let length = out.count - start
        out[tag] = UInt8(truncatingIfNeeded: position)
        out[tag + 1] = UInt8(truncatingIfNeeded: position >> 8)
        for byte in 0..<4 { out[tag + 2 + byte] = UInt8(truncatingIfNeeded: length >> (8 * byte)) }
    }

    /// Appends `cell`, in double quotes (each inner one doubled) when it holds a comma, a quote, a CR or an LF,
    /// or is empty (an empty string; a nil is no cell at all).
    private static func appendQuoted(_ cell: ArraySlice<UInt8>, into row: inout [UInt8]) {
        let needsQuotes = cell.isEmpty || cell.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0D || $0 == 0x0A }
        guard needsQuotes else { return row.append(contentsOf: cell) }
        row.append(UInt8(ascii: "\""))
        for byte in cell {
            if byte == UInt8(ascii: "\"") { row.append(byte) }
            row.append(byte)
        }
        row.append(UInt8(ascii: "\""))
    }
}
