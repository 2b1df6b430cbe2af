// CONTAINS, BEGINSWITH, ENDSWITH, LIKE and MATCHES over Unicode code points, with `[c]`/`[d]`.
// The evaluator and the SQL function `cartograph_string_match` both build a `StringPattern`, so a
// string test has one meaning wherever it runs.
import Foundation
import CartographCore

/// A compiled right-hand side of a string operator.
public struct StringPattern: Sendable {
    private enum Matcher: Sendable {
        /// CONTAINS/BEGINSWITH/ENDSWITH: the folded pattern's UTF-8 bytes (byte order is code point order).
        case substring(StringOperator, [UInt8])
        /// LIKE: the folded pattern's scalars; `*` and `?` are wildcards, `\` escapes.
        case like([LikeElement])
        /// MATCHES: a whole-string ICU match.
        case regex(WholeStringRegex)
    }

    private enum LikeElement: Sendable, Equatable {
        case scalar(Unicode.Scalar), anyOne, anyRun
    }

    private let matcher: Matcher
    private let options: ComparisonOptions

    /// An invalid MATCHES pattern.
    public struct InvalidPattern: Error, Sendable {
        /// Why the regular expression does not compile.
        public let message: String
    }

    /// Compiles `pattern` for `stringOperator` with `options`.
    ///
    /// - Throws: `InvalidPattern` for a MATCHES pattern that is not a valid regular expression.
    public init(_ stringOperator: StringOperator, options: ComparisonOptions, pattern: String) throws(InvalidPattern) {
        self.options = options
        switch stringOperator {
        case .contains, .beginsWith, .endsWith:
            matcher = .substring(stringOperator, Array(StringFolding.fold(pattern, options).utf8))
        case .like:
            var elements: [LikeElement] = []
            var escaping = false
            for scalar in StringFolding.fold(pattern, options).unicodeScalars {
                if escaping {
                    elements.append(.scalar(scalar))
                    escaping = false
                } else if scalar == "\\" {
                    escaping = true
                } else if scalar == "*" {
                    // Runs of stars are one star: keeps matching linear in the pattern's length.
                    if elements.last != .anyRun { elements.append(.anyRun) }
                } else {
                    elements.append(scalar == "?" ? .anyOne : .scalar(scalar))
                }
            }
            if escaping { elements.append(.scalar("\\")) }
            matcher = .like(elements)
        case .matches:
            do {
                matcher = .regex(try WholeStringRegex(pattern, caseInsensitive: options.contains(.caseInsensitive)))
            } catch {
                throw InvalidPattern(message: error.message)
            }
        }
    }

    /// True when `subject` satisfies the operator (Foundation: an empty CONTAINS, BEGINSWITH or
    /// ENDSWITH pattern matches nothing).
    public func matches(_ subject: String) -> Bool {
        switch matcher {
        case .substring(let stringOperator, let needle):
            guard !needle.isEmpty else { return false }
            var folded = StringFolding.fold(subject, options)
            return folded.withUTF8 { haystack in
                guard haystack.count >= needle.count else { return false }
                switch stringOperator {
                case .beginsWith: return haystack.prefix(needle.count).elementsEqual(needle)
                case .endsWith: return haystack.suffix(needle.count).elementsEqual(needle)
                default: return Self.contains(haystack, needle)
                }
            }
        case .like(let elements):
            return Self.like(Array(StringFolding.fold(subject, options).unicodeScalars), elements)
        case .regex(let regex):
            // [c] is the regex's own case-insensitivity; [d] folds the subject's diacritics.
            let text = StringFolding.fold(subject, options.subtracting(.caseInsensitive))
            return regex.matches(text)
        }
    }

    private static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        let first = needle[0]
        var start = 0
        let lastStart = haystack.count - needle.count
        while start <= lastStart {
            if haystack[start] == first, haystack[start..<start + needle.count].elementsEqual(needle) { return true }
            start += 1
        }
        return false
    }

    /// Wildcard matching with backtracking to the last star only: O(subject × pattern) at worst.
    private static func like(_ subject: [Unicode.Scalar], _ pattern: [LikeElement]) -> Bool {
        var s = 0, p = 0
        var starPattern = -1, starSubject = 0
        while s < subject.count {
            if p < pattern.count {
                switch pattern[p] {
                case .anyRun:
                    starPattern = p
                    starSubject = s
                    p += 1
                    continue
                case .anyOne:
                    s += 1
                    p += 1
                    continue
                case .scalar(let scalar) where scalar == subject[s]:
                    s += 1
                    p += 1
                    continue
                case .scalar:
                    break
                }
            }
            guard starPattern >= 0 else { return false }
            p = starPattern + 1
            starSubject += 1
            s = starSubject
        }
        while p < pattern.count, pattern[p] == .anyRun { p += 1 }
        return p == pattern.count
    }
}
