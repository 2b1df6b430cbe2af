// Hostile input over the real server (R-S1, R-S2, R-Q2). `HostileInputLiveTests` checks the refusals
// libmicrohttpd's side makes: bodies over the limit, announced or streamed (the others are in
// HostileInputTests, in process). `HostileInputSweepLiveTests` sends
// hostile strings in every user-supplied field of every route to one server holding two tenants and
// checks that nothing failed (no 5xx; every 4xx an RFC 9457 problem), that hostile values stored as
// data come back byte for byte, that the victim tenant is exactly as before, that no file appeared
// outside the data directory, and that every SQLite file passes `PRAGMA integrity_check`.
import Foundation
import Testing
import CartographCore
import CartographHTTP
import CartographStore
import CartographTesting

@Suite(.serialized) struct HostileInputLiveTests {
    @Test func R_S2_bodyOverTheLimitIs413BeforeItIsRead() throws {
        try withLiveServer { server in
            // Content-Length announces 70 MiB against the 64 MiB default: refused from the headers alone.
            let announced = try server.client.send(
                "POST", "/v1/tenants", headers: [("Content-Type", "application/json"), ("Content-Length", String(70 << 20))],
                body: [], token: server.adminToken)
            #expect(announced.status == 413)
            #expect(try announced.json()["detail"]?.stringValue?.contains("67108864") == true)
            #expect(try server.client.send("GET", "/healthz").status == 200)
        }
    }

    @Test func R_S2_streamedBodyOverTheLimitIs413() throws {
        try withLiveServer(arguments: ["--max-body-bytes", "65536"]) { server in
            // Chunked upload with no Content-Length: the limit is enforced while the body streams in.
            let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 32 * 1024)
            var request = Array("POST /v1/tenants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(server.adminToken)\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".utf8)
            for _ in 0..<3 { request += Array("8000\r\n".utf8) + chunk + Array("\r\n".utf8) }
            request += Array("0\r\n\r\n".utf8)
            let response = try server.client.sendRaw(request)
            #expect(response.status == 413)
            #expect(try response.json()["status"] == 413)
            #expect(try server.client.send("GET", "/v1/tenants", token: server.adminToken).json()["items"] == [])
        }
    }

    @Test func seventyMiBBodyIsRefusedAndServerStaysHealthy() throws {
        try withLiveServer { server in
            let body = [UInt8](repeating: UInt8(ascii: " "), count: 70 << 20)
            let response = try server.client.send("POST", "/v1/tenants", headers: [("Content-Type", "application/json")],
                                                  body: body, token: server.adminToken)
            #expect(response.status == 413)
            #expect(try server.client.send("GET", "/healthz").json()["status"] == "ok")
        }
    }
}

/// The sweep's hostile strings: SQL injection (including ATTACH, which would create a file), path
/// traversal, NULs, backslashes, long strings, tricky Unicode, and SQLite's and Cartograph's own names.
enum HostileStrings {
    static let all: [String] = [
        "'; DROP TABLE x; --",
        "\" OR 1=1 --",
        "x\" ; ATTACH DATABASE '/tmp/pwn' AS p; --",
        "x'); ATTACH DATABASE 'pwn-relative' AS q; --",
        "1; SELECT * FROM _cartograph_changes",
        "../../etc/passwd",
        "..%2F..%2Fother",
        "..",
        "%00",
        "a\u{0}b",
        "\u{0}",
        "..\\..\\windows\\system.ini",
        "\\'\\\"\\\\",
        "\u{202E}gnp.exe\u{200F}\u{200E}",
        "🗺️💥👩‍👩‍👧",
        "e\u{301}\u{301}\u{301}",
        "select",
        "rowid",
        "_cartograph_changes",
        "sqlite_master",
        "a]b",
        "[x]",
        "`x`",
        "$where",
        "@metadata.header.authorization",
        "name == 'x' OR TRUEPREDICATE",
        "",
        " ",
        String(repeating: "A", count: 4_000),
        String(repeating: "ü'\"", count: 600),
    ]

    /// Files the ATTACH strings above would create (the relative one in the server's working directory).
    static let attachTargets = ["/tmp/pwn", FileManager.default.currentDirectoryPath + "/pwn-relative"]

    /// A value too long for a request head (100 KB), sent only in bodies.
    static let veryLong = String(repeating: "x'\"; --\u{0}é", count: 10_000)

    /// Printable ASCII of 1...128 bytes: what a server echoes as `X-Request-Id`.
    static func isEchoableRequestID(_ text: String) -> Bool {
        (1...128).contains(text.utf8.count) && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// A key that a payload can carry as it is: not a key path (no '.') and not `@`-prefixed.
    static func isPlainKey(_ text: String) -> Bool { !text.isEmpty && !text.contains(".") && !text.hasPrefix("@") }

    /// The text as one path segment or query value: every byte but RFC 3986's unreserved characters
    /// percent-encoded.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return out
    }

    /// The text as it is, when it can stand in a request line (printable ASCII without `?`, `#`, and in
    /// a query `&`, `=`, `+`) and differs from its encoding: raw `../`, `%00` and `%2F` reach the router.
    static func raw(_ text: String, inQuery: Bool = false) -> String? {
        let excluded: Set<UInt8> = inQuery ? [0x3F, 0x23, 0x26, 0x3D, 0x2B] : [0x3F, 0x23]
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x21...0x7E).contains($0) && !excluded.contains($0) }),
              text != percentEncoded(text) else { return nil }
        return text
    }

    /// Whether `json` holds `text`, byte for byte (Swift's `==` on strings is canonical equivalence,
    /// which would call "é" and "e\u{301}" equal), as a string value.
    static func same(_ json: JSONValue?, _ text: String) -> Bool {
        guard let string = json?.stringValue else { return false }
        return Array(string.utf8) == Array(text.utf8)
    }

    /// Whether `text` occurs, byte for byte, as a string or a member name anywhere in `json`.
    static func contains(_ json: JSONValue, _ text: String) -> Bool {
        switch json {
        case .string(let string): return Array(string.utf8) == Array(text.utf8)
        case .array(let items): return items.contains { contains($0, text) }
        case .object(let members): return members.contains { Array($0.key.utf8) == Array(text.utf8) || contains($0.value, text) }
        default: return false
        }
    }
}

@Suite(.serialized) struct HostileInputSweepLiveTests {
    /// Every route (`Application.servedRoutes`), every path parameter, query parameter, header, model and
    /// mapping document field and payload value and key, with each of `HostileStrings.all`; alpha's
    /// keys attack, bravo is the victim.
    @Test func R_S1_R_Q2_hostileStringsInEveryFieldOfEveryRouteFailCleanlyAndReachNothingElse() throws {
        let server = try LiveServer()
        defer { server.stop(); try? FileManager.default.removeItem(at: server.dataDirectory) }
        let attachTargetsBefore = HostileStrings.attachTargets.map { try? FileManager.default.attributesOfItem(atPath: $0)[.modificationDate] as? Date }
        let sweep = try HostileSweep(server: server)
        let bravoBefore = try sweep.bravoSnapshot()
        let filesBefore = HostileSweep.files(under: server.dataDirectory)

        try sweep.payloadValuesRoundTrip()
        try sweep.modelDocuments()
        try sweep.mappingDocuments()
        try sweep.headers()
        try sweep.queryParameters()
        try sweep.crossTenantAttempts()
        try sweep.pathSegments()

        // The one answer that is not a problem document: a request head over libmicrohttpd's 32 KiB
        // memory pool gets its own HTML 414 (request line) or 431 (header field). The server goes on.
        let long = String(repeating: "A", count: 40_000)
        #expect(try server.client.send("GET", "/v1/tenants/alpha/models/" + long, token: sweep.alphaKey).status == 414)
        #expect(try server.client.send("GET", "/v1/tenants/alpha/models", headers: [("X-Request-Id", long)], token: sweep.alphaKey).status == 431)
        #expect(try server.client.send("GET", "/healthz").json()["status"] == "ok")

        #expect(sweep.failures.isEmpty, Comment(rawValue: "\(sweep.failures.count) of \(sweep.requests) requests broke a rule:\n"
                                                + sweep.failures.prefix(50).joined(separator: "\n")))
        let bravoAfter = try sweep.bravoSnapshot()
        #expect(bravoBefore.keys.sorted().filter { bravoBefore[$0] != bravoAfter[$0] } == [], "bravo's answers changed")
        #expect(try server.client.send("GET", "/v1/tenants/bravo/models", token: sweep.bravoReadKey).json()["items"]?.arrayValue?.count == 2)
        #expect(!server.log.contains("request failed"), "the server logged a failure")
        #expect(server.stop() == 0)

        // Files: only alpha's stores may be new; bravo's are the same files; nothing outside the data directory.
        let filesAfter = HostileSweep.files(under: server.dataDirectory)
        let unexpected = filesAfter.subtracting(filesBefore).filter { path in
            let parts = path.split(separator: "/").map(String.init)
            guard parts.count == 4, parts[0...2] == ["data", "tenants", "alpha"] else { return true }
            let name = parts[3].replacingOccurrences(of: "-wal", with: "").replacingOccurrences(of: "-shm", with: "")
            return !(name.hasSuffix(".sqlite") && Names.isResourceName(String(name.dropLast(7))))
        }
        #expect(unexpected.sorted() == [], "files other than alpha's stores appeared")
        let bravoStores = { (files: Set<String>) in files.filter { $0.hasPrefix("data/tenants/bravo/") && $0.hasSuffix(".sqlite") } }
        #expect(bravoStores(filesAfter) == bravoStores(filesBefore))
        #expect(bravoStores(filesAfter).count == 2)
        for (target, before) in zip(HostileStrings.attachTargets, attachTargetsBefore) {
            let after = try? FileManager.default.attributesOfItem(atPath: target)[.modificationDate] as? Date
            #expect(after == before, "\(target) was created or written")
        }

        // Every SQLite file is intact, and bravo's stores hold the tables of their model and nothing else.
        var tablesByStore: [String: [String]] = [:]
        for path in filesAfter.filter({ $0.hasSuffix(".sqlite") }).sorted() {
            let connection = try SQLiteConnection(path: server.dataDirectory.appendingPathComponent(path).path, readOnly: true)
            #expect(try connection.rows("PRAGMA integrity_check") == [[.text("ok")]], "\(path)")
            tablesByStore[path] = try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").compactMap { $0.first?.textValue }
        }
        let vaultTables = try #require(tablesByStore["data/tenants/alpha/vault.sqlite"])
        #expect(vaultTables.contains("Item") && vaultTables.contains("Owner"))
        #expect(tablesByStore["data/tenants/bravo/vault.sqlite"] == vaultTables)
        #expect(tablesByStore["data/tenants/bravo/ledger.sqlite"] == vaultTables)
        print("hostile sweep: \(HostileStrings.all.count) hostile strings, \(sweep.requests) requests, \(sweep.failures.count) broke a rule; "
              + "\(sweep.acceptedModels) models and \(sweep.acceptedMappings) mappings holding one were accepted, read back and used; "
              + "\(tablesByStore.count) SQLite files intact")
        #expect(sweep.acceptedModels > 0 && sweep.acceptedMappings > 0, "the round trips of accepted documents ran")
    }
}

/// One server with two tenants: `alpha`, whose keys send the hostile requests, and `bravo`, the
/// victim. Every answer is checked as it arrives (`send`); what breaks a rule is collected in `failures`.
final class HostileSweep {
    let server: LiveServer
    let client: RawHTTPClient
    let alphaKey: String
    let alphaReadKeyID: String
    let bravoKey: String
    let bravoReadKey: String
    let bravoReadKeyID: String
    /// Text only bravo's data holds: an answer to alpha that contains any of it is a leak.
    let bravoSecrets: [String]
    private(set) var requests = 0
    private(set) var failures: [String] = []
    /// Model and mapping documents holding a hostile string that were accepted, then read back and used.
    private(set) var acceptedModels = 0
    private(set) var acceptedMappings = 0

    static let alphaVault = "/v1/tenants/alpha/models/vault"

    /// Both tenants' model (`vault`, and `ledger` a copy): items identified by a string `code`, with an
    /// owner; every attribute annotated so that the entity payload route and `shape=json` work.
    static let model: JSONValue = ["entities": [
        ["name": "Item", "userInfo": ["identityAttributes": "code"], "attributes": [
            ["name": "code", "type": "string", "userInfo": ["JSONKeyPath": "code"]],
            ["name": "note", "type": "string", "userInfo": ["JSONKeyPath": "note"]],
            ["name": "rank", "type": "integer64", "userInfo": ["JSONKeyPath": "rank"]],
        ], "relationships": [["name": "owner", "destination": "Owner", "inverse": "items", "userInfo": ["JSONKeyPath": "owner"]]]],
        ["name": "Owner", "attributes": [
            ["name": "ownerID", "type": "integer64", "userInfo": ["JSONKeyPath": "id"]],
            ["name": "name", "type": "string", "userInfo": ["JSONKeyPath": "name"]],
        ], "relationships": [["name": "items", "destination": "Item", "toMany": true, "inverse": "owner"]]],
    ]]

    static let ownerMapping: JSONValue = ["entity": "Owner", "attributes": ["id": "ownerID", "name": "name"]]

    static let itemsMapping: JSONValue = ["entity": "Item", "keyPath": "items", "attributes": ["code", "note", "rank"],
                                          "relationships": [["from": "owner", "to": "owner", "mapping": ownerMapping]]]

    init(server: LiveServer) throws {
        self.server = server
        self.client = server.client
        let admin = server.adminToken
        alphaKey = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "alpha"], token: admin).json()["apiKey"]?.stringValue)
        bravoKey = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "bravo"], token: admin).json()["apiKey"]?.stringValue)
        alphaReadKeyID = try #require(try client.sendJSON("POST", "/v1/tenants/alpha/keys", ["scope": "read"], token: alphaKey).json()["id"]?.stringValue)
        let bravoRead = try client.sendJSON("POST", "/v1/tenants/bravo/keys", ["scope": "read"], token: bravoKey).json()
        bravoReadKey = try #require(bravoRead["apiKey"]?.stringValue)
        bravoReadKeyID = try #require(bravoRead["id"]?.stringValue)
        for (tenant, key) in [("alpha", alphaKey), ("bravo", bravoKey)] {
            for model in ["vault", "ledger"] {
                let base = "/v1/tenants/\(tenant)/models/\(model)"
                try #require(try client.sendJSON("PUT", base, Self.model, token: key).status == 201)
                try #require(try client.sendJSON("PUT", base + "/mappings/items", Self.itemsMapping, token: key).status == 201)
            }
        }
        // bravo stores secrets, one of them under an identity alpha will also use.
        let marker = "bravo-secret-" + UUID().uuidString
        bravoSecrets = [marker, bravoKey, bravoReadKey]
        for model in ["vault", "ledger"] {
            let payload: JSONValue = ["items": [
                ["code": "b1", "note": .string("\(marker) note"), "rank": 1, "owner": ["id": 1, "name": .string("\(marker) owner")]],
                ["code": "'; DROP TABLE x; --", "note": .string("\(marker) \(model)"), "rank": 2, "owner": ["id": 1]],
            ]]
            try #require(try client.sendJSON("POST", "/v1/tenants/bravo/models/\(model)/mappings/items/payloads", payload, token: bravoKey).status == 200)
        }
        try #require(try client.sendJSON("POST", Self.alphaVault + "/mappings/items/payloads",
                                         ["items": [["code": "a1", "note": "alpha", "rank": 1, "owner": ["id": 1, "name": "alpha"]]]],
                                         token: alphaKey).status == 200)
    }

    // MARK: Sending and checking

    /// Sends one request and checks what every answer must satisfy: no 5xx (nor 1xx/3xx), every 4xx an
    /// RFC 9457 problem document, an `X-Request-Id`, and for alpha none of bravo's secrets. Nil when
    /// no answer came.
    @discardableResult
    func send(_ method: String, _ target: String, headers: [(String, String)] = [], json: JSONValue? = nil, body: [UInt8]? = nil,
              token: String?, _ what: @autoclosure () -> String = "") -> RawResponse? {
        requests += 1
        let request = "\(method) \(target.prefix(160))\(target.count > 160 ? "…" : "") \(what())"
        let response: RawResponse
        do {
            response = try client.send(method, target, headers: (json == nil ? [] : [("Content-Type", "application/json")]) + headers,
                                       body: json?.jsonBytes ?? body, token: token)
        } catch {
            failures.append("no answer to \(request): \(error)")
            return nil
        }
        let status = response.status
        if !(200..<300).contains(status) && !(400..<500).contains(status) {
            failures.append("\(status) for \(request): \(response.text.prefix(300))")
        } else if status >= 400 {
            let problem = try? response.json()
            if response.header("Content-Type") != "application/problem+json" || problem?["status"] != .number(JSONNumber(status))
                || problem?["type"]?.stringValue?.hasPrefix("urn:cartograph:problem:") != true || problem?["title"]?.stringValue == nil {
                failures.append("\(status) without a problem document for \(request)")
            }
        }
        if response.header("X-Request-Id")?.isEmpty != false { failures.append("no X-Request-Id for \(request)") }
        if ![server.adminToken, bravoKey, bravoReadKey].contains(token ?? ""), bravoSecrets.contains(where: response.text.contains) {
            failures.append("bravo's data in the answer to \(request)")
        }
        return response
    }

    /// Records a broken expectation about the data (the request itself was answered).
    func fail(_ message: String) { failures.append(message) }

    /// `status` must be one of `expected`.
    func expectStatus(_ response: RawResponse?, _ expected: Set<Int>, _ what: @autoclosure () -> String) {
        // A status outside 2xx and 4xx is already recorded by `send`.
        guard let response, !expected.contains(response.status), (200..<500).contains(response.status) else { return }
        failures.append("\(what()): \(response.status), expected \(expected.sorted()): \(response.text.prefix(300))")
    }

    /// JSON for a failure message (at most 300 characters).
    func describe(_ json: JSONValue?) -> String {
        json.map { String(String(decoding: $0.jsonBytes, as: UTF8.self).prefix(300)) } ?? "nothing"
    }

    /// The answer's JSON when it is a 2xx.
    func json(_ response: RawResponse?) -> JSONValue? {
        guard let response, (200..<300).contains(response.status) else { return nil }
        return try? response.json()
    }

    // MARK: The victim's state

    /// What the admin sees of bravo: tenant, keys, models, mappings, objects and change feeds, as bytes.
    func bravoSnapshot() throws -> [String: [UInt8]] {
        var paths = ["/v1/tenants/bravo", "/v1/tenants/bravo/keys", "/v1/tenants/bravo/models"]
        for model in ["vault", "ledger"] {
            let base = "/v1/tenants/bravo/models/\(model)"
            paths += [base, base + "/mappings", base + "/mappings/items", base + "/changes?since=0&limit=1000", base + "/entities/Item/mapping",
                      base + "/entities/Item/objects?limit=1000&orderBy=code&include=owner&count=true",
                      base + "/entities/Owner/objects?limit=1000&orderBy=ownerID&include=items"]
        }
        var snapshot: [String: [UInt8]] = [:]
        for path in paths {
            let response = try client.send("GET", path, token: server.adminToken)
            try #require(response.status == 200, "\(path): \(response.text)")
            snapshot[path] = response.body
        }
        #expect(snapshot["/v1/tenants/bravo/keys"].map { String(decoding: $0, as: UTF8.self).contains(bravoReadKeyID) } == true)
        return snapshot
    }

    /// Every file and directory below `root`, as relative paths.
    static func files(under root: URL) -> Set<String> {
        var paths = Set<String>()
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        while let path = enumerator?.nextObject() as? String { paths.insert(path) }
        return paths
    }
}

// MARK: - The phases

extension HostileSweep {
    /// Hostile strings stored as identities and values come back byte for byte: in the POST's answer,
    /// found by predicate argument with the owner embedded, by key in the path, exported (`shape=json`),
    /// in the change feed, and through the entity payload route. A predicate built by pasting the string
    /// between quotes either does not parse or matches that one object. Unmapped hostile keys are
    /// ignored; hostile values for an integer are 422 with their pointer.
    func payloadValuesRoundTrip() throws {
        let base = Self.alphaVault
        let since = json(send("GET", base + "/changes?since=0&limit=1000", token: alphaKey))?["next"] ?? 0
        for (index, value) in HostileStrings.all.enumerated() {
            let what = String(reflecting: value).prefix(60)
            let payload: JSONValue = ["items": [["code": .string(value), "note": .string(value), "rank": .number(JSONNumber(index)),
                                                 "owner": ["id": .number(JSONNumber(1_000 + index)), "name": .string(value)]]]]
            let posted = json(send("POST", base + "/mappings/items/payloads", json: payload, token: alphaKey, "value \(what)"))
            if !HostileStrings.same(posted?["objects"]?.arrayValue?.first?["key"], value) { fail("POST \(what): \(describe(posted))") }

            let query: JSONValue = ["where": "code == $c", "arguments": ["c": .string(value)], "include": "owner"]
            let found = json(send("POST", base + "/entities/Item/query", json: query, token: alphaKey))?["items"]?.arrayValue ?? []
            if found.count != 1 || !HostileStrings.same(found.first?["code"], value) || !HostileStrings.same(found.first?["note"], value)
                || !HostileStrings.same(found.first?["owner"]?["name"], value) || found.first?["rank"] != .number(JSONNumber(index)) {
                fail("query by argument \(what): \(describe(.array(found)))")
            }

            // Every key is reached percent-encoded, '/' (%2F) and NUL (%00) included.
            let byKey = send("GET", base + "/entities/Item/objects/" + HostileStrings.percentEncoded(value) + "?shape=json", token: alphaKey)
            let object = json(byKey)
            if !HostileStrings.same(object?["code"], value) || !HostileStrings.same(object?["note"], value) || object?["_id"] != nil {
                fail("GET by key \(what) (shape=json): \(describe(object))")
            }

            let pasted = send("GET", base + "/entities/Item/objects?where=" + HostileStrings.percentEncoded("note == '\(value)'"), token: alphaKey)
            if pasted?.status == 200, let items = json(pasted)?["items"]?.arrayValue, items.count > 1 {
                fail("a pasted predicate with \(what) matched \(items.count) objects")
            }
            expectStatus(pasted, [200, 400], "pasted predicate \(what)")

            // The entity payload route (the model's annotations), and hostile keys no mapping names.
            let annotated = send("POST", base + "/entities/Item/payloads", json: [["code": .string("annotated-\(index)"), "note": .string(value)]],
                                 token: alphaKey)
            expectStatus(annotated, [200], "entity payload \(what)")
            let unmapped: JSONValue = ["items": [.object(JSONObject([("code", .string("unmapped-\(index)")), (value, .string(value))]))]]
            let ignored = json(send("POST", base + "/mappings/items/payloads", json: unmapped, token: alphaKey, "key \(what)"))
            if ignored?["inserted"] != 1 { fail("a payload with the key \(what): \(describe(ignored))") }
            let refused = send("POST", base + "/mappings/items/payloads", json: ["items": [["code": "a1", "rank": .string(value)]]], token: alphaKey)
            expectStatus(refused, [422], "rank \(what)")
            if let refused, refused.status == 422,
               try refused.json()["errors"]?.arrayValue?.contains(where: { $0["pointer"] == "/items/0/rank" }) != true {
                fail("rank \(what): no pointer to /items/0/rank in \(refused.text.prefix(300))")
            }
        }

        // A value too long for a request head, with NULs and quotes, round-trips through a body.
        let long = json(send("POST", base + "/mappings/items/payloads", json: ["items": [["code": "long", "note": .string(HostileStrings.veryLong)]]],
                             token: alphaKey))
        let longBack = json(send("POST", base + "/entities/Item/query", json: ["where": "code == 'long'"], token: alphaKey))
        if long?["inserted"] != 1 || !HostileStrings.same(longBack?["items"]?.arrayValue?.first?["note"], HostileStrings.veryLong) {
            fail("the 100 KB value did not round-trip")
        }

        // The change feed carries every value as stored.
        let feed = json(send("GET", base + "/changes?limit=1000&since=\(since.numberValue?.text ?? "0")", token: alphaKey))?["changes"]?.arrayValue ?? []
        for value in HostileStrings.all
        where !feed.contains(where: { $0["entity"] == "Item" && HostileStrings.same($0["key"], value) && HostileStrings.same($0["object"]?["note"], value) }) {
            fail("no change-feed upsert with the key and note \(String(reflecting: value).prefix(60))")
        }
        for index in HostileStrings.all.indices where !feed.contains(where: { $0["key"] == .string("annotated-\(index)") }) {
            fail("no change-feed upsert for annotated-\(index)")
        }
    }

    /// Hostile strings in every name and string of a model document (JSON and Core Data XML): 422 or
    /// 400, or stored as sent — then the model reads back the same, and an object maps and queries
    /// through the entity that holds the string.
    func modelDocuments() throws {
        let path = "/v1/tenants/alpha/models/hostile"
        for value in HostileStrings.all {
            let h = JSONValue.string(value)
            let what = String(reflecting: value).prefix(60)
            let attribute: (JSONValue) -> JSONValue = { ["name": "x", "type": "string", "userInfo": $0] }
            let variants: [(field: String, extra: JSONValue, top: [(String, JSONValue)])] = [
                ("entity name", Self.extra(name: h), []),
                ("attribute name", Self.extra(attributes: [["name": h, "type": "string"]]), []),
                ("attribute type", Self.extra(attributes: [["name": "x", "type": h]]), []),
                ("attribute default", Self.extra(attributes: [["name": "x", "type": "string", "default": h]]), []),
                ("attribute regex", Self.extra(attributes: [["name": "x", "type": "string", "regex": h]]), []),
                ("JSONKeyPath", Self.extra(attributes: [attribute(["JSONKeyPath": h])]), []),
                ("JSONTransformerName", Self.extra(attributes: [attribute(["JSONKeyPath": "x", "JSONTransformerName": h])]), []),
                ("relationship name", Self.extra(relationships: [["name": h, "destination": "Item"]]), []),
                ("relationship destination", Self.extra(relationships: [["name": "r", "destination": h]]), []),
                ("relationship inverse", Self.extra(relationships: [["name": "r", "destination": "Item", "inverse": h]]), []),
                ("delete rule", Self.extra(relationships: [["name": "r", "destination": "Item", "deleteRule": h]]), []),
                ("parent", Self.extra(parent: h), []),
                ("identityAttributes", Self.extra(userInfo: ["identityAttributes": h]), []),
                ("entityMapperName", Self.extra(userInfo: ["entityMapperName": h]), []),
                ("value transformer name", Self.extra(), [("valueTransformers", .object(JSONObject([(value, ["type": "map", "map": ["a": "b"]])])))]),
                ("value transformer type", Self.extra(), [("valueTransformers", ["T": ["type": h]])]),
                ("value transformer map", Self.extra(), [("valueTransformers", ["T": ["type": "map", "map": .object(JSONObject([(value, h)]))]])]),
                ("entity mapper", Self.extra(), [("entityMappers", .object(JSONObject([(value, ["keyPath": h, "map": .object(JSONObject([(value, "Extra")]))])])))]),
                ("entity mapper target", Self.extra(), [("entityMappers", ["M": ["keyPath": "kind", "map": ["a": h]]])]),
                ("dictionary transformer", Self.extra(), [("dictionaryTransformers", .object(JSONObject([(value, [["op": "copy", "from": h, "to": h]])])))]),
                ("dictionary transformer op", Self.extra(), [("dictionaryTransformers", ["D": [["op": h]]])]),
                ("option", Self.extra(), [("options", .object(JSONObject([(value, true)])))]),
                ("member", Self.extra(), [(value, 1)]),
            ]
            for variant in variants {
                guard case .object(var document) = Self.model, case .array(let entities)? = document["entities"] else { continue }
                document["entities"] = .array(entities + [variant.extra])
                for (key, member) in variant.top { document[key] = member }
                let response = send("PUT", path, json: .object(document), token: alphaKey, "\(variant.field) \(what)")
                try registered(response, path: path, entity: variant.extra["name"]?.stringValue ?? "", holding: value, "\(variant.field) \(what)")
            }
            for xml in [Self.coreData(entity: value, attribute: "x"), Self.coreData(entity: "Extra", attribute: value)] {
                let answer = send("PUT", path, headers: [("Content-Type", "application/xml")], body: Array(xml.utf8), token: alphaKey, "Core Data \(what)")
                expectStatus(answer, [201, 422], "Core Data model naming \(what)")
                if answer?.status == 201 { expectStatus(send("DELETE", path, token: alphaKey), [204], "DELETE hostile model") }
            }
        }
        // Names SQLite itself reserves, or that it would not tell apart (its identifiers ignore case).
        for (what, entities) in [
            ("an entity named sqlite_master", [Self.extra(name: "sqlite_master")]),
            ("an entity named SQLITE_sequence", [Self.extra(name: "SQLITE_sequence")]),
            ("entities Extra and extra", [Self.extra(), Self.extra(name: "extra")]),
            ("attributes x and X", [Self.extra(attributes: [["name": "x", "type": "string"], ["name": "X", "type": "string"]])]),
            ("attribute x and relationship X", [Self.extra(attributes: [["name": "x", "type": "string"]], relationships: [["name": "X", "destination": "Item"]])]),
        ] as [(String, [JSONValue])] {
            guard case .object(var document) = Self.model, case .array(let base)? = document["entities"] else { continue }
            document["entities"] = .array(base + entities)
            expectStatus(send("PUT", path, json: .object(document), token: alphaKey, what), [422], what)
        }
        expectStatus(send("GET", path, token: alphaKey), [404], "the hostile model is gone")
    }

    /// After a model registration with a hostile string: a 2xx stored the string exactly, reads back
    /// the same, and its `Extra` entity (when it has a usable name) maps and queries; else 400 or 422.
    private func registered(_ response: RawResponse?, path: String, entity: String, holding value: String, _ what: String) throws {
        guard let response else { return }
        guard (200..<300).contains(response.status) else {
            expectStatus(response, [400, 422], what)
            return
        }
        acceptedModels += 1
        let model = try response.json()
        if !HostileStrings.contains(model, value) { fail("\(what): the normalized model lost the string") }
        if send("GET", path, token: alphaKey)?.body != response.body { fail("\(what): GET differs from the PUT's answer") }
        if Names.isPropertyName(entity) {
            let entityPath = path + "/entities/\(entity)"
            let mapped = json(send("POST", entityPath + "/payloads", json: [["id": 1]], token: alphaKey, what))
            let items = json(send("GET", entityPath + "/objects?where=id%20==%201&orderBy=-id&count=true", token: alphaKey, what))
            if mapped?["inserted"] != 1 || items?["total"] != 1 { fail("\(what): an object did not map or query: \(describe(mapped)) \(describe(items))") }
        }
        expectStatus(send("DELETE", path, token: alphaKey), [204], "DELETE after \(what)")
    }

    /// An entity `Extra` with an annotated identity `id`, to which a variant adds its hostile part.
    static func extra(name: JSONValue = "Extra", attributes: [JSONValue] = [], relationships: [JSONValue] = [], parent: JSONValue? = nil,
                      userInfo: JSONValue = ["identityAttributes": "id"]) -> JSONValue {
        var entity = JSONObject([("name", name), ("userInfo", userInfo),
                                 ("attributes", .array([["name": "id", "type": "integer64", "userInfo": ["JSONKeyPath": "id"]]] + attributes)),
                                 ("relationships", .array(relationships))])
        if let parent { entity["parent"] = parent }
        return .object(entity)
    }

    /// A Core Data `contents` document with one entity and one attribute, names XML-escaped.
    static func coreData(entity: String, attribute: String) -> String {
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "'", with: "&apos;")
        }
        return """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="\(escaped(entity))"><attribute name="\(escaped(attribute))" attributeType="String"/></entity>
            </model>
            """
    }
}

extension HostileSweep {
    /// Hostile strings in every field of a mapping document: 422 (400), or stored as sent — then the
    /// mapping reads back the same and a payload maps through it: a hostile key path or source key
    /// carries its value into the store, and `@metadata.header.authorization` carries nothing.
    func mappingDocuments() throws {
        let path = Self.alphaVault + "/mappings/hostile"
        for (index, value) in HostileStrings.all.enumerated() {
            let h = JSONValue.string(value)
            let what = String(reflecting: value).prefix(60)
            let owner = Self.ownerMapping
            let byRank: JSONValue = ["rank": "ownerID"]
            let variants: [(field: String, members: [(String, JSONValue)])] = [
                ("entity", [("entity", h)]),
                ("keyPath", [("keyPath", h)]),
                ("source key", [("attributes", .object(JSONObject([("code", "code"), (value, "note")])))]),
                ("destination", [("attributes", ["code": "code", "note": h])]),
                ("attribute list", [("attributes", ["code", h])]),
                ("transformer", [("attributes", ["code": "code", "note": ["to": "note", "transformer": h]])]),
                ("identificationAttributes", [("identificationAttributes", [h])]),
                ("identificationPredicate", [("identificationPredicate", h)]),
                ("modificationAttribute", [("modificationAttribute", h)]),
                ("relationship from", [("relationships", [["from": h, "to": "owner", "mapping": owner]])]),
                ("relationship to", [("relationships", [["from": "owner", "to": h, "mapping": owner]])]),
                ("nested entity", [("relationships", [["from": "owner", "to": "owner", "mapping": ["entity": h, "attributes": ["name"]]]])]),
                ("annotated entity", [("relationships", [["from": "owner", "to": "owner", "mapping": ["entity": h, "fromAnnotations": true]]])]),
                ("assignmentPolicy", [("relationships", [["from": "owner", "to": "owner", "assignmentPolicy": h, "mapping": owner]])]),
                ("connection relationship", [("connections", [["relationship": h, "connectedBy": byRank]])]),
                ("connectedBy", [("connections", [["relationship": "owner", "connectedBy": h]])]),
                ("connectedBy source", [("connections", [["relationship": "owner", "connectedBy": .object(JSONObject([(value, "ownerID")]))]])]),
                ("connectedBy destination", [("connections", [["relationship": "owner", "connectedBy": ["rank": h]]])]),
                ("destinationPredicate", [("connections", [["relationship": "owner", "connectedBy": byRank, "destinationPredicate": h]])]),
                ("sourcePredicate", [("connections", [["relationship": "owner", "connectedBy": byRank, "sourcePredicate": h]])]),
                ("connection keyPath", [("connections", [["relationship": "owner", "keyPath": h]])]),
                ("deletionPredicate", [("deletionPredicate", h)]),
                ("deleteMissing scope", [("deleteMissing", ["scope": h, "maxDeletes": 1])]),
                ("dynamic", [("dynamic", ["keyPath": h, "map": .object(JSONObject([(value, ["entity": "Item", "attributes": ["code"]])]))])]),
                ("dictionaryTransformer", [("dictionaryTransformer", h)]),
                ("member", [(value, 1)]),
            ]
            for variant in variants {
                guard case .object(var document) = Self.itemsMapping else { continue }
                for (key, member) in variant.members { document[key] = member }
                let label = "mapping \(variant.field) \(what)"
                guard let response = send("PUT", path, json: .object(document), token: alphaKey, label) else { continue }
                guard (200..<300).contains(response.status) else {
                    expectStatus(response, [400, 422], label)
                    continue
                }
                acceptedMappings += 1
                if !HostileStrings.contains(try response.json(), value) { fail("\(label): the normalized mapping lost the string") }
                if send("GET", path, token: alphaKey)?.body != response.body { fail("\(label): GET differs from the PUT's answer") }
                // A payload through it: the hostile key path or source key carries a value; others map as usual.
                let code = JSONValue.string("mapped-\(index)-\(variant.field)")
                let carried = variant.field == "source key" || variant.field == "keyPath"
                let representation: JSONValue = .object(JSONObject([("code", code), (variant.field == "source key" ? value : "note", h)]))
                let payload: JSONValue = .object(JSONObject([(variant.field == "keyPath" ? value : "items", [representation])]))
                let posted = send("POST", path + "/payloads", json: payload, token: alphaKey, label)
                expectStatus(posted, [200, 409, 422], "payload through \(label)")
                guard carried, HostileStrings.isPlainKey(value) || value == "@metadata.header.authorization" else { continue }
                let stored = json(send("POST", Self.alphaVault + "/entities/Item/query", json: ["where": "code == $c", "arguments": ["c": code]],
                                       token: alphaKey))?["items"]?.arrayValue?.first
                if value.hasPrefix("@metadata.header.") {
                    if stored?["note"] != .null { fail("\(label): the Authorization header was stored: \(describe(stored))") }
                } else if !HostileStrings.same(stored?["note"], value) {
                    fail("\(label): the value did not arrive: \(describe(stored))")
                }
            }
        }
        expectStatus(send("DELETE", path, token: alphaKey), [204], "DELETE the hostile mapping")
    }

    /// Hostile headers: `X-Request-Id` (echoed only when it is short printable ASCII), `Idempotency-Key`
    /// on both payload routes (a replay answers the same bytes), `Authorization` (401) and `Content-Type` (415).
    func headers() throws {
        for (index, value) in HostileStrings.all.enumerated() {
            let what = String(reflecting: value).prefix(60)
            let echoed = send("GET", "/v1/tenants/alpha/models", headers: [("X-Request-Id", value)], token: alphaKey, "X-Request-Id \(what)")
            let id = echoed?.header("X-Request-Id") ?? ""
            if HostileStrings.isEchoableRequestID(value) ? id != value : (id == value || id.isEmpty) {
                fail("X-Request-Id \(what) came back as \(String(reflecting: id).prefix(60))")
            }
            // The server sees a header up to a NUL, without surrounding blanks: empty or over 255 bytes is a 400.
            // A replay answers the same bytes; the key on another route (another request) is a 422.
            let received = String(value.prefix { $0 != "\u{0}" }).trimmingCharacters(in: .whitespaces)
            let valid = (1...255).contains(received.utf8.count)
            let idempotent = [("Idempotency-Key", value)]
            let payload: JSONValue = ["items": [["code": .string("idem-\(index)"), "note": .string(value)]]]
            let first = send("POST", Self.alphaVault + "/mappings/items/payloads", headers: idempotent, json: payload, token: alphaKey, "Idempotency-Key \(what)")
            let again = send("POST", Self.alphaVault + "/mappings/items/payloads", headers: idempotent, json: payload, token: alphaKey, "Idempotency-Key \(what)")
            expectStatus(first, valid ? [200] : [400], "Idempotency-Key \(what)")
            if valid, again?.body != first?.body { fail("Idempotency-Key \(what): the replay answered differently") }
            let elsewhere = send("POST", Self.alphaVault + "/entities/Item/payloads", headers: idempotent, json: [["code": .string("idem-\(index)")]],
                                 token: alphaKey, "Idempotency-Key \(what) on another route")
            expectStatus(elsewhere, valid ? [422] : [400], "Idempotency-Key \(what) on another route")
            let unauthorized = send("GET", "/v1/tenants/alpha/models", headers: [("Authorization", "Bearer " + value)], token: nil, "Bearer \(what)")
            expectStatus(unauthorized, [401], "Bearer \(what)")
            let unsupported = send("PUT", Self.alphaVault + "/mappings/items", headers: [("Content-Type", value)],
                                   body: Self.itemsMapping.jsonBytes, token: alphaKey, "Content-Type \(what)")
            expectStatus(unsupported, [415], "Content-Type \(what)")
        }
    }
}

extension HostileSweep {
    /// The query parameters each route reads (openapi.yaml); every route also gets an unknown one.
    static let queryParameters: [String: [String]] = [
        "GET /v1/tenants/{tenant}/models/{model}/entities/{entity}/objects": ["where", "orderBy", "limit", "cursor", "include", "shape", "count",
                                                                              "facets", "facetLimit"],
        "GET /v1/tenants/{tenant}/models/{model}/entities/{entity}/objects/{key}": ["include", "shape"],
        "DELETE /v1/tenants/{tenant}/models/{model}/entities/{entity}/objects": ["where"],
        "GET /v1/tenants/{tenant}/models/{model}/changes": ["since", "limit", "wait"],
        "PUT /v1/tenants/{tenant}/models/{model}": ["allowDestructive"],
        "POST /v1/tenants/{tenant}/models/{model}/mappings/{mapping}/payloads": ["dryRun", "explain", "snapshot"],
        "POST /v1/tenants/{tenant}/models/{model}/mappings/{mapping}/snapshots/{token}/complete": ["dryRun"],
        "POST /v1/tenants/{tenant}/models/{model}/entities/{entity}/payloads": ["dryRun", "explain"],
    ]

    /// The members of a `POST …/query` body.
    static let queryMembers = ["where", "orderBy", "include", "cursor", "shape", "limit", "count", "arguments", "facets", "facetLimit"]

    /// The members of a `POST …/aggregate` body.
    static let aggregateMembers = ["where", "arguments", "groupBy", "aggregates", "orderBy", "limit"]

    /// A request to `route` that would succeed (or fail for its own reasons) with alpha's own names,
    /// `parameter` replaced by `value` when given. A DELETE aims at a name that does not exist, so the
    /// sweep never deletes what it checks later (the bulk delete takes a predicate instead).
    func target(_ route: Route, replacing parameter: String? = nil, with value: String? = nil) -> String {
        let segments = route.template.split(separator: "/").map(String.init)
        let last = segments.last { $0.hasPrefix("{") }
        return "/" + segments.map { segment -> String in
            guard segment.hasPrefix("{") else { return segment }
            let name = String(segment.dropFirst().dropLast())
            if name == parameter, let value { return value }
            if route.method == "DELETE", segment == last { return "absent" }
            return ["tenant": "alpha", "model": "vault", "mapping": "items", "entity": "Item", "key": "a1", "keyId": alphaReadKeyID, "archiveId": "1"][name] ?? name
        }.joined(separator: "/")
    }

    /// A body each route that takes one accepts (or refuses without side effects).
    static func body(for route: Route) -> JSONValue? {
        switch (route.method, route.template) {
        case (_, _) where route.body == .none: nil
        case ("POST", "/v1/tenants"): ["id": "alpha"]
        case ("PATCH", _): ["limits": .object(JSONObject())]
        case ("POST", let template) where template.hasSuffix("/keys"): ["scope": "none"]
        case ("PUT", let template) where template.hasSuffix("/models/{model}"): model
        case ("PUT", let template) where template.hasSuffix("/mappings/{mapping}"): itemsMapping
        case ("POST", let template) where template.hasSuffix("/mappings/{mapping}/payloads"): ["items": [["code": "a1", "note": "alpha", "rank": 1]]]
        case ("POST", let template) where template.hasSuffix("/entities/{entity}/payloads"): [["code": "a1", "note": "alpha", "rank": 1]]
        case ("POST", let template) where template.hasSuffix("/query"): .object(JSONObject())
        case ("POST", let template) where template.hasSuffix("/aggregate"): ["aggregates": ["n": "count"]]
        case ("POST", let template) where template.hasSuffix("/replay"): ["from": 1, "to": 1]
        // Refused (a loopback URL, no secret): the sweep registers no webhook that would send anything.
        case ("PUT", let template) where template.hasSuffix("/webhooks/{webhook}"): ["url": "https://127.0.0.1/x", "models": [["name": "vault"]]]
        default: nil
        }
    }

    /// The token a route takes: alpha's admin key, the admin token for admin routes, none for open ones.
    func token(for route: Route) -> String? {
        switch route.access {
        case .anyone: nil
        case .admin: server.adminToken
        case .tenant, .anyToken: alphaKey
        }
    }

    /// Each query parameter of each route, and an unknown one (with a hostile name too), with every
    /// hostile value (encoded, and raw where a request line can hold it), each request also carrying
    /// the value as `X-Request-Id`; the `POST …/query` body's members likewise. alpha's objects survive.
    func queryParameters() throws {
        let routes = Application.servedRoutes
        #expect(Set(Self.queryParameters.keys).isSubset(of: Set(routes.map { "\($0.method) \($0.template)" })))
        #expect(routes.allSatisfy { $0.body == .none || Self.body(for: $0) != nil }, "every route with a body has one here")
        let count = { () -> JSONValue? in self.json(self.send("GET", Self.alphaVault + "/entities/Item/objects?count=true&limit=1", token: self.alphaKey))?["total"] }
        let before = count()
        for route in routes {
            let names = (Self.queryParameters["\(route.method) \(route.template)"] ?? []) + ["unknown"]
            for value in HostileStrings.all {
                let what = String(reflecting: value).prefix(60)
                for name in names {
                    for encoded in [HostileStrings.percentEncoded(value), HostileStrings.raw(value, inQuery: true)].compactMap({ $0 }) {
                        send(route.method, target(route) + "?\(name)=\(encoded)", headers: [("X-Request-Id", value)], json: Self.body(for: route),
                             token: token(for: route), "\(name)=\(what)")
                    }
                }
                send(route.method, target(route) + "?\(HostileStrings.percentEncoded(value))=1", json: Self.body(for: route), token: token(for: route),
                     "parameter named \(what)")
            }
        }
        for (route, members) in [("query", Self.queryMembers), ("aggregate", Self.aggregateMembers)] {
            let path = Self.alphaVault + "/entities/Item/" + route
            for value in HostileStrings.all {
                let h = JSONValue.string(value)
                for member in members {
                    for body: JSONValue in [.object(JSONObject([(member, h)])), .object(JSONObject([(member, [h])])),
                                            .object(JSONObject([(member, .object(JSONObject([(value, h)]))), ("where", "note == $c")]))] {
                        send("POST", path, json: body, token: alphaKey, "\(route) \(member) \(String(reflecting: value).prefix(60))")
                    }
                }
            }
        }
        #expect(count() == before, "alpha's objects survived the query sweep")
        #expect(before != nil)
    }

    /// Every path parameter of every route with every hostile string, encoded and raw; the tenant with
    /// alpha's key and with the admin token. A tenant, model, mapping, key id or entity that breaks its
    /// naming rule, or a malformed snapshot token, is a 400 (raw strings that change the path's shape: 400, 404 or 405).
    func pathSegments() throws {
        for route in Application.servedRoutes {
            let parameters = route.template.split(separator: "/").filter { $0.hasPrefix("{") }.map { String($0.dropFirst().dropLast()) }
            for parameter in parameters {
                for value in HostileStrings.all {
                    let what = "\(route.method) \(route.template) {\(parameter)} = \(String(reflecting: value).prefix(60))"
                    let valid = switch parameter {
                    case "key": true
                    case "entity": Names.isPropertyName(value)
                    case "token": (try? SnapshotSession(mapping: "items", token: value, pointer: "")) != nil
                    default: Names.isResourceName(value)
                    }
                    var tokens = [token(for: route)]
                    if parameter == "tenant", case .tenant = route.access { tokens.append(server.adminToken) }
                    for token in tokens {
                        let encoded = send(route.method, target(route, replacing: parameter, with: HostileStrings.percentEncoded(value)),
                                           json: Self.body(for: route), token: token, what)
                        if !valid { expectStatus(encoded, [400], what) }
                        if let raw = HostileStrings.raw(value) {
                            let answer = send(route.method, target(route, replacing: parameter, with: raw), json: Self.body(for: route), token: token, what)
                            if !valid { expectStatus(answer, [400, 404, 405], "raw " + what) }
                        }
                    }
                }
            }
        }
    }

    /// alpha's key on every route of bravo (403), bravo's name disguised (400 or 404, never a 2xx),
    /// bravo's key id under alpha (404, and the key still works), and bravo's identities in alpha's store.
    func crossTenantAttempts() throws {
        for route in Application.servedRoutes where route.template.contains("{tenant}") {
            let what = "\(route.method) \(route.template) as alpha on bravo"
            let answer = send(route.method, target(route, replacing: "tenant", with: "bravo"), json: Self.body(for: route), token: alphaKey, what)
            expectStatus(answer, [403], what)
            for disguise in ["BRAVO", "bravo%20", "%20bravo", "bravo%09", "alpha%2F..%2Fbravo", "alpha%2f..%2fbravo", "alpha/../bravo", "./bravo",
                             "bravo/.", "b%72avo", "%62ravo", "bravo%00"] {
                let disguised = send(route.method, target(route, replacing: "tenant", with: disguise), json: Self.body(for: route), token: alphaKey,
                                     "\(route.method) \(route.template) {tenant} = \(disguise)")
                if let disguised, (200..<300).contains(disguised.status) {
                    fail("\(route.method) \(route.template) {tenant} = \(disguise): \(disguised.status)")
                }
            }
        }
        expectStatus(send("DELETE", "/v1/tenants/alpha/keys/\(bravoReadKeyID)", token: alphaKey), [404], "alpha revoking bravo's key")
        expectStatus(send("GET", "/v1/tenants/bravo/models", token: bravoReadKey), [200], "bravo's read key after alpha's attempt")
        expectStatus(send("GET", Self.alphaVault + "/entities/Item/objects/b1", token: alphaKey), [404], "bravo's identity in alpha's store")
        let shared = json(send("GET", Self.alphaVault + "/entities/Item/objects/" + HostileStrings.percentEncoded("'; DROP TABLE x; --"), token: alphaKey))
        if !HostileStrings.same(shared?["note"], "'; DROP TABLE x; --") { fail("alpha's object under bravo's identity: \(describe(shared))") }
    }
}
