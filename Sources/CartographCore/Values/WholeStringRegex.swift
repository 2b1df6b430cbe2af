// The one regular-expression matcher: predicates' MATCHES and attribute `regex` constraints.
// ICU (through NSRegularExpression), as NSPredicate and Core Data use it, because ICU reports
// progress while it backtracks: a pathological pattern stops at the request's deadline (R-S2)
// instead of holding a server thread for hours.
import Foundation

/// An ICU regular expression that must match a whole string.
public struct WholeStringRegex: Sendable {
    private let expression: SendableExpression

    /// A pattern ICU cannot compile.
    public struct InvalidPattern: Error, Sendable {
        public let message: String
    }

    public init(_ pattern: String, caseInsensitive: Bool = false) throws(InvalidPattern) {
        let options: NSRegularExpression.Options = caseInsensitive ? [.caseInsensitive] : []
        do {
            // Compiled alone first: wrapped, an unbalanced pattern such as `a)(b` would compile.
            _ = try NSRegularExpression(pattern: pattern, options: options)
            // Anchored at the start by the matching options, at the end by `\z`: a whole-string match
            // even where an alternative matches a prefix first (`a|ab` against "ab").
            expression = SendableExpression(try NSRegularExpression(pattern: "(?:\(pattern))\\z", options: options))
        } catch {
            throw InvalidPattern(message: "'\(pattern)' is not a valid ICU regular expression")
        }
    }

    /// True when all of `text` matches. Once the current request's deadline has passed the match
    /// stops and counts as no match; the request itself fails at its next deadline check.
    public func matches(_ text: String) -> Bool {
        var matched = false
        expression.value.enumerateMatches(in: text, options: [.anchored, .reportProgress],
                                          range: NSRange(location: 0, length: text.utf16.count)) { result, _, stop in
            if result != nil {
                matched = true
                stop.pointee = true
            } else if RequestDeadline.hasPassed {
                stop.pointee = true
            }
        }
        return matched
    }
}

/// `@unchecked Sendable`: NSRegularExpression is immutable after creation and documented safe to
/// use from several threads at once.
private struct SendableExpression: @unchecked Sendable {
    let value: NSRegularExpression
    init(_ value: NSRegularExpression) { self.value = value }
}
