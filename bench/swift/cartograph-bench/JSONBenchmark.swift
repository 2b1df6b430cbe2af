// JSON reader throughput against Foundation's JSONSerialization on the same article payloads.
import Foundation
import CartographCore
import CartographTesting

enum JSONBenchmark {
    /// Realistic API payloads: articles with a nested author from a small pool, 0–5 tags, ISO 8601
    /// dates, string ids and a decimal price.
    static func articlesPayload(count: Int, seed: UInt64 = 42) -> [UInt8] {
        var random = SeededRandom(seed: seed)
        var articles: [JSONValue] = []
        articles.reserveCapacity(count)
        for i in 0..<count {
            let author = Int(random.next() % 200)
            let tags: [JSONValue] = (0..<Int(random.next() % 6)).map { _ in
                let tag = Int(random.next() % 50)
                return ["id": .string("tag-\(tag)"), "name": .string("Tag \(tag) — ünïcode")]
            }
            articles.append([
                "id": .string("article-\(i)"),
                "title": .string("Article number \(i) about \"things\""),
                "body": .string(String(repeating: "Lorem ipsum dolor sit amet. ", count: 1 + Int(random.next() % 8))),
                "published_at": .string("2024-0\(1 + i % 9)-1\(i % 10)T12:34:56.789Z"),
                "price": .number(JSONNumber(validatedText: "\(i % 1000).\(10 + i % 90)")),
                "views": .number(JSONNumber(Int(random.next() % 1_000_000))),
                "author": ["id": .string("user-\(author)"), "name": .string("Author \(author)"), "verified": .bool(author % 2 == 0)],
                "tags": .array(tags),
            ])
        }
        return JSONValue.object(JSONObject([("articles", .array(articles))])).jsonBytes
    }

    static func run() {
        print("## JSON reader (MB/s, higher is better; \(Runs.count) runs each, min/median of time)")
        for count in [1_000, 10_000] {
            let payload = articlesPayload(count: count)
            let megabytes = Double(payload.count) / 1_048_576
            let reader = JSONReader()
            let ours = Runs.measure { _ = try! reader.parse(payload) }
            let data = Data(payload)
            let foundation = Runs.measure { _ = try! JSONSerialization.jsonObject(with: data) }
            print(String(format: "articles=%-6d size=%.2f MB  cartograph: %.0f MB/s (median %.0f)  JSONSerialization: %.0f MB/s (median %.0f)  ratio(best)=%.2fx",
                         count, megabytes, megabytes / ours.min, megabytes / ours.median,
                         megabytes / foundation.min, megabytes / foundation.median, foundation.min / ours.min))
        }
    }
}

/// Repeated timings of one operation.
enum Runs {
    static let count = 7

    static func measure(_ body: () -> Void) -> (min: Double, median: Double) {
        body()  // warm-up
        var seconds: [Double] = []
        for _ in 0..<count {
            let start = ContinuousClock.now
            body()
            let elapsed = ContinuousClock.now - start
            seconds.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        seconds.sort()
        return (seconds[0], seconds[seconds.count / 2])
    }
}
