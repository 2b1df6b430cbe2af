// The layout's per-shape caches (`BoundedMemo`): a value is made once per key, and the memo starts over
// rather than grow with every shape requests bring.
import Testing
@testable import CartographStore

struct BoundedMemoTests {
    @Test func aMemoMakesEachValueOnceAndStartsOverPastItsLimit() {
        var memo = BoundedMemo<Int, String>()
        var made = 0
        func value(_ key: Int) -> String { memo.value(for: key) { made += 1; return "v\(key)" } }
        #expect(value(1) == "v1" && value(1) == "v1")
        #expect(made == 1, "kept")
        for key in 2...256 { _ = value(key) }
        #expect(made == 256)
        #expect(value(1) == "v1" && made == 256, "256 keys fit")
        #expect(value(257) == "v257" && made == 257, "the 257th starts the memo over")
        #expect(value(1) == "v1" && made == 258, "so the first is made again")
    }
}
