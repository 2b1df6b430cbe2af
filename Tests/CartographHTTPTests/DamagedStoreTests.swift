// R-S12 (issue 30, docs/errors.md#storage-faults): a store whose pages were overwritten answers 503
// `store-corrupt` on every route of its model, whatever the bytes written, is listed on /readyz, and
// leaves the tenant's other models and other tenants served. It once answered, one trial in three,
// 404 "No model 'ledger' …; did you mean 'ledger'?": reads of the damaged pages found nothing, the
// store opened as one without a model, and its opening wrote new tables into the damaged file.
import Foundation
import Testing
import CartographCore
import CartographHTTP
import CartographStore
import CartographTesting

private let ledgerModel: JSONValue = ["entities": [
    ["name": "Entry", "attributes": [["name": "id", "type": "integer64", "indexed": true], ["name": "memo", "type": "string"],
                                     ["name": "amount", "type": "double"]]],
]]
private let entriesMapping: JSONValue = ["entity": "Entry", "keyPath": "entries", "attributes": ["id", "memo", "amount"]]
private let notesModel: JSONValue = ["entities": [["name": "Note", "attributes": [["name": "id", "type": "integer64"]]]]]

/// `count` entries from `first`, each with a memo long enough that the store spans a few dozen pages.
private func entries(from first: Int, count: Int) -> JSONValue {
    let memo = String(repeating: "m", count: 200)
    return ["entries": .array((first..<first + count).map { (id: Int) -> JSONValue in
        let number = JSONValue.number(JSONNumber(Int64(id)))
        let amount = JSONValue.number(JSONNumber(Int64(id * 3)))
        return ["id": number, "memo": .string("entry \(id) \(memo)"), "amount": amount]
    })]
}

/// An in-process server with tenant acme (models ledger and notes) and tenant other (model ledger).
private struct Ledgers {
    static let entryCount = 300
    let server: InProcessServer
    let acme: String, other: String

    init() throws {
        server = try InProcessServer()
        var keys: [String] = []
        for tenant in ["acme", "other"] {
            let key = try #require(try server.sendJSON("POST", "/v1/tenants", ["id": .string(tenant)], token: server.adminToken).json()["apiKey"]?.stringValue)
            let base = "/v1/tenants/\(tenant)/models/ledger"
            try #require(try server.sendJSON("PUT", base, ledgerModel, token: key).status == 201)
            try #require(try server.sendJSON("PUT", base + "/mappings/entries", entriesMapping, token: key).status == 201)
            try #require(try server.sendJSON("POST", base + "/mappings/entries/payloads", entries(from: 0, count: Self.entryCount), token: key).status == 200)
            keys.append(key)
        }
        acme = keys[0]
        other = keys[1]
        try #require(try server.sendJSON("PUT", "/v1/tenants/acme/models/notes", notesModel, token: acme).status == 201)
        let notes = "/v1/tenants/acme/models/notes/mappings/notes"
        try #require(try server.sendJSON("PUT", notes, ["entity": "Note", "keyPath": "notes", "attributes": ["id"]], token: acme).status == 201)
        try #require(try server.sendJSON("POST", notes + "/payloads", ["notes": [["id": 1], ["id": 2]]], token: acme).status == 200)
    }

    /// acme's ledger store, closed, its log checkpointed into the file and removed.
    func closedLedgerFile() throws -> URL {
        server.application.stores.closeStore(tenant: "acme", model: "ledger")
        let file = URL(fileURLWithPath: server.application.stores.path(tenant: "acme", model: "ledger"))
        do {
            let connection = try SQLiteConnection(path: file.path)
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file.path + suffix) }
        return file
    }
}

/// Overwrites `count` bytes of `file` (to its end when nil) from `offset` with bytes drawn from `seed`.
private func overwrite(_ file: URL, from offset: Int, seed: UInt64, count: Int? = nil) throws {
    let handle = try FileHandle(forUpdating: file)
    defer { try? handle.close() }
    let size = Int(try handle.seekToEnd())
    var random = SeededRandom(seed: seed)
    try handle.seek(toOffset: UInt64(offset))
    handle.write(Data((0..<(count ?? size - offset)).map { _ in UInt8.random(in: .min ... .max, using: &random) }))
}

/// Every route of acme's ledger, as (method, path, JSON body).
private let ledgerRoutes: [(String, String, JSONValue?)] = {
    let base = "/v1/tenants/acme/models/ledger"
    return [
        ("GET", base, nil),
        ("GET", base + "/entities/Entry/objects?limit=5", nil),
        ("GET", base + "/entities/Entry/objects/7", nil),
        ("POST", base + "/entities/Entry/query", ["where": "amount > 3"]),
        ("POST", base + "/mappings/entries/payloads", entries(from: 10_000, count: 1)),
        ("POST", base + "/entities/Entry/payloads", [["id": 10_001]]),
        ("GET", base + "/changes?since=0", nil),
        ("GET", base + "/changes?since=0&wait=1", nil),
        ("GET", base + "/mappings", nil),
        ("GET", base + "/mappings/entries", nil),
        ("DELETE", base + "/entities/Entry/objects/7", nil),
        ("PUT", base, ledgerModel),
    ]
}()

@Suite struct DamagedStoreTests {
    @Test func R_S12_aStoreWhosePagesWereOverwrittenIs503StoreCorruptOnEveryRouteWhateverTheBytes() throws {
        var wrongAnswers: [String] = []
        var trials = 0
        for seed in UInt64(1)...30 {
            // The damage (the header's 100 bytes kept), every page but the first, the cells at the end of the
            // meta table's index (page 3), the second half of the file, and its last page: each with every seed.
            for place in 0..<5 {
                try trial(seed: seed, place: place, wrongAnswers: &wrongAnswers)
                trials += 1
            }
        }
        #expect(trials == 150)
        #expect(wrongAnswers.isEmpty, "\(wrongAnswers.count) wrong answers, first: \(wrongAnswers.prefix(12).joined(separator: "\n"))")
    }

    /// One damaged ledger: what every route answered that was not what R-S12 says, added to `wrongAnswers`.
    private func trial(seed: UInt64, place: Int, wrongAnswers: inout [String]) throws {
        let ledgers = try Ledgers()
        let file = try ledgers.closedLedgerFile()
        let size = Int(try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber).int64Value)
        try #require(size > 40 * 4_096, "the ledger spans many pages")
        let offset = [100, 4_096, 3 * 4_096 - 1_024, size / 8_192 * 4_096, size - 4_096][place]
        try overwrite(file, from: offset, seed: seed)
        let damagedBytes = try Data(contentsOf: file)
        let server = ledgers.server
        for (method, path, body) in ledgerRoutes {
            let response = try body.map { try server.sendJSON(method, path, $0, token: ledgers.acme) } ?? server.send(method, path, token: ledgers.acme)
            let type = (try? response.json()["type"]?.stringValue) ?? nil
            if response.status != 503 || type != "urn:cartograph:problem:store-corrupt"
                || response.header("Content-Type") != "application/problem+json" {
                wrongAnswers.append("seed \(seed), offset \(offset): \(method) \(path) answered \(response.status) \(response.text.prefix(160))")
            }
        }
        let ready = try server.send("GET", "/readyz").json()
        let faults = ready["storeFaults"]?.arrayValue ?? []
        if !faults.contains(where: { $0["tenant"] == "acme" && $0["model"] == "ledger" && $0["problem"] == "urn:cartograph:problem:store-corrupt" }) {
            wrongAnswers.append("seed \(seed), offset \(offset): /readyz does not list acme/ledger: \(ready)")
        }
        // The tenant's other model, the list of its models and the other tenant's ledger are served.
        let notes = try server.send("GET", "/v1/tenants/acme/models/notes/entities/Note/objects?count=true", token: ledgers.acme)
        if notes.status != 200 || (try? notes.json()["total"]) != 2 {
            wrongAnswers.append("seed \(seed), offset \(offset): acme's notes answered \(notes.status) \(notes.text.prefix(160))")
        }
        let models = try server.send("GET", "/v1/tenants/acme/models", token: ledgers.acme)
        let listed = (try? models.json()["items"]?.arrayValue) ?? nil
        if models.status != 200 || listed?.first(where: { $0["name"] == "notes" })?["version"] != 1
            || listed?.first(where: { $0["name"] == "ledger" })?["problem"] != "urn:cartograph:problem:store-corrupt" {
            wrongAnswers.append("seed \(seed), offset \(offset): acme's models answered \(models.status) \(models.text.prefix(200))")
        }
        let otherLedger = try server.send("GET", "/v1/tenants/other/models/ledger/entities/Entry/objects?count=true&limit=1", token: ledgers.other)
        if otherLedger.status != 200 || (try? otherLedger.json()["total"]) != .number(JSONNumber(Int64(Ledgers.entryCount))) {
            wrongAnswers.append("seed \(seed), offset \(offset): other's ledger answered \(otherLedger.status) \(otherLedger.text.prefix(160))")
        }
        let otherWrite = try server.sendJSON("POST", "/v1/tenants/other/models/ledger/mappings/entries/payloads",
                                             entries(from: 20_000, count: 1), token: ledgers.other)
        if otherWrite.status != 200 {
            wrongAnswers.append("seed \(seed), offset \(offset): a write to other's ledger answered \(otherWrite.status) \(otherWrite.text.prefix(160))")
        }
        // Nothing was written into the damaged file, nor into a log to be copied into it.
        let logBytes = (try? FileManager.default.attributesOfItem(atPath: file.path + "-wal")[.size] as? NSNumber)?.intValue ?? 0
        if try Data(contentsOf: file) != damagedBytes || logBytes != 0 {
            wrongAnswers.append("seed \(seed), offset \(offset): the damaged file was written to (its log holds \(logBytes) bytes)")
        }
    }
}

extension DamagedStoreTests {
    /// `cartograph check-store file`: its exit status and the lines it printed.
    private func checkStore(_ file: URL) throws -> (status: Int32, lines: [String]) {
        let (status, stdout, _) = try LiveServer.runCommand(["check-store", file.path])
        return (status, stdout.split(separator: "\n").map(String.init))
    }

    /// The pages of `tree` (a table or index) in `file`, as SQLite's dbstat lists them.
    private func pages(of tree: String, in file: URL) throws -> [Int64] {
        let connection = try SQLiteConnection(path: file.path, readOnly: true)
        return try connection.rows("SELECT pageno FROM dbstat WHERE name = ? ORDER BY pageno", [.text(tree)]).compactMap { $0.first?.integerValue }
    }

    @Test func R_S12_checkStoreNamesWhatIsDamaged() throws {
        let ledgers = try Ledgers()
        let file = try ledgers.closedLedgerFile()
        #expect(try checkStore(file) == (0, ["\(file.path): ok"]))
        let pristine = try Data(contentsOf: file)

        // One page in the middle of the objects' table: named, and nothing else is.
        let entryPages = try pages(of: "Entry", in: file)
        try #require(entryPages.count > 4)
        let page = Int(entryPages[entryPages.count / 2])
        let handle = try FileHandle(forUpdating: file)
        var random = SeededRandom(seed: 7)
        try handle.seek(toOffset: UInt64((page - 1) * 4_096))
        handle.write(Data((0..<4_096).map { _ in UInt8.random(in: .min ... .max, using: &random) }))
        try handle.close()
        let (status, lines) = try checkStore(file)
        #expect(status == 1)
        let damaged = lines.filter { $0.hasPrefix("\(file.path): damaged: ") }
        #expect(damaged.count == 1 && damaged.first?.contains("table 'Entry' (the model's objects and relationships): ") == true, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("\(file.path): sqlite: ") && $0.contains("\(page)") }, "SQLite's finding names the page: \(lines)")

        // The server opens it (the page lies off the edges opening reads); the first read that reaches the page
        // answers store-corrupt, and from then on every route of the model does.
        let base = "/v1/tenants/acme/models/ledger"
        #expect(try ledgers.server.send("GET", base, token: ledgers.acme).status == 200)
        let list = try ledgers.server.send("GET", base + "/entities/Entry/objects?limit=1000", token: ledgers.acme)
        #expect(list.status == 503)
        #expect(try list.json()["type"] == "urn:cartograph:problem:store-corrupt", "\(list.text)")
        let schema = try ledgers.server.send("GET", base, token: ledgers.acme)
        #expect(schema.status == 503)
        #expect(try schema.json()["type"] == "urn:cartograph:problem:store-corrupt", "\(schema.text)")

        // The first page damaged after the header: nothing can be found, and check-store says so. The server's
        // open above wrote into the store's log (R-D7's instance id): the store is closed and its log dropped
        // before the copy is put back.
        ledgers.server.application.stores.closeStore(tenant: "acme", model: "ledger")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file.path + suffix) }
        try pristine.write(to: file)
        try overwrite(file, from: 100, seed: 7)
        let (schemaStatus, schemaLines) = try checkStore(file)
        #expect(schemaStatus == 1)
        #expect(schemaLines.count == 1 && schemaLines.first?.hasPrefix("\(file.path): damaged: its schema (the file's first page), so nothing in it can be found: ") == true,
                "\(schemaLines)")

        // The model's row lost (its index's cells overwritten): the bookkeeping and the index are named.
        try pristine.write(to: file)
        let metaIndex = try #require(try pages(of: "sqlite_autoindex__cartograph_meta_1", in: file).first)
        try overwrite(file, from: Int(metaIndex) * 4_096 - 1_024, seed: 27, count: 1_024)
        let (metaStatus, metaLines) = try checkStore(file)
        #expect(metaStatus == 1)
        #expect(metaLines.contains { $0.hasPrefix("\(file.path): damaged: the store's bookkeeping") }, "\(metaLines)")
        #expect(metaLines.contains { $0.contains("index 'sqlite_autoindex__cartograph_meta_1' of table '_cartograph_meta'") }, "\(metaLines)")
    }
}
