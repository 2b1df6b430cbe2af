// A mapping's incremental cursor (R-P16, docs/mapping.md "Incremental cursors"): every integrator's
// "fetch since the last updated_at" loop keeps its watermark somewhere; the store keeps it instead, in
// the payload's own transaction, so a fetcher resumes exactly where the last committed payload ended.
public import CartographCore

/// `"cursor": "updatedAt"` or `{"attribute": "updatedAt", "scope": ["repo"]}`: the greatest value of
/// `attribute` among a payload's top-level objects, kept per the values of the query parameters named in
/// `scope` (which the payload route then takes).
public struct MappingCursor: Sendable, Equatable {
    public var attribute: String
    public var scope: [String]

    public init(attribute: String, scope: [String] = []) {
        self.attribute = attribute
        self.scope = scope
    }

    /// Whether values of `type` have an order a fetcher can resume from.
    public static func orders(_ type: AttributeType) -> Bool {
        switch type {
        case .integer16, .integer32, .integer64, .decimal, .double, .float, .string, .date, .uuid, .uri: true
        case .boolean, .binary, .transformable: false
        }
    }

    /// The greater of two values of one attribute (strings by their UTF-8 bytes, as SQLite orders them);
    /// `b` when `a` is nil or of another kind (an attribute's values are all of its type).
    public static func greater(_ a: AttributeValue?, _ b: AttributeValue) -> AttributeValue {
        guard let a else { return b }
        let aFirst: Bool
        switch (a, b) {
        case (.integer(let x), .integer(let y)): aFirst = x < y
        case (.decimal(let x), .decimal(let y)): aFirst = x < y
        case (.double(let x), .double(let y)): aFirst = x < y
        case (.date(let x), .date(let y)): aFirst = x < y
        case (.string(let x), .string(let y)), (.uuid(let x), .uuid(let y)), (.uri(let x), .uri(let y)):
            aFirst = x.utf8.lexicographicallyPrecedes(y.utf8)
        case (.integer, _), (.decimal, _), (.double, _), (.date, _), (.string, _), (.uuid, _), (.uri, _),
             (.boolean, _), (.binary, _), (.json, _):
            aFirst = true
        }
        return aFirst ? b : a
    }
}
