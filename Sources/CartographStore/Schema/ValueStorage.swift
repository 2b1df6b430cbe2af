// Attribute values to SQLite values and back, in the storage the predicate compiler relies on
// (see `PredicateSQLSchema`): integers INTEGER, decimals canonical TEXT, doubles REAL, booleans 0/1,
// dates INTEGER milliseconds, binary BLOB, transformable JSON TEXT.
import CartographCore
import CartographPredicate

enum ValueStorage {
    /// The declared column type for an attribute type.
    static func columnType(_ type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64, .boolean, .date: "INTEGER"
        case .double, .float: "REAL"
        case .decimal, .string, .uuid, .uri, .transformable: "TEXT"
        case .binary: "BLOB"
        }
    }

    static func sqlite(_ value: AttributeValue?) -> SQLiteValue {
        value.map { SQLiteValue($0.storedForm) } ?? .null
    }

    /// Reads a stored value back as `type`; nil for NULL (or a value that no longer fits the type).
    static func attributeValue(_ value: SQLiteValue, type: AttributeType) -> AttributeValue? {
        switch (type, value) {
        case (_, .null): return nil
        case (.integer16, .integer(let v)), (.integer32, .integer(let v)), (.integer64, .integer(let v)): return .integer(v)
        case (.decimal, .text(let text)): return try? AttributeValue.coerce(.number(JSONNumber(validatedText: text)), to: .decimal)
        case (.double, let v), (.float, let v): return v.realValue.map { .double($0) }
        case (.string, .text(let v)): return .string(v)
        case (.uuid, .text(let v)): return .uuid(v)
        case (.uri, .text(let v)): return .uri(v)
        case (.boolean, .integer(let v)): return .boolean(v != 0)
        case (.date, .integer(let v)): return .date(millisecondsSince1970: v)
        case (.binary, .blob(let v)): return .binary(v)
        case (.transformable, .text(let v)): return (try? JSONReader().parse(v)).map { .json($0) }
        default: return nil
        }
    }
}
