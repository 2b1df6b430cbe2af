// Loads deterministic benchmark data into a model store for `bench/store.sh` (`make bench`).
//
//   cartograph-store-loader STORE_PATH COUNT [--authors N] [--batch N] [--seed N]
//   cartograph-store-loader STORE_PATH --open-only [--repeat N]
//
// The store must already have the bench model registered (the script registers it over HTTP):
// `Author {identifier, name}` and `Article {identifier, title, views, publishedAt, price, author}`,
// both identified by `identifier`. Objects go through the store's Swift API (`ModelStore.write`,
// `insert`, `setRelationship`), so every object also gets its change-feed entry, as a real write
// would. With `--open-only` it loads nothing and times opening the (loaded) store instead: the
// `ModelStore` init a cold tenant's first request pays, its first read (which opens a read
// connection) and a warm read. Article `identifier`s are 1...COUNT, authors' 1...N; the rest comes from a seeded PRNG, so
// the same arguments always produce the same data. Prints timings as `key=value` lines.
import Foundation
import CartographCore
import CartographStore
import CartographHTTP

/// SplitMix64: small, fast and deterministic across platforms.
struct SeededRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: UInt64) -> Int64 { Int64(next() % bound) }
}

/// Writes a line to stdout at once (progress shows while loading, also when redirected to a file).
func emit(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("cartograph-store-loader: \(message)\n".utf8))
    exit(1)
}

func milliseconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
}

/// Times `repeats` cold opens of the store at `path`: init, first read by key, a second (warm) read.
func openOnly(path: String, repeats: Int) {
    for run in 1...repeats {
        let start = ContinuousClock.now
        let store: ModelStore
        do { store = try ModelStore(name: "articles", path: path) } catch { fail("cannot open \(path): \(error)") }
        let openMs = milliseconds(since: start)
        func readMs(_ key: String) -> Double {
            let start = ContinuousClock.now
            do {
                let found = try store.read { (reader) throws(CartographError) in
                    try reader.object(entity: "Article", key: key, renderer: ModelShapeRenderer())
                }
                if found == nil { fail("no Article \(key)") }
            } catch { fail("read failed: \(error)") }
            return milliseconds(since: start)
        }
        // Keys spread over the first 1000 articles (the bench loads at least that many).
        let first = readMs("\(1 + run * 7919 % 1000)"), second = readMs("\(1 + (run * 7919 + 500) % 1000)")
        emit(String(format: "run=%d open_ms=%.3f first_read_ms=%.3f warm_read_ms=%.3f", run, openMs, first, second))
    }
}

var arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String, default value: Int, in arguments: inout [String]) -> Int {
    guard let index = arguments.firstIndex(of: name) else { return value }
    guard index + 1 < arguments.count, let parsed = Int(arguments[index + 1]), parsed > 0 else { fail("\(name) needs a positive integer") }
    arguments.removeSubrange(index...(index + 1))
    return parsed
}
let authorCount = option("--authors", default: 1000, in: &arguments)
let batchSize = option("--batch", default: 100_000, in: &arguments)
let seed = UInt64(option("--seed", default: 42, in: &arguments))
let repeats = option("--repeat", default: 5, in: &arguments)
if let index = arguments.firstIndex(of: "--open-only") {
    arguments.remove(at: index)
    guard arguments.count == 1 else { fail("usage: cartograph-store-loader STORE_PATH --open-only [--repeat N]") }
    openOnly(path: arguments[0], repeats: repeats)
    exit(0)
}
guard arguments.count == 2, let count = Int(arguments[1]), count > 0 else {
    fail("usage: cartograph-store-loader STORE_PATH COUNT [--authors N] [--batch N] [--seed N]")
}
let path = arguments[0]
guard FileManager.default.fileExists(atPath: path) else { fail("no store at \(path): register the model first") }

/// Loads the objects; returns after the store is closed, so SQLite has checkpointed its WAL into the
/// file (Datasette opens it immutable, and the next open pays no WAL recovery).
func load(path: String, count: Int) {
    // Opening an existing store: what a cold request pays in `StoreRegistry` before its first read.
    let openStart = ContinuousClock.now
    let store: ModelStore
    do { store = try ModelStore(name: "articles", path: path) } catch { fail("cannot open \(path): \(error)") }
    let openMs = milliseconds(since: openStart)
    guard let model = store.model, model.entity(named: "Article") != nil, model.entity(named: "Author") != nil else {
        fail("the store has no Article/Author model registered")
    }
    emit(String(format: "open_ms=%.2f", openMs))

    let words = ["maps", "tiles", "routes", "cities", "rivers", "borders", "coasts", "roads", "islands", "valleys",
                 "mountains", "harbours", "bridges", "railways", "forests", "deserts"]
    var random = SeededRandom(seed: seed)
    // 2021-01-01T00:00:00Z, plus up to ~3 years.
    let baseDate: Int64 = 1_609_459_200_000, dateSpan: UInt64 = 3 * 365 * 24 * 3600 * 1000

    let total = ContinuousClock.now
    var authorIDs: [Int64] = []
    do {
        let start = ContinuousClock.now
        (authorIDs, _) = try store.write { (tx) throws(CartographError) -> [Int64] in
            var ids: [Int64] = []
            ids.reserveCapacity(authorCount)
            for i in 1...authorCount {
                ids.append(try tx.insert(entity: "Author", values: ["identifier": .integer(Int64(i)), "name": .string("Author \(i)")]))
            }
            return ids
        }
        emit(String(format: "authors=%d authors_ms=%.0f", authorCount, milliseconds(since: start)))
    } catch { fail("writing authors failed: \(error)") }

    var loaded = 0
    while loaded < count {
        let size = min(batchSize, count - loaded)
        // Values are drawn outside the transaction so the timing is the store's.
        var rows: [(values: [String: AttributeValue], author: Int64)] = []
        rows.reserveCapacity(size)
        for i in (loaded + 1)...(loaded + size) {
            let a = words[Int(random.below(UInt64(words.count)))], b = words[Int(random.below(UInt64(words.count)))]
            let cents = random.below(100_000)
            guard let price = try? AttributeValue.coerce(.string("\(cents / 100).\(String(format: "%02d", Int(cents % 100)))"), to: .decimal) else {
                fail("bad decimal")
            }
            rows.append(([
                "identifier": .integer(Int64(i)),
                "title": .string("Article \(i) on \(a) and \(b)"),
                "views": .integer(random.below(1_000_000)),
                "publishedAt": .date(millisecondsSince1970: baseDate + random.below(dateSpan)),
                "price": price,
            ], authorIDs[Int(random.below(UInt64(authorCount)))]))
        }
        let start = ContinuousClock.now
        do {
            _ = try store.write { (tx) throws(CartographError) in
                for row in rows {
                    let id = try tx.insert(entity: "Article", values: row.values)
                    try tx.setRelationship(id: id, entity: "Article", relationship: "author", to: [row.author])
                }
            }
        } catch { fail("writing articles \(loaded + 1)...\(loaded + size) failed: \(error)") }
        let ms = milliseconds(since: start)
        loaded += size
        emit(String(format: "batch=%d objects=%d batch_ms=%.0f objects_per_s=%.0f", loaded / batchSize + (loaded % batchSize == 0 ? 0 : 1),
                     size, ms, Double(size) / (ms / 1000)))
    }
    let totalMs = milliseconds(since: total)
    emit(String(format: "articles=%d total_ms=%.0f objects_per_s=%.0f", count, totalMs, Double(count + authorCount) / (totalMs / 1000)))
}

let loadStart = ContinuousClock.now
load(path: path, count: count)
emit(String(format: "with_close_ms=%.0f", milliseconds(since: loadStart)))
