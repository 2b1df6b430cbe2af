// The ICU matcher behind MATCHES and attribute `regex` constraints (DESIGN: "MATCHES is a
// whole-string ICU-style match"), and its stop at the request deadline (R-S2).
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

    @Test func R_S2_backtrackingStopsAtTheDeadline() throws {
        let regex = try WholeStringRegex("(x+x+)+y")
        let text = String(repeating: "x", count: 40)
        let started = ContinuousClock.now
        let matched = RequestDeadline.$current.withValue(RequestDeadline(limit: .milliseconds(100))) { regex.matches(text) }
        #expect(!matched)
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(RequestDeadline.current == nil, "the deadline is bound only inside withValue")
    }
}
