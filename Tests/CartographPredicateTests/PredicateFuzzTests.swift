// Fuzzing the parser (and everything after it) with arbitrary input: no crash, no hang.
//
// By default a short deterministic run (a few thousand inputs) runs with the other tests. A long
// randomized run is gated by an environment variable:
//
//     CARTOGRAPH_FUZZ_SECONDS=600 swift test --scratch-path .build-predicate \
//         --filter CartographPredicateTests.PredicateFuzzTests
//
// `CARTOGRAPH_FUZZ_SEED` picks the seed (default: time-based for long runs; printed). See
// docs/fuzzing.md.
import CartographCore
import CartographPredicate
import Foundation
import Testing
import CartographTesting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct PredicateFuzzTests {
    /// Grammar fragments that random inputs are built from, so inputs reach deep into the parser.
    static let vocabulary: [String] = [
        "(", ")", "{", "}", "[", "]", ",", ".", " ", "  ", "\t", "\n", "AND", "&&", "OR", "||", "NOT", "!", "ANY", "ALL",
        "NONE", "SOME", "==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>", "BETWEEN", "IN", "CONTAINS", "BEGINSWITH",
        "ENDSWITH", "LIKE", "MATCHES", "[c]", "[d]", "[cd]", "TRUEPREDICATE", "FALSEPREDICATE", "YES", "NO", "nil", "NULL",
        "SELF", "CAST(", "\"NSDate\"", "name", "qty", "price", "owner", "owner.name", "tags", "tags.label", "tags.@count",
        "tags.@sum.weight", "@avg", "friends.company.title", "#in", "$name", "$numbers", "$", "#", "@", "0", "-1", "12.5",
        "1e3", "0x1F", "0b101", "0o17", "9223372036854775808", "1e999999", "\"", "'", "\"abc\"", "'É'", "\"\\u00e9\"",
        "\"\\uD83D\\uDE00\"", "\"\\q\"", "\\", "é", "e\u{301}", "🇫🇷", "\r\n", "\u{0}", "\u{FFFD}", "ａ", "а", "*", "?",
    ]

    static let seedCorpus: [String] = [
        "name == \"x\"", "ANY tags.label BEGINSWITH[cd] \"ab\" AND NOT (qty > 3 OR price <= 12.50)",
        "when > CAST(\"2024-01-01T00:00:00Z\", \"NSDate\")", "tags.@count BETWEEN {1, 3}", "qty IN {1, 2, nil}",
        "name MATCHES \"(a|b)*c\"", "owner.name LIKE[c] \"*é?\"", "\"x\" IN tags.label", "ALL friends.age >= $age",
    ]

    struct Report {
        var inputs = 0, parsed = 0, checked = 0, compiled = 0
        var slowest: Duration = .zero
        var slowestInput = ""
    }

    /// One input: parse, and when it parses, round-trip, check, compile and evaluate. Returns false
    /// when a property fails.
    static func exercise(_ input: String, report: inout Report, schema: TestSchema, objects: [TestObject]) -> Bool {
        report.inputs += 1
        guard let predicate = try? Predicate(format: input) else { return true }
        report.parsed += 1
        guard let reparsed = try? Predicate(format: predicate.format), reparsed == predicate else {
            Issue.record("round trip failed for «\(input)» -> «\(predicate.format)»")
            return false
        }
        let variables: [String: JSONValue] = ["name": "x", "numbers": [1, 2], "age": 3]
        guard let checked = try? predicate.checked(against: TestModel.standard, entity: "Item", variables: variables) else { return true }
        report.checked += 1
        if (try? checked.sql(schema: schema)) != nil { report.compiled += 1 }
        for object in objects { _ = checked.evaluate(object) }
        return true
    }

    static func randomInput(_ random: inout SeededRandom) -> String {
        switch random.next() % 6 {
        case 0:
            // Arbitrary bytes, decoded leniently as the HTTP layer would.
            let bytes = (0..<Int(random.next() % 96)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            return String(decoding: bytes, as: UTF8.self)
        case 1:
            // Deep nesting of one construct.
            let piece = ["(", "NOT ", "!", "{", "CAST(", "((", "NOT (", "{{"][Int(random.next() % 8)]
            return String(repeating: piece, count: Int(random.next() % 2_000)) + "a == 1"
        case 2, 3:
            // A valid predicate or a seed, with bytes replaced, inserted or cut (half of them).
            var generator = PredicateGenerator(random: SeededRandom(seed: random.next()))
            let valid = random.next() % 2 == 0 ? generator.predicate() : seedCorpus[Int(random.next() % UInt64(seedCorpus.count))]
            guard random.next() % 2 == 0 else { return valid }
            var bytes = Array(valid.utf8)
            for _ in 0..<(1 + Int(random.next() % 4)) where !bytes.isEmpty {
                let index = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 3 {
                case 0: bytes[index] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: index)
                default: bytes.removeSubrange(index...)
                }
            }
            return String(decoding: bytes, as: UTF8.self)
        default:
            // A sequence of grammar fragments.
            return (0..<Int(random.next() % 24)).map { _ in vocabulary[Int(random.next() % UInt64(vocabulary.count))] }.joined()
        }
    }

    /// CPU time of the calling thread: unlike the wall clock, it does not count time the test
    /// spent descheduled on a busy machine.
    static func threadCPUTime() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return .seconds(Int64(now.tv_sec)) + .nanoseconds(Int64(now.tv_nsec))
    }

    @Test func parserSurvivesArbitraryInput() throws {
        let environment = ProcessInfo.processInfo.environment
        let seconds = environment["CARTOGRAPH_FUZZ_SECONDS"].flatMap(Double.init)
        let seed = environment["CARTOGRAPH_FUZZ_SEED"].flatMap(UInt64.init)
            ?? (seconds == nil ? 20_240_101 : UInt64(Date().timeIntervalSince1970 * 1000))
        var random = SeededRandom(seed: seed)
        let dataset = try TestDataset(seed: 1)
        let objects = Array(dataset.items.prefix(4))
        var report = Report()
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(seconds ?? 0)
        var index = 0
        while seconds == nil ? index < 3_000 : clock.now < deadline {
            let input = index < Self.seedCorpus.count ? Self.seedCorpus[index] : Self.randomInput(&random)
            index += 1
            let start = Self.threadCPUTime()
            guard Self.exercise(input, report: &report, schema: TestSchema(), objects: objects) else { break }
            let elapsed = Self.threadCPUTime() - start
            if elapsed > report.slowest {
                report.slowest = elapsed
                report.slowestInput = String(input.prefix(80))
            }
        }
        print("predicate fuzz: seed \(seed), \(report.inputs) inputs, \(report.parsed) parsed, \(report.checked) checked, \(report.compiled) compiled, 0 crashes, slowest input \(report.slowest) of CPU time")
        #expect(report.inputs >= 3_000)
        #expect(report.parsed > 0)
        // No input may take long: the parser has no quadratic paths and a nesting limit.
        #expect(report.slowest < .seconds(1), "slowest input: «\(report.slowestInput)»")
    }
}
