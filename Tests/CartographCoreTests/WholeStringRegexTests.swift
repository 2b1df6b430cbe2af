// The ICU matcher behind MATCHES and attribute `regex` constraints (docs/predicates.md: "MATCHES
// ... must match the whole string"), and its stop at the request deadline (R-S2).
import CartographCore
import Foundation
import Testing

struct WholeStringRegexTests {
    @Test func R_Q1_matchesTheWholeStringEvenWhereAnAlternativeMatchesAPrefix() throws {
        let regex = try WholeStringRegex("a|ab")
        #expect(regex.matches("ab"))
        #expect(regex.matches("a"))
        #expect(!regex.matches("abc"))
        #expect(!regex.matches("xab"))
        #expect(try WholeStringRegex("h.llo", caseInsensitive: true).matches("HÉLLO"), "`.` is one code point")
        #expect(try !WholeStringRegex("h.llo").matches("HELLO"))
        #expect(try WholeStringRegex("é+").matches("éé"), "code points, not bytes")
    }

    @Test func R_M1_anUnbalancedPatternIsRejectedEvenWhereWrappingWouldBalanceIt() {
        #expect(throws: WholeStringRegex.InvalidPattern.self) { try WholeStringRegex("a)(b") }
        #expect(throws: WholeStringRegex.InvalidPattern.self) { try WholeStringRegex("(") }
    }

    /// ICU ends runaway backtracking by itself, as "no match", after about 0.7 s per match here; past the
    /// deadline a match stops at ICU's first progress report instead. Ten matches after the deadline
    /// would take about 7 s if they ran until ICU gave up.
    @Test func R_S2_backtrackingStopsAtTheDeadline() throws {
        let regex = try WholeStringRegex("(x+x+)+y")
        let text = String(repeating: "x", count: 40)
        let started = ContinuousClock.now
        let matched = RequestDeadline.$current.withValue(RequestDeadline(limit: .milliseconds(100))) { regex.matches(text) }
        #expect(!matched)
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(RequestDeadline.current == nil, "the deadline is bound only inside withValue")
        let passed = RequestDeadline(limit: .zero, from: .now - .seconds(1))
        let afterDeadline = ContinuousClock.now
        let matchedAfter = RequestDeadline.$current.withValue(passed) { (0..<10).map { _ in regex.matches(text) } }
        #expect(matchedAfter == Array(repeating: false, count: 10))
        #expect(ContinuousClock.now - afterDeadline < .seconds(3), "each match stopped at the deadline, not when ICU gave up")
        #expect(regex.matches(String(repeating: "x", count: 5) + "y"), "without a deadline the same regex matches")
    }
}
