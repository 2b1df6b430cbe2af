// Storage faults on the real server (issue 17, docs/errors.md#storage-faults): a file system that cannot be
// written and a damaged store file, met by a server started over them, each answer a problem of their own,
// show on /readyz and lose nothing acknowledged; the first recovers without a restart, the second is
// logged naming its file. A full disk is in FullDiskTests (in process).
import Foundation
import Testing
import CartographCore
import CartographStore
import CartographTesting

/// A live server whose data directory is `directory`, with tenant acme, model m and mapping notes.
private func withNotesServer(in directory: URL, _ body: (LiveServer, ModelAPI) throws -> Void) throws {
    let server = try LiveServer(dataDirectory: directory)
    defer { server.stop() }
    try body(server, try KilobyteNotes.register(on: server))
}

/// `cartograph check-store file`: its exit status and output.
private func checkStore(_ file: URL) throws -> (Int32, String) {
    let (status, stdout, _) = try LiveServer.runCommand(["check-store", file.path])
    return (status, stdout)
}

@Suite(.serialized) struct StorageFaultLiveTests {
    @Test(.enabled(if: Tmpfs.available, "mounting a tmpfs needs root"))
    func R_S4_aStoreThatCannotBeWrittenIs503AndIsOpenedAgainOnceItCanBe() throws {
        // The tenant's directory is a file system of its own, read-only when the server starts (as a file
        // owned by another user would be), made writable while it runs.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cartograph-readonly-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tenantDirectory = directory.appendingPathComponent("data/tenants/acme")
        var key = ""
        do {
            let first = try LiveServer(dataDirectory: directory)
            defer { first.stop() }
            key = try #require(try first.client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: first.adminToken).json()["apiKey"]?.stringValue)
        }
        let disk = try Tmpfs(kibibytes: 16 * 1024, at: tenantDirectory)
        defer { disk.unmount() }
        do {
            let second = try LiveServer(dataDirectory: directory)
            defer { second.stop() }
            let api = ModelAPI(client: second.client, key: key, base: "/v1/tenants/acme/models/m")
            #expect(try second.client.sendJSON("PUT", api.base, KilobyteNotes.model, token: key).status == 201)
            #expect(try second.client.sendJSON("PUT", api.base + "/mappings/notes", KilobyteNotes.mapping, token: key).status == 201)
            try api.map("notes", KilobyteNotes.payload(from: 0, count: 10))
        }
        try #require(disk.remount(readOnly: true))
        let server = try LiveServer(dataDirectory: directory)
        defer { server.stop() }
        let api = ModelAPI(client: server.client, key: key, base: "/v1/tenants/acme/models/m")
        let refused = try api.post("notes", KilobyteNotes.payload(from: 10, count: 10))
        #expect(refused.status == 503, "\(refused.text)")
        #expect(try refused.json()["type"] == "urn:cartograph:problem:store-unavailable")
        #expect(refused.header("Retry-After") != nil)
        #expect(try server.client.send("GET", "/readyz").json()["storeFaults"]?.arrayValue?.first?["problem"]
                == "urn:cartograph:problem:store-unavailable")

        try #require(disk.remount(readOnly: false))
        #expect(try api.map("notes", KilobyteNotes.payload(from: 10, count: 10))["inserted"] == 10, "the store was opened again, no restart")
        #expect(try api.get("entities/Note/objects?count=true&limit=1")["total"] == 20, "nothing acknowledged was lost")
        #expect(try server.client.send("GET", "/readyz").json()["storeFaults"] == nil)
    }

    @Test func R_S4_aDamagedStoreIs503TakesNoWritesAndIsListedOnReadyz() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cartograph-corrupt-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try withNotesServer(in: directory) { _, api in try api.map("notes", KilobyteNotes.payload(from: 0, count: 200)) }
        // While the server is stopped: the log checkpointed into the file, then every page but the first (the
        // header and schema) overwritten.
        let file = directory.appendingPathComponent("data/tenants/acme/m.sqlite")
        do {
            let connection = try SQLiteConnection(path: file.path)
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        #expect(try checkStore(file) == (0, "\(file.path): ok\n"))
        let handle = try FileHandle(forUpdating: file)
        let size = try handle.seekToEnd()
        try #require(size > 8_192, "the notes are in the file")
        try handle.seek(toOffset: 4_096)
        handle.write(Data(repeating: 0xA5, count: Int(size) - 4_096))
        try handle.close()
        let (status, report) = try checkStore(file)
        #expect(status == 1 && report.hasPrefix(file.path) && !report.contains(": ok"), "the operator's check finds it: \(report)")

        let server = try LiveServer(dataDirectory: directory)
        defer { server.stop() }
        let key = try #require(try server.client.sendJSON("POST", "/v1/tenants/acme/keys", ["scope": "admin"], token: server.adminToken).json()["apiKey"]?.stringValue)
        let api = ModelAPI(client: server.client, key: key, base: "/v1/tenants/acme/models/m")
        let read = try server.client.send("GET", api.base + "/entities/Note/objects", token: key)
        #expect(read.status == 503, "\(read.text)")
        #expect(try read.json()["type"] == "urn:cartograph:problem:store-corrupt")
        let write = try api.post("notes", KilobyteNotes.payload(from: 1_000, count: 1))
        #expect(write.status == 503, "\(write.text)")
        #expect(try write.json()["type"] == "urn:cartograph:problem:store-corrupt")
        let ready = try server.client.send("GET", "/readyz")
        #expect(ready.status == 200, "the server serves its other stores")
        #expect(try ready.json()["storeFaults"]?.arrayValue?.first?["model"] == "m")
        #expect(server.logContains("storage fault") && server.logContains("m.sqlite"), "the log names the file")
    }
}
