// A page's objects written straight from their rows into the response's bytes (docs/storage.md "Reading
// a page"): the bytes `ModelShapeRenderer.write(_:into:)` writes for the same object's values, without
// decoding each value and building a document of them in between (that was a third of the CPU of a
// page of 50 articles). Each entity's members' names are written out once per table (`prepare`).
import CartographCore
public import CartographStore

extension ModelShapeRenderer {
    /// What writing one table's rows needs, by entity (`TableRows.entities`' order).
    public final class PreparedTable {
        fileprivate let entities: [PreparedEntity]

        fileprivate init(entities: [PreparedEntity]) { self.entities = entities }
    }

    /// One entity's members as written. A class: a row takes it with one retain.
    fileprivate final class PreparedEntity {
        /// `,"_entity":"<name>"`
        let entityMember: [UInt8]
        /// Its attributes in property order.
        let attributes: [Member]
        /// Each attribute's `,"name":`, one after the other (a `Member` holds its range).
        let prefixes: [UInt8]
        /// The store's columns of the same attributes (their names, for `fields`).
        let columns: [AttributeColumn]

        init(_ entity: TableRows.Entity) {
            var entityMember = Array(#","_entity":"#.utf8)
            JSONWriter.writeString(entity.name, into: &entityMember)
            self.entityMember = entityMember
            var prefixes: [UInt8] = []
            self.attributes = entity.attributes.map { attribute in
                let start = prefixes.count
                prefixes.append(UInt8(ascii: ","))
                JSONWriter.writeString(attribute.name, into: &prefixes)
                prefixes.append(UInt8(ascii: ":"))
                return Member(prefix: start..<prefixes.count, column: attribute.column, type: attribute.type)
            }
            self.prefixes = prefixes
            self.columns = entity.attributes
        }
    }

    /// One attribute of an entity: where its value is and how it is written. Nothing in it is counted
    /// by reference, so walking a row's members retains nothing (with a name and a byte array in each,
    /// the retains and releases were a third of the time spent writing a row's head).
    fileprivate struct Member {
        /// Where `,"name":` is in `PreparedEntity.prefixes`.
        let prefix: Range<Int>
        let column: Int32
        let type: AttributeType
    }

    public func prepare(_ table: TableRows) -> PreparedTable {
        PreparedTable(entities: table.entities.map(PreparedEntity.init))
    }

    /// Writes `row`'s object left open after its attributes (those `fields` selects, when given).
    public func writeHead(of row: borrowing StoredRow, table: PreparedTable, fields: Set<String>?, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"_id":"#.utf8)
        JSONWriter.writeInteger(row.id, into: &out)
        guard let index = row.entityIndex else {
            out.append(contentsOf: #","_entity":"#.utf8)
            JSONWriter.writeString(row.entity, into: &out)
            if row.isStub { out.append(contentsOf: #","_stub":true"#.utf8) }
            return
        }
        let entity = table.entities[index]
        out.append(contentsOf: entity.entityMember)
        if row.isStub { out.append(contentsOf: #","_stub":true"#.utf8) }
        entity.prefixes.withUnsafeBufferPointer { prefixes in
            for (index, member) in entity.attributes.enumerated() {
                if fields != nil, !entity.columns[index].isSelected(by: fields) { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: prefixes[member.prefix]))
                Self.writeValue(of: row, column: member.column, type: member.type, into: &out)
            }
        }
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
    /// text directly; anything else (decimals not in their canonical text, doubles, binary,
    /// transformable, a value stored in a class its type does not read) decoded as a read decodes it.
    static func writeValue(of row: borrowing StoredRow, column: Int32, type: AttributeType, into out: inout [UInt8]) {
        switch row.storage(of: column) {
        case .null:
            out.append(contentsOf: "null".utf8)
        case .integer:
            switch type {
            case .integer16, .integer32, .integer64:
                JSONWriter.writeInteger(row.integer(column), into: &out)
            case .boolean:
                out.append(contentsOf: (row.integer(column) != 0 ? "true" : "false").utf8)
            case .date:
                // A rendered date has no byte a JSON string escapes.
                out.append(UInt8(ascii: "\""))
                ISO8601Instant.write(milliseconds: row.integer(column), into: &out)
                out.append(UInt8(ascii: "\""))
            case .decimal, .double, .float, .string, .uuid, .uri, .binary, .transformable:
                writeDecoded(of: row, column: column, type: type, into: &out)
            }
        case .text:
            switch type {
            case .decimal:
                // Decimals are stored in their canonical text, which is what they render as: parsing it into a
                // Decimal and printing it again (1 µs each, 50 per page) would give the same digits. Other
                // text is decoded as a read decodes it.
                let written = row.withText(column) { (text) -> Bool in
                    guard Self.isCanonicalDecimal(text) else { return false }
                    out.append(UInt8(ascii: "\""))
                    out.append(contentsOf: text)
                    out.append(UInt8(ascii: "\""))
                    return true
                }
                if !written { writeDecoded(of: row, column: column, type: type, into: &out) }
            case .string, .uuid, .uri:
                // Well-formed UTF-8 is copied as it is; anything else goes through String, which repairs it,
                // so the bytes are those a decoded read writes.
                if !row.withText(column, { JSONWriter.writeString(validatingUTF8: $0, into: &out) }) {
                    JSONWriter.writeString(row.text(column) ?? "", into: &out)
                }
            case .integer16, .integer32, .integer64, .boolean, .date, .double, .float, .binary, .transformable:
                writeDecoded(of: row, column: column, type: type, into: &out)
            }
        case .real, .blob:
            writeDecoded(of: row, column: column, type: type, into: &out)
        }
    }

    /// Writes a stored value decoded as a read decodes it.
    private static func writeDecoded(of row: borrowing StoredRow, column: Int32, type: AttributeType, into out: inout [UInt8]) {
        JSONWriter.write(row.value(column, as: type)?.jsonValue ?? .null, into: &out)
    }
}
