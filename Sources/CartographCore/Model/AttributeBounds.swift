// Ordering of attribute bound values (`minValue`, `maxValue`): validation checks min <= max and
// the migration diff decides whether a changed bound loosens or tightens.
import Foundation

extension AttributeValue {
    /// Whether `self` orders before `other`; nil when the two are not comparable bounds (different
    /// kinds, or kinds without an order such as strings).
    func isOrdered(before other: AttributeValue) -> Bool? {
        switch (self, other) {
        case (.integer(let a), .integer(let b)): a < b
        case (.decimal(let a), .decimal(let b)): a < b
        case (.double(let a), .double(let b)): a < b
        case (.date(let a), .date(let b)): a < b
        default: nil
        }
    }
}

extension AttributeType {
    /// True for the types whose values `minValue`/`maxValue` bound (numbers and dates).
    var hasValueBounds: Bool { isNumeric || self == .date }

    /// True for the types whose values `minLength`/`maxLength` bound (strings and binary).
    var hasLengthBounds: Bool { self == .string || self == .binary }
}

extension Attribute {
    /// A bound written in the document, coerced to the attribute's type; nil when absent or invalid
    /// (invalid bounds never reach a validated model).
    func boundValue(_ bound: JSONValue?) -> AttributeValue? {
        guard let bound else { return nil }
        return try? AttributeValue.coerce(bound, to: type)
    }
}
