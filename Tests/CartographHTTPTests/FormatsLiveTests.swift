// R-Q7 through the real server: a whole set streamed as CSV, read back by Python's csv module as a client
// reads it, while the server's memory stays bounded. The rows' contents and the negotiation are FormatsTests.
import Foundation
import Testing
import CartographCore
import CartographStore
import CartographTesting

struct FormatsLiveTests {
    static let model = try! JSONReader().parse("""
        {"entities": [{"name": "Article", "userInfo": {"identityAttributes": "identifier"},
          "attributes": [{"name": "identifier", "type": "integer64", "userInfo": {"JSONKeyPath": "id"}},
                         {"name": "title", "type": "string", "userInfo": {"JSONKeyPath": "title"}},
                         {"name": "body", "type": "string", "userInfo": {"JSONKeyPath": "body"}},
                         {"name": "views", "type": "integer64", "userInfo": {"JSONKeyPath": "views"}}]}]}
        """)

    /// Article `n`'s body: about 2 KB, with a comma, a quote and a line break that CSV must quote.
    static func body(_ n: Int) -> String { "Body of \(n), \"quoted\"\nnext line " + String(repeating: "lorem ipsum ", count: 170) + "\(n)" }

    /// Reads the CSV answer as it arrives (http.client, chunked) with the csv module and checks every row:
    /// prints the rows read, the bytes, and the first mismatch if any.
    static let reader = #"""
        import csv, http.client, io, sys
        port, path, key, count = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        connection.request("GET", path, headers={"Authorization": "Bearer " + key, "Accept": "text/csv"})
        response = connection.getresponse()
        assert response.status == 200, response.status
        assert response.getheader("Transfer-Encoding") == "chunked", response.getheaders()
        class Counting(io.RawIOBase):
            read_bytes = 0
            def readable(self): return True
            def readinto(self, buffer):
                data = response.read(len(buffer))
                self.read_bytes += len(data)
                buffer[:len(data)] = data
                return len(data)
        raw = Counting()
        rows = csv.reader(io.TextIOWrapper(io.BufferedReader(raw, 1 << 16), encoding="utf-8", newline=""))
        header = next(rows)
        assert header == ["_id", "_entity", "identifier", "title", "body", "views"], header
        n = 0
        for row in rows:
            n += 1
            expected = [str(n), "Article", str(n), "Title %d" % n,
                        "Body of %d, \"quoted\"\nnext line " % n + "lorem ipsum " * 170 + str(n), str(n % 1000)]
            if row != expected:
                print("mismatch at row %d: %r" % (n, row[:4])); sys.exit(1)
        print("rows=%d bytes=%d" % (n, raw.read_bytes))
        sys.exit(0 if n == count else 1)
        """#

    static func status(of pid: Int32, _ field: String) -> Int {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test func R_Q7_fiftyThousandObjectsStreamAsCSVThatPythonReadsBackWhileTheServersMemoryStaysBounded() throws {
        try withLiveServer { server in
            let client = server.client
            let key = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
            let base = "/v1/tenants/acme/models/m"
            try #require(try client.sendJSON("PUT", base, Self.model, token: key).status == 201)
            let count = 50_000
            for start in stride(from: 1, through: count, by: 5_000) {
                let batch = JSONValue.array((start..<start + 5_000).map { n in
                    ["id": .number(JSONNumber(n)), "title": .string("Title \(n)"), "body": .string(Self.body(n)), "views": .number(JSONNumber(n % 1000))]
                })
                // Kept open as HTTP clients keep it (half-closed, a 10 MB POST came back empty in this test's first runs).
                let posted = try client.send("POST", base + "/entities/Article/payloads", headers: [("Content-Type", "application/json")],
                                             body: batch.jsonBytes, token: key, halfClose: false)
                try #require(posted.status == 200, "\(posted.text.prefix(300))")
            }
            let pid = server.processIdentifier
            // The peak from here on: the loads above had their own.
            try "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)
            let before = Self.status(of: pid, "VmRSS")

            let script = FileManager.default.temporaryDirectory.appendingPathComponent("formats-reader-\(UUID().uuidString).py")
            try Self.reader.write(to: script, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: script) }
            let python = Process()
            python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            python.arguments = ["python3", script.path, String(server.port), base + "/entities/Article/objects?limit=1000000", key, String(count)]
            let output = Pipe()
            python.standardOutput = output
            python.standardError = output
            try python.run()
            let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            python.waitUntilExit()
            #expect(python.terminationStatus == 0, "\(printed)")
            #expect(printed.contains("rows=\(count) "), "\(printed)")
            let bytes = Int(printed.split(separator: "bytes=").last?.prefix { $0.isNumber } ?? "") ?? 0
            #expect(bytes > 100_000_000, "the answer is larger than the memory bound below: \(printed)")

            // kB. A server holding the answer (or a tenth of it per chunk) would grow by more than its 100 MB.
            let peak = Self.status(of: pid, "VmHWM")
            #expect(peak - before < 48 * 1024, "RSS \(before) kB before, peak \(peak) kB while streaming \(bytes) bytes")
        }
    }

    /// A chunk that fails once the answer has started: the connection is closed without the chunked body's
    /// last chunk (`0\r\n\r\n`), so the client sees a cut, never an answer that looks complete.
    @Test func R_Q7_aFailureAfterTheAnswerStartedClosesTheConnectionWithoutTheLastChunk() throws {
        try withLiveServer { server in
            let client = server.client
            let key = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
            let base = "/v1/tenants/acme/models/m"
            try #require(try client.sendJSON("PUT", base, Self.model, token: key).status == 201)
            // 20 KB bodies: the first chunk (1,000 rows, 20 MB) is more than the sockets' buffers hold, so the
            // server cannot have read the second before the client has read most of the first.
            let text = String(repeating: "lorem ipsum ", count: 1_700)
            for start in stride(from: 1, through: 2_000, by: 1_000) {
                let batch = JSONValue.array((start..<start + 1_000).map { ["id": .number(JSONNumber($0)), "body": .string(text)] })
                let posted = try client.send("POST", base + "/entities/Article/payloads", headers: [("Content-Type", "application/json")],
                                             body: batch.jsonBytes, token: key, halfClose: false)
                try #require(posted.status == 200, "\(posted.text.prefix(300))")
            }
            func answer(dropping drop: Bool) throws -> [UInt8] {
                let socket = try client.connect()
                defer { close(socket) }
                let request = "GET \(base)/entities/Article/objects?limit=5000 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(key)\r\n"
                    + "Accept: text/csv\r\nConnection: close\r\n\r\n"
                #expect(client.writeAll(socket, Array(request.utf8)))
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 65536)
                var dropped = !drop
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                    if count <= 0 { break }
                    received += buffer[0..<count]
                    if !dropped, received.count > 1 << 20 {
                        try SQLiteConnection(path: server.dataDirectory.appendingPathComponent("data/tenants/acme/m.sqlite").path)
                            .execute("DROP TABLE \"Article\"")
                        dropped = true
                    }
                }
                return received
            }
            let whole = try answer(dropping: false)
            #expect(String(decoding: whole.prefix(15), as: UTF8.self) == "HTTP/1.1 200 OK")
            #expect(whole.count > 40_000_000)
            #expect(whole.suffix(5) == Array("0\r\n\r\n".utf8), "a complete answer ends with the last chunk")
            let cut = try answer(dropping: true)
            #expect(String(decoding: cut.prefix(15), as: UTF8.self) == "HTTP/1.1 200 OK")
            #expect(cut.count > 1 << 20 && cut.count < whole.count, "\(cut.count) of \(whole.count) bytes")
            #expect(cut.suffix(5) != Array("0\r\n\r\n".utf8), "the cut answer does not end as a complete one")
            #expect(server.logContains("streamed answer cut short"))
        }
    }
}
