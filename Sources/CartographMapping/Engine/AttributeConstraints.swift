// R-P8's value checks for one attribute: bounds, lengths and the whole-string regex.
import Foundation
import CartographCore

enum AttributeConstraints {
    /// Messages for each constraint `value` breaks.
    static func violations(of value: AttributeValue, attribute: Attribute, regexes: EntityTables) -> [String] {
        var messages: [String] = []
        if let bound = attribute.minValue.flatMap({ try? AttributeValue.coerce($0, to: attribute.type) }), compare(value, bound) == .orderedAscending {
            messages.append("'\(attribute.name)' must be at least \(bound.jsonValue.jsonText)")
        }
        if let bound = attribute.maxValue.flatMap({ try? AttributeValue.coerce($0, to: attribute.type) }), compare(value, bound) == .orderedDescending {
            messages.append("'\(attribute.name)' must be at most \(bound.jsonValue.jsonText)")
        }
        // Counting characters walks the whole string: only for attributes with length bounds.
        let bounded = attribute.minLength != nil || attribute.maxLength != nil
        let length: Int? = switch value {
        case .string(let text) where bounded: text.count
        case .binary(let bytes) where bounded: bytes.count
        default: nil
        }
        if let length, let minimum = attribute.minLength, length < minimum {
            messages.append("'\(attribute.name)' must be at least \(minimum) long, is \(length)")
        }
        if let length, let maximum = attribute.maxLength, length > maximum {
            messages.append("'\(attribute.name)' must be at most \(maximum) long, is \(length)")
        }
        if let pattern = attribute.regex, case .string(let text) = value, let regex = regexes.regex(pattern), !regex.matches(text) {
            messages.append("'\(attribute.name)' does not match \(pattern)")
        }
        return messages
    }

    /// Orders two values of the same numeric or date type; nil when they do not compare.
    static func compare(_ a: AttributeValue, _ b: AttributeValue) -> ComparisonResult? {
        func order<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult { x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame) }
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return order(x, y)
        case (.decimal(let x), .decimal(let y)): return order(x, y)
        case (.double(let x), .double(let y)): return order(x, y)
        case (.date(let x), .date(let y)): return order(x, y)
        default: return nil
        }
    }
}
