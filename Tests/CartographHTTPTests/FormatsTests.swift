// R-Q7: lists, queries and the change feed in CSV and NDJSON (docs/queries.md#formats), in process: what the
// rows hold and how they are quoted, relationships, `fields`, cursors, content negotiation, and a stream
// cut short by a failure. Streaming through the real server with bounded memory is FormatsLiveTests.
import Foundation
import Logging
import Testing
import CartographCore
import CartographHTTP
import CartographStore
import CartographTesting

struct FormatsTests {
    /// Publishers and their characters, every attribute read by its own name.
    static let model = try! JSONReader().parse("""
        {"entities": [
          {"name": "Publisher", "userInfo": {"identityAttributes": "code"},
           "attributes": [{"name": "code", "type": "string", "userInfo": {"JSONKeyPath": "code"}},
                          {"name": "name", "type": "string", "userInfo": {"JSONKeyPath": "name"}}],
           "relationships": [{"name": "characters", "destination": "Character", "toMany": true, "inverse": "publisher",
                              "userInfo": {"JSONKeyPath": "characters"}}]},
          {"name": "Character", "userInfo": {"identityAttributes": "identifier"},
           "attributes": [{"name": "identifier", "type": "integer64", "userInfo": {"JSONKeyPath": "identifier"}},
                          {"name": "name", "type": "string", "userInfo": {"JSONKeyPath": "name"}},
                          {"name": "seen", "type": "date", "userInfo": {"JSONKeyPath": "seen"}},
                          {"name": "rating", "type": "double", "userInfo": {"JSONKeyPath": "rating"}},
                          {"name": "portrait", "type": "binary", "userInfo": {"JSONKeyPath": "portrait"}}],
           "relationships": [{"name": "publisher", "destination": "Publisher", "inverse": "characters",
                              "userInfo": {"JSONKeyPath": "publisher"}}]}]}
        """)

    static let characters = try! JSONReader().parse(#"""
        [{"identifier": 1, "name": "Spider, \"Man\"\r\nof Queens", "seen": "2024-01-02T03:04:05Z", "rating": 4.5,
          "portrait": "aGVsbG8=", "publisher": {"code": "MV", "name": "Marvel"}},
         {"identifier": 2, "name": "", "publisher": {"code": "MV"}},
         {"identifier": 3, "name": "Ünïcödé ☃ 🦸"}]
        """#)

    static func with(_ body: (ModelAPI) throws -> Void) throws {
        try ModelAPI.with(model: model) { api in
            try #require(api.post("/entities/Character/payloads", characters).status == 200)
            try body(api)
        }
    }

    static func get(_ api: ModelAPI, _ path: String, accept: String?) throws -> RawResponse {
        try api.client.send("GET", api.base + "/" + path, headers: accept.map { [("Accept", $0)] } ?? [], token: api.key)
    }

    /// RFC 4180's rows: fields split on commas, quoted fields unquoted (their line breaks and doubled quotes kept).
    static func rows(_ csv: String) -> [[String]] {
        var rows: [[String]] = [], row: [String] = [], field = "", quoted = false
        var characters = csv.unicodeScalars.makeIterator()
        var pending = characters.next()
        while let character = pending {
            pending = characters.next()
            if quoted {
                if character == "\"" {
                    if pending == "\"" { field.unicodeScalars.append("\""); pending = characters.next() } else { quoted = false }
                } else { field.unicodeScalars.append(character) }
                continue
            }
            switch character {
            case "\"": quoted = true
            case ",": row.append(field); field = ""
            case "\r" where pending == "\n":
                pending = characters.next()
                row.append(field); rows.append(row); row = []; field = ""
            default: field.unicodeScalars.append(character)
            }
        }
        return rows
    }

    @Test func R_Q7_csvQuotesCommasQuotesAndLineBreaksAndWritesNilsDatesBinaryAndUnicode() throws {
        try Self.with { api in
            let csv = try Self.get(api, "entities/Character/objects", accept: "text/csv")
            #expect(csv.status == 200)
            #expect(csv.header("Content-Type") == "text/csv; charset=utf-8; header=present")
            #expect(csv.header("Vary") == "Accept")
            #expect(csv.text == "_id,_entity,identifier,name,seen,rating,portrait,publisher\r\n"
                + "1,Character,1,\"Spider, \"\"Man\"\"\r\nof Queens\",2024-01-02T03:04:05.000Z,4.5,aGVsbG8=,MV\r\n"
                // An empty string is quoted; a nil is an empty cell.
                + "3,Character,2,\"\",,,,MV\r\n"
                + "4,Character,3,Ünïcödé ☃ 🦸,,,,\r\n")
        }
    }

    @Test func R_Q7_relationshipsAreTheirDestinationsKeysAndAToManyIsAJSONArray() throws {
        try Self.with { api in
            let csv = try Self.get(api, "entities/Publisher/objects", accept: "text/csv")
            #expect(csv.text == "_id,_entity,code,name,characters\r\n2,Publisher,MV,Marvel,\"[1,2]\"\r\n")
            let ndjson = try Self.get(api, "entities/Publisher/objects", accept: "application/x-ndjson")
            #expect(ndjson.header("Content-Type") == "application/x-ndjson")
            #expect(ndjson.text == #"{"_id":2,"_entity":"Publisher","code":"MV","name":"Marvel","characters":[1,2]}"# + "\n")
            // `include` embeds the destination's document in the cell.
            let included = try Self.get(api, "entities/Character/objects?include=publisher&fields=name&limit=1", accept: "text/csv")
            #expect(included.text == "_id,_entity,identifier,name,publisher\r\n1,Character,1,\"Spider, \"\"Man\"\"\r\nof Queens\","
                + #""{""_id"":2,""_entity"":""Publisher"",""code"":""MV"",""name"":""Marvel"",""characters"":[1,2]}""# + "\r\n")
        }
    }

    @Test func R_Q7_ndjsonHasOneLinePerObjectEqualToTheJSONPagesItems() throws {
        try Self.with { api in
            let json = try Self.get(api, "entities/Character/objects?orderBy=-identifier", accept: nil).json()
            let ndjson = try Self.get(api, "entities/Character/objects?orderBy=-identifier", accept: "application/x-ndjson")
            #expect(ndjson.text.hasSuffix("\n"))
            let lines = try ndjson.text.split(separator: "\n").map { try JSONReader().parse(String($0)) }
            #expect(lines == json["items"]?.arrayValue)
            #expect(lines.count == 3)
        }
    }

    @Test func R_Q7_fieldsChooseAndOrderTheColumnsAfterTheKey() throws {
        try Self.with { api in
            let csv = try Self.get(api, "entities/Character/objects?fields=rating,name&limit=2", accept: "text/csv")
            #expect(csv.text == "_id,_entity,identifier,rating,name\r\n1,Character,1,4.5,\"Spider, \"\"Man\"\"\r\nof Queens\"\r\n3,Character,2,,\"\"\r\n")
            let unknown = try Self.get(api, "entities/Character/objects?fields=nmae", accept: "text/csv")
            #expect(unknown.status == 400)
            #expect(unknown.header("Content-Type") == "application/problem+json")
        }
    }

    @Test func R_Q7_aPagesNextCursorComesInItsHeadersAndPagesThroughTheSet() throws {
        try Self.with { api in
            var rows: [String] = []
            var path = "entities/Character/objects?orderBy=name&limit=2"
            var pages = 0
            while true {
                let page = try Self.get(api, path, accept: "text/csv")
                #expect(page.status == 200)
                rows += Self.rows(page.text).dropFirst().map { $0[0] }
                pages += 1
                guard let link = page.header("Link") else {
                    #expect(page.header("Cartograph-Next-Cursor") == nil)
                    break
                }
                let cursor = try #require(page.header("Cartograph-Next-Cursor"))
                #expect(link.hasPrefix("<" + api.base + "/entities/Character/objects?") && link.hasSuffix(">; rel=\"next\""), "\(link)")
                #expect(link.contains("cursor=" + cursor) && link.contains("orderBy=name") && link.contains("limit=2"))
                path = String(link.dropFirst("<".count + api.base.count + 1).prefix { $0 != ">" })
            }
            // By name: "", "Spider…", "Ünïcödé…".
            #expect(rows == ["3", "1", "4"])
            #expect(pages == 2)

            // A query (POST) has the cursor header, and no Link (the cursor goes in the body).
            let query = try api.client.send("POST", api.base + "/entities/Character/query",
                                            headers: [("Content-Type", "application/json"), ("Accept", "text/csv")],
                                            body: #"{"limit": 1, "count": true}"#.utf8.map { $0 }, token: api.key)
            #expect(query.status == 200)
            #expect(query.header("Cartograph-Total") == "3")
            #expect(query.header("Link") == nil)
            let cursor = try #require(query.header("Cartograph-Next-Cursor"))
            let next = try api.client.send("POST", api.base + "/entities/Character/query",
                                           headers: [("Content-Type", "application/json"), ("Accept", "application/x-ndjson")],
                                           body: (["limit": 5, "cursor": .string(cursor)] as JSONValue).jsonBytes, token: api.key)
            #expect(next.text.split(separator: "\n").map { try? JSONReader().parse(String($0))["identifier"] } == [2, 3])
        }
    }

    /// R-S8 too: a browser app on an allowed origin can read where the next page starts.
    @Test func R_Q7_aBrowserAppMayReadTheHeadersThatCarryAPagesPosition() throws {
        let origin = "https://app.example"
        try ModelAPI.with(model: Self.model, serverArguments: ["--cors-origin", origin]) { api in
            try #require(api.post("/entities/Character/payloads", Self.characters).status == 200)
            for path in ["entities/Character/objects?limit=1&count=true", "changes?limit=1"] {
                let page = try api.client.send("GET", api.base + "/" + path, headers: [("Accept", "text/csv"), ("Origin", origin)], token: api.key)
                let exposed = Set((page.header("Access-Control-Expose-Headers") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                let carried = Set(page.headers.map(\.name).filter { $0.hasPrefix("Cartograph-") || $0 == "Link" })
                #expect(carried.count >= 2, "\(path): \(page.headers)")
                #expect(carried.isSubset(of: exposed), "\(path) carries \(carried.subtracting(exposed).sorted()) unexposed")
            }
        }
    }

    @Test func R_Q7_aLimitAboveOneChunkStreamsThatManyObjectsAcrossChunksWithoutACursor() throws {
        try ModelAPI.with(model: Self.model) { api in
            let payload = JSONValue.array((1...2_600).map { ["identifier": .number(JSONNumber($0)), "name": .string("n\($0)")] })
            try #require(api.post("/entities/Character/payloads", payload).status == 200)
            let all = try Self.get(api, "entities/Character/objects?limit=100000&orderBy=-identifier", accept: "text/csv")
            let rows = all.text.split(separator: "\r\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false)[2] }
            #expect(rows == (1...2_600).reversed().map { Substring(String($0)) })
            #expect(all.header("Cartograph-Next-Cursor") == nil && all.header("Link") == nil)
            // Stopped at `limit`, mid-chunk.
            let some = try Self.get(api, "entities/Character/objects?limit=1500", accept: "application/x-ndjson")
            #expect(some.text.split(separator: "\n").count == 1_500)
            #expect(try Self.get(api, "entities/Character/objects?limit=1500", accept: nil).status == 400, "JSON pages stay at most 1000")
            #expect(try Self.get(api, "entities/Character/objects?limit=0", accept: "text/csv").status == 400)
        }
    }

    @Test func R_Q7_acceptIsNegotiatedByQualityAndAnUnsupportedOneIs406() throws {
        try Self.with { api in
            let cases: [(accept: String?, type: String)] = [
                (nil, "application/json"), ("*/*", "application/json"), ("application/*", "application/json"),
                ("text/html,application/xhtml+xml,*/*;q=0.8", "application/json"), ("text/csv", "text/csv"),
                ("text/*", "text/csv"), ("text/csv, */*", "text/csv"), ("application/json, text/csv", "application/json"),
                ("application/json;q=0.5, text/csv", "text/csv"), ("application/x-ndjson;q=0.9, text/csv;q=0.3", "application/x-ndjson"),
                ("text/csv;q=0, */*", "application/json"), ("TEXT/CSV", "text/csv"),
            ]
            for (accept, type) in cases {
                let response = try Self.get(api, "entities/Character/objects", accept: accept)
                #expect(response.status == 200)
                #expect(response.header("Content-Type")?.hasPrefix(type) == true, "Accept: \(accept ?? "none") → \(response.header("Content-Type") ?? "")")
            }
            for accept in ["image/png", "text/html", "application/json;q=0, text/csv;q=0"] {
                for path in ["entities/Character/objects", "changes"] {
                    let refused = try Self.get(api, path, accept: accept)
                    #expect(refused.status == 406, "\(accept) on \(path)")
                    #expect(try refused.json()["type"] == "urn:cartograph:problem:not-acceptable")
                }
            }
            // Other routes do not negotiate: a single object is JSON whatever Accept says.
            #expect(try Self.get(api, "entities/Character/objects/1", accept: "text/csv").status == 200)
        }
    }

    @Test func R_Q7_csvRefusesShapeJSONAndEitherFormatRefusesExplainAndFacets() throws {
        try Self.with { api in
            let shape = try Self.get(api, "entities/Character/objects?shape=json", accept: "text/csv")
            #expect(shape.status == 400)
            #expect(try shape.json()["errors"]?.arrayValue?.first?["pointer"] == "/shape")
            let exported = try Self.get(api, "entities/Character/objects?shape=json&orderBy=identifier", accept: "application/x-ndjson")
            #expect(try JSONReader().parse(String(exported.text.split(separator: "\n")[0]))["identifier"] == 1)
            let explain = try Self.get(api, "entities/Character/objects?explain=true", accept: "application/x-ndjson")
            #expect(explain.status == 400)
            #expect(try explain.json()["errors"]?.arrayValue?.first?["pointer"] == "/explain")
            let facets = try Self.get(api, "entities/Character/objects?facets=name", accept: "text/csv")
            #expect(facets.status == 400)
            #expect(try facets.json()["errors"]?.arrayValue?.first?["pointer"] == "/facets")
        }
    }

    @Test func R_Q7_theChangeFeedHasARowPerChangeAndItsPositionInTheHeaders() throws {
        try Self.with { api in
            #expect(try api.client.send("DELETE", api.base + "/entities/Character/objects/3", token: api.key).status == 204)
            let csv = try Self.get(api, "changes?since=1&limit=3", accept: "text/csv")
            let rows = Self.rows(csv.text)
            #expect(rows.count == 4)
            #expect(rows[0] == ["seq", "op", "entity", "key", "deletedAt", "object"])
            let last = try #require(rows.last?.first)
            #expect(Int(last) ?? 0 > 1)
            #expect(csv.header("Cartograph-Next-Since") == last)
            #expect(csv.header("Cartograph-Epoch")?.count == 32)
            #expect(csv.header("Link") == "<\(api.base)/changes?limit=3&since=\(last)>; rel=\"next\"")
            let publisher = try #require(rows.first { $0[2] == "Publisher" })
            #expect(publisher[1] == "upsert" && publisher[3] == "MV" && publisher[4] == "")
            #expect(try JSONReader().parse(publisher[5]) == ["_id": 2, "_entity": "Publisher", "code": "MV", "name": "Marvel"])
            let ndjson = try Self.get(api, "changes?since=0", accept: "application/x-ndjson")
            let lines = try ndjson.text.split(separator: "\n").map { try JSONReader().parse(String($0)) }
            let json = try Self.get(api, "changes?since=0", accept: nil).json()
            #expect(lines == json["changes"]?.arrayValue)
            let tombstone = try #require(lines.last)
            #expect(tombstone["op"] == "delete" && tombstone["key"] == 3)
            let all = Self.rows(try Self.get(api, "changes?since=0", accept: "text/csv").text)
            let deleted = try #require(all.last)
            #expect(deleted[1...4] == ["delete", "Character", "3", deleted[4]] && deleted[5] == "", "\(deleted)")
            #expect(deleted[4].hasPrefix("20") && deleted[4].hasSuffix("Z"))
        }
    }

    /// A chunk that fails after the first was sent cannot become a problem: the stream ends with the error (the
    /// transport then closes the connection without the body's last chunk) and the failure is logged.
    @Test func R_Q7_aFailureAfterTheFirstChunkEndsTheStreamWithAnErrorAndIsLogged() throws {
        let log = CapturedLog()
        let server = try InProcessServer(logger: log.logger)
        let key = try #require(try server.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        let base = "/v1/tenants/acme/models/m"
        #expect(try server.sendJSON("PUT", base, Self.model, token: key).status == 201)
        let payload = JSONValue.array((1...1_500).map { ["identifier": .number(JSONNumber($0))] })
        #expect(try server.sendJSON("POST", base + "/entities/Character/payloads", payload, token: key).status == 200)

        var headers = HTTPHeaders([("Accept", "text/csv"), ("X-Request-Id", "cut-1")])
        headers.add("Authorization", "Bearer \(key)")
        let response = server.application.respond(to: HTTPRequest(method: "GET", target: base + "/entities/Character/objects?limit=5000",
                                                                   headers: headers))
        #expect(response.status == 200)
        let stream = try #require(response.stream)
        let first = try #require(try stream.next())
        #expect(String(decoding: first, as: UTF8.self).split(separator: "\r\n").count == 1 + 1_000)
        // The table goes behind the server's back: the second chunk's read fails.
        try SQLiteConnection(path: server.dataDirectory.appendingPathComponent("data/tenants/acme/m.sqlite").path)
            .execute("DROP TABLE \"Character\"")
        #expect(throws: CartographError.self) { try stream.next() }
        let line = try #require(log.all.first { $0.message == "streamed answer cut short" })
        #expect(line.metadata["request.id"] == "cut-1")
        #expect(line.metadata["cause"]?.description.contains("no such table") == true)
    }
}
