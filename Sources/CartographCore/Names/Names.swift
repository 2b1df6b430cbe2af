// Name rules of docs/api.md#names. Every path segment that names a tenant, model or mapping is checked
// here before it can become part of a file path or a lookup (R-S1).

/// Validators for the names that appear in paths and documents.
public enum Names {
    /// Tenants, models, mappings and key ids: `^[a-z0-9][a-z0-9_-]{0,62}$`.
    public static func isResourceName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...63).contains(bytes.count), isLowerAlnum(bytes[0]) else { return false }
        return bytes.dropFirst().allSatisfy { isLowerAlnum($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    /// Entities, attributes and relationships: `^[A-Za-z][A-Za-z0-9_]{0,127}$`.
    public static func isPropertyName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...128).contains(bytes.count), isLetter(bytes[0]) else { return false }
        return bytes.dropFirst().allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") }
    }

    private static func isDigit(_ b: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) }
    private static func isLetter(_ b: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
    }
    private static func isLowerAlnum(_ b: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || isDigit(b) }
}
