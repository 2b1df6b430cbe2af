// The five SQLite storage classes as a Swift value, used for every bound parameter and read column.

/// A value as SQLite stores it.
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public var integerValue: Int64? { if case .integer(let v) = self { v } else { nil } }
    public var realValue: Double? {
        switch self {
        case .real(let v): v
        case .integer(let v): Double(v)
        default: nil
        }
    }
    public var textValue: String? { if case .text(let v) = self { v } else { nil } }
    public var blobValue: [UInt8]? { if case .blob(let v) = self { v } else { nil } }
    public var isNull: Bool { if case .null = self { true } else { false } }
}
