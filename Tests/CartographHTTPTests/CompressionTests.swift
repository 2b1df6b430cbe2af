// gzip responses (issue 15; README "API"): an answer of 1 KiB or
// more is gzip-encoded for a client whose Accept-Encoding takes gzip, and decodes to the very bytes an
// uncompressed request gets; a small answer, or a client that does not take gzip, gets plain bytes.
import Foundation
import Testing
import CartographCore
import CartographTesting
@testable import CartographHTTP

/// `gzip -dc` of `bytes` (the tests do not link zlib themselves).
private func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", "gzip -dc"]
    let input = Pipe(), output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    input.fileHandleForWriting.write(Data(bytes))
    try input.fileHandleForWriting.close()
    let decoded = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "gzip -dc failed: not a gzip stream")
    return Array(decoded)
}

struct CompressionTests {
    @Test func aLargeAnswerIsGzippedForAClientThatTakesGzipAndDecodesToThePlainBytes() throws {
        let model: JSONValue = ["entities": [["name": "Note", "userInfo": ["identityAttributes": "id"],
                                              "attributes": [["name": "id", "type": "integer64"], ["name": "text", "type": "string"]]]]]
        try ModelAPI.with(model: model, mappings: ["notes": ["entity": "Note", "attributes": ["id", "text"]]]) { api in
            try api.map("notes", .array((1...200).map { ["id": .number(JSONNumber($0)), "text": .string("note number \($0), written out at some length")] }))
            let path = api.base + "/entities/Note/objects?orderBy=id&limit=200"
            let plain = try api.client.send("GET", path, token: api.key)
            #expect(plain.status == 200)
            #expect(plain.header("Content-Encoding") == nil)
            #expect(plain.header("Vary") == "Accept-Encoding")
            #expect(plain.body.count > 10_000)

            let gzipped = try api.client.send("GET", path, headers: [("Accept-Encoding", "br;q=1.0, gzip;q=0.8")], token: api.key)
            #expect(gzipped.status == 200)
            #expect(gzipped.header("Content-Encoding") == "gzip")
            #expect(gzipped.body.count * 4 < plain.body.count, "JSON compresses well")
            #expect(try gunzip(gzipped.body) == plain.body)

            // Refused, or not asked for: plain bytes. A small answer stays plain whatever was asked.
            #expect(try api.client.send("GET", path, headers: [("Accept-Encoding", "gzip;q=0, *")], token: api.key).header("Content-Encoding") == nil)
            #expect(try api.client.send("GET", path, headers: [("Accept-Encoding", "identity")], token: api.key).body == plain.body)
            let small = try api.client.send("GET", api.base + "/entities/Note/objects/1", headers: [("Accept-Encoding", "gzip")], token: api.key)
            #expect(small.header("Content-Encoding") == nil)
            #expect(try small.json()["text"] == "note number 1, written out at some length")
        }
    }

    @Test(arguments: [
        ("gzip", true), ("GZIP;q=0.5", true), ("deflate, x-gzip", true), ("*", true), ("br, *;q=0.1", true),
        ("gzip;q=0", false), ("*;q=0", false), ("gzip;q=0, *", false), ("identity", false), ("", false),
    ])
    func acceptEncodingIsReadWithItsQualities(header: String, accepted: Bool) {
        #expect(HTTPResponse.acceptsGzip(header) == accepted)
    }
}
