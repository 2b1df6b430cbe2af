// Storage faults (issue 17, docs/errors.md#storage-faults): a full disk, a file system that cannot be written and a damaged
// store file each answer a problem of their own, show on /readyz, lose nothing acknowledged, and the first
// two recover without a restart. The disk faults need a small tmpfs of their own: mounting one needs
// root (CAP_SYS_ADMIN); where that is impossible those tests are skipped, saying so.
import Foundation
import Testing
import CartographCore
import CartographStore
import CartographTesting

struct TmpfsUnavailable: Error {}

/// A tmpfs mounted for one test, unmounted (and removed) when it ends.
final class Tmpfs {
    let directory: URL

    /// Whether this process can mount one (root, or a capability), tried once.
    static let available: Bool = {
        guard let probe = try? Tmpfs(kibibytes: 64) else { return false }
        probe.unmount()
        return true
    }()

    /// Mounts a tmpfs of `kibibytes` at `directory` (a new temporary one when nil).
    init(kibibytes: Int, at directory: URL? = nil) throws {
        self.directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("cartograph-tmpfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        guard Self.run(["mount", "-t", "tmpfs", "-o", "size=\(kibibytes)k", "tmpfs", self.directory.path]) == 0 else {
            try? FileManager.default.removeItem(at: self.directory)
            throw TmpfsUnavailable()
        }
    }

    /// `mount -o remount,ro` (or `rw`).
    func remount(readOnly: Bool) -> Bool { Self.run(["mount", "-o", "remount,\(readOnly ? "ro" : "rw")", directory.path]) == 0 }

    func unmount() {
        _ = Self.run(["umount", "-l", directory.path])
        try? FileManager.default.removeItem(at: directory)
    }

    @discardableResult
    static func run(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

private let notesModel: JSONValue = ["entities": [
    ["name": "Note", "attributes": [["name": "id", "type": "integer64"], ["name": "text", "type": "string"]]],
]]
private let notesMapping: JSONValue = ["entity": "Note", "keyPath": "notes", "attributes": ["id", "text"]]

/// `count` notes from `first`, each with a kilobyte of text.
private func notes(from first: Int, count: Int) -> JSONValue {
    ["notes": .array((first..<first + count).map { ["id": .number(JSONNumber(Int64($0))), "text": .string(String(repeating: "n", count: 1_000))] })]
}

/// A live server whose data directory is `directory`, with tenant acme, model m and mapping notes.
private func withNotesServer(in directory: URL, arguments: [String] = [], _ body: (LiveServer, ModelAPI) throws -> Void) throws {
    let server = try LiveServer(arguments: arguments, dataDirectory: directory)
    defer { server.stop() }
    let client = server.client
    let key = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
    let api = ModelAPI(client: client, key: key, base: "/v1/tenants/acme/models/m")
    #expect(try client.sendJSON("PUT", api.base, notesModel, token: key).status == 201)
    #expect(try client.sendJSON("PUT", api.base + "/mappings/notes", notesMapping, token: key).status == 201)
    try body(server, api)
}

/// `cartograph check-store file`: its exit status and output.
private func checkStore(_ file: URL) throws -> (Int32, String) {
    let (status, stdout, _) = try LiveServer.runCommand(["check-store", file.path])
    return (status, stdout)
}

@Suite(.serialized) struct StorageFaultLiveTests {
    @Test(.enabled(if: Tmpfs.available, "mounting a tmpfs needs root"))
    func R_S4_aFullDiskIs507ListedOnReadyzAndWritesResumeWhenThereIsRoom() throws {
        let disk = try Tmpfs(kibibytes: 8 * 1024)
        defer { disk.unmount() }
        try withNotesServer(in: disk.directory) { server, api in
            try api.map("notes", notes(from: 0, count: 10))
            // Leave the store a few hundred kilobytes, then write until the disk is full.
            let filler = disk.directory.appendingPathComponent("filler")
            let free = try #require(try FileManager.default.attributesOfFileSystem(forPath: disk.directory.path)[.systemFreeSize] as? Int)
            _ = FileManager.default.createFile(atPath: filler.path, contents: Data(count: max(0, free - 300 * 1024)))
            var acknowledged = 10
            var full: RawResponse?
            for batch in 0..<100 {
                let response = try api.post("notes", notes(from: 1_000 + batch * 100, count: 100))
                if response.status == 200 { acknowledged += 100 } else { full = response; break }
            }
            let refused = try #require(full, "the disk never filled")
            #expect(refused.status == 507, "\(refused.text)")
            #expect(try refused.json()["type"] == "urn:cartograph:problem:insufficient-storage")
            let ready = try server.client.send("GET", "/readyz").json()
            #expect(ready["storeFaults"]?.arrayValue?.first?["problem"] == "urn:cartograph:problem:insufficient-storage", "\(ready)")
            #expect(try api.get("entities/Note/objects?count=true&limit=1")["total"] == .number(JSONNumber(Int64(acknowledged))),
                    "every acknowledged note is there, none of the refused payload")
            // A migration (its DDL and indexes in one transaction) on a disk with no byte left is refused the
            // same way and changes nothing.
            let squeeze = disk.directory.appendingPathComponent("squeeze")
            let left = try #require(try FileManager.default.attributesOfFileSystem(forPath: disk.directory.path)[.systemFreeSize] as? Int)
            _ = FileManager.default.createFile(atPath: squeeze.path, contents: Data(count: left))
            let grown: JSONValue = ["entities": [["name": "Note", "attributes": [
                ["name": "id", "type": "integer64"], ["name": "text", "type": "string"], ["name": "rank", "type": "integer64", "indexed": true, "default": 7]]]]]
            let migration = try server.client.sendJSON("PUT", api.base, grown, token: api.key)
            #expect(migration.status == 507, "\(migration.text)")
            #expect(try migration.json()["type"] == "urn:cartograph:problem:insufficient-storage")
            #expect(try server.client.send("GET", api.base, token: api.key).json()["version"] == 1)

            try FileManager.default.removeItem(at: filler)
            try FileManager.default.removeItem(at: squeeze)
            #expect(try api.map("notes", notes(from: 100_000, count: 100))["inserted"] == 100, "writes work again without a restart")
            #expect(try server.client.send("GET", "/readyz").json()["storeFaults"] == nil)
            #expect(try api.get("entities/Note/objects?count=true&limit=1")["total"] == .number(JSONNumber(Int64(acknowledged + 100))))
        }
    }

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
            #expect(try second.client.sendJSON("PUT", api.base, notesModel, token: key).status == 201)
            #expect(try second.client.sendJSON("PUT", api.base + "/mappings/notes", notesMapping, token: key).status == 201)
            try api.map("notes", notes(from: 0, count: 10))
        }
        try #require(disk.remount(readOnly: true))
        let server = try LiveServer(dataDirectory: directory)
        defer { server.stop() }
        let api = ModelAPI(client: server.client, key: key, base: "/v1/tenants/acme/models/m")
        let refused = try api.post("notes", notes(from: 10, count: 10))
        #expect(refused.status == 503, "\(refused.text)")
        #expect(try refused.json()["type"] == "urn:cartograph:problem:store-unavailable")
        #expect(refused.header("Retry-After") != nil)
        #expect(try server.client.send("GET", "/readyz").json()["storeFaults"]?.arrayValue?.first?["problem"]
                == "urn:cartograph:problem:store-unavailable")

        try #require(disk.remount(readOnly: false))
        #expect(try api.map("notes", notes(from: 10, count: 10))["inserted"] == 10, "the store was opened again, no restart")
        #expect(try api.get("entities/Note/objects?count=true&limit=1")["total"] == 20, "nothing acknowledged was lost")
        #expect(try server.client.send("GET", "/readyz").json()["storeFaults"] == nil)
    }

    @Test func R_S4_aDamagedStoreIs503TakesNoWritesAndIsListedOnReadyz() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cartograph-corrupt-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try withNotesServer(in: directory) { _, api in try api.map("notes", notes(from: 0, count: 200)) }
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
        let write = try api.post("notes", notes(from: 1_000, count: 1))
        #expect(write.status == 503, "\(write.text)")
        #expect(try write.json()["type"] == "urn:cartograph:problem:store-corrupt")
        let ready = try server.client.send("GET", "/readyz")
        #expect(ready.status == 200, "the server serves its other stores")
        #expect(try ready.json()["storeFaults"]?.arrayValue?.first?["model"] == "m")
        #expect(server.logContains("storage fault") && server.logContains("m.sqlite"), "the log names the file")
    }
}
