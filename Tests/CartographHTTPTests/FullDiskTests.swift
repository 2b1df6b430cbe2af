// Storage faults the application answers (issue 17, docs/errors.md#storage-faults), in process: a full disk
// answers a problem of its own, shows on /readyz, loses nothing acknowledged and recovers without a
// restart. The disk is a small tmpfs of its own: mounting one needs root (CAP_SYS_ADMIN); where that is
// impossible the test is skipped, saying so. Faults met by a server starting over them: StorageFaultLiveTests.
import Foundation
import Testing
import CartographCore
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

/// Notes of a kilobyte each, to fill a disk with: tenant acme, model m, mapping notes.
enum KilobyteNotes {
    static let model: JSONValue = ["entities": [
        ["name": "Note", "attributes": [["name": "id", "type": "integer64"], ["name": "text", "type": "string"]]],
    ]]
    static let mapping: JSONValue = ["entity": "Note", "keyPath": "notes", "attributes": ["id", "text"]]

    /// `count` notes from `first`, each with a kilobyte of text.
    static func payload(from first: Int, count: Int) -> JSONValue {
        ["notes": .array((first..<first + count).map { ["id": .number(JSONNumber(Int64($0))), "text": .string(String(repeating: "n", count: 1_000))] })]
    }

    /// Tenant acme with model m and mapping notes registered on `server`; the model's API.
    static func register(on server: some TestServer) throws -> ModelAPI {
        let client = server.client
        let key = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        let api = ModelAPI(client: client, key: key, base: "/v1/tenants/acme/models/m")
        #expect(try client.sendJSON("PUT", api.base, model, token: key).status == 201)
        #expect(try client.sendJSON("PUT", api.base + "/mappings/notes", mapping, token: key).status == 201)
        return api
    }
}

@Suite(.serialized) struct FullDiskTests {
    @Test(.enabled(if: Tmpfs.available, "mounting a tmpfs needs root"))
    func R_S4_aFullDiskIs507ListedOnReadyzAndWritesResumeWhenThereIsRoom() throws {
        let disk = try Tmpfs(kibibytes: 8 * 1024)
        defer { disk.unmount() }
        let server = try InProcessServer(dataDirectory: disk.directory)
        let api = try KilobyteNotes.register(on: server)
        try api.map("notes", KilobyteNotes.payload(from: 0, count: 10))
        // Leave the store a few hundred kilobytes, then write until the disk is full.
        let filler = disk.directory.appendingPathComponent("filler")
        let free = try #require(try FileManager.default.attributesOfFileSystem(forPath: disk.directory.path)[.systemFreeSize] as? Int)
        _ = FileManager.default.createFile(atPath: filler.path, contents: Data(count: max(0, free - 300 * 1024)))
        var acknowledged = 10
        var full: RawResponse?
        for batch in 0..<100 {
            let response = try api.post("notes", KilobyteNotes.payload(from: 1_000 + batch * 100, count: 100))
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
        #expect(try api.map("notes", KilobyteNotes.payload(from: 100_000, count: 100))["inserted"] == 100, "writes work again without a restart")
        #expect(try server.client.send("GET", "/readyz").json()["storeFaults"] == nil)
        #expect(try api.get("entities/Note/objects?count=true&limit=1")["total"] == .number(JSONNumber(Int64(acknowledged + 100))))
    }
}
