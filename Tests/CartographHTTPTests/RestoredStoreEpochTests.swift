// R-D7 (docs/change-feed.md): a store restored from an older copy gets a new epoch. The copy lacks the
// writes made after it was taken, and hands their sequence numbers out again to new writes: a follower
// that kept its position would never see those. Each test puts a copy back as an operator or a restore
// step would — with the volume lost (no sidecar left), or by hand over the live file — and follows the
// feed through the application as docs/change-feed.md tells a follower to; one reads the notice the
// operator gets in a live server's log.
import Foundation
import Testing
import CartographCore
import CartographHTTP
import CartographStore
import CartographTesting

private let notesModel: JSONValue = ["entities": [
    ["name": "Note", "userInfo": ["identityAttributes": "id"], "attributes": [["name": "id", "type": "integer64"]]],
]]
private let notesMapping: JSONValue = ["entity": "Note", "keyPath": "notes", "attributes": ["id"]]

/// A follower as docs/change-feed.md describes one: it pages on from its position, and starts again from 0
/// when a page carries another epoch than the one it saved. It mirrors the notes' ids.
private struct Follower {
    var epoch: String?
    var since: Int64 = 0
    var ids: Set<Int64> = []
    var startedOver = 0

    /// Pages until the head.
    mutating func catchUp(_ api: ModelAPI) throws {
        while true {
            let answer = try api.client.send("GET", api.base + "/changes?since=\(since)&limit=1000", token: api.key)
            try #require(answer.status == 200, "a follower at \(since) (epoch \(epoch ?? "none")): \(answer.text)")
            let page = try answer.json()
            let pageEpoch = try #require(page["epoch"]?.stringValue)
            if let epoch, epoch != pageEpoch {
                (self.epoch, since, ids, startedOver) = (pageEpoch, 0, [], startedOver + 1)
                continue
            }
            epoch = pageEpoch
            for change in page["changes"]?.arrayValue ?? [] {
                let id = try #require(change["key"]?.numberValue?.int64Value)
                if change["op"] == "delete" { ids.remove(id) } else { ids.insert(id) }
            }
            let next = try #require(page["next"]?.numberValue?.int64Value)
            if next == since { return }
            since = next
        }
    }
}

/// The files of the tenant's model store, handled as an operator or a restore step would.
private struct StoreFiles {
    let server: InProcessServer
    let path: String

    init(_ api: ModelAPI) throws {
        server = try #require(api.client as? InProcessServer)
        path = server.application.stores.path(tenant: "acme", model: "m")
    }

    var sidecar: String { path + StoreInstance.sidecarSuffix }

    /// A consistent copy of the store as it is now (what Litestream's replica or a backup tool holds),
    /// unmarked: its instance id is the store's.
    func copy() throws -> String {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("copy-\(UUID().uuidString).sqlite").path
        try SQLiteConnection(path: path, readOnly: true).run("VACUUM INTO ?", [.text(copy)])
        return copy
    }

    /// The server lets go of the store (as a restart would), so its next request opens the file again.
    func close() { server.application.stores.closeStore(tenant: "acme", model: "m") }

    /// Puts `copy` in place of the store. `volumeLost`: every file of the tenant's directory is gone first,
    /// as on a new volume that a restore fills with the stores alone.
    func putBack(_ copy: String, volumeLost: Bool) throws {
        close()
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        let doomed = volumeLost ? try FileManager.default.contentsOfDirectory(atPath: directory.path).map { directory.appendingPathComponent($0).path }
            : [path, path + "-wal", path + "-shm"]
        for file in doomed where FileManager.default.fileExists(atPath: file) { try FileManager.default.removeItem(atPath: file) }
        try FileManager.default.moveItem(atPath: copy, toPath: path)
    }

    /// The instance id the store holds, read from its file.
    func instanceID() throws -> String? {
        try SQLiteConnection(path: path).rows("SELECT value FROM _cartograph_meta WHERE key = 'instance'").first?.first?.textValue
    }

    func writeSidecar(_ text: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: sidecar)) }
}

/// Posts the notes `ids` (one payload) and returns the change feed's head after the write.
@discardableResult
private func post(_ api: ModelAPI, _ ids: ClosedRange<Int>) throws -> Int64 {
    let result = try api.map("notes", ["notes": .array(ids.map { ["id": .number(JSONNumber(Int64($0)))] })])
    return try #require(result["changeSeq"]?.numberValue?.int64Value)
}

/// The notes the store holds.
/// A follower caught up with notes 1-20, then `copy` (holding notes 1-10) put back and notes 21-30 posted:
/// the follower sees a new epoch, starts over and ends with exactly 1-10 and 21-30.
private func followAcrossPutBack(_ api: ModelAPI, _ files: StoreFiles, _ copy: String, volumeLost: Bool,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws -> Follower {
    var follower = Follower()
    try follower.catchUp(api)
    let before = try #require(follower.epoch, sourceLocation: sourceLocation)
    try files.putBack(copy, volumeLost: volumeLost)
    try post(api, 21...30)
    try follower.catchUp(api)
    #expect(follower.epoch != before, sourceLocation: sourceLocation)
    #expect(follower.ids == Set((1...10).map(Int64.init) + (21...30).map(Int64.init)), sourceLocation: sourceLocation)
    return follower
}

private func storedIDs(_ api: ModelAPI) throws -> Set<Int64> {
    Set(try api.get("entities/Note/objects?limit=1000")["items"]?.arrayValue?.compactMap { $0["id"]?.numberValue?.int64Value } ?? [])
}

private func withNotes(_ body: (ModelAPI, StoreFiles) throws -> Void) throws {
    try ModelAPI.with(model: notesModel, mappings: ["notes": notesMapping]) { api in try body(api, try StoreFiles(api)) }
}

struct RestoredStoreEpochTests {
    /// The node and its volume are lost; the replacement restores the store from the replica, which lacks
    /// the last writes. New writes then take the lost writes' sequence numbers: a follower that kept its
    /// position would skip them. With a new epoch, it starts over and ends with exactly what the store holds.
    @Test func R_D7_aStoreRestoredFromAnOlderCopyGetsANewEpochWhenItsVolumeWasLost() throws {
        try withNotes { api, files in
            try post(api, 1...10)
            let replica = try files.copy()
            let lostHead = try post(api, 11...20)
            var follower = Follower()
            try follower.catchUp(api)
            #expect(follower.since == lostHead && follower.ids.count == 20)
            let before = try #require(follower.epoch)

            try files.putBack(replica, volumeLost: true)
            let head = try post(api, 21...35)
            #expect(head > lostHead, "the restored store handed the lost writes' sequence numbers out again")
            try follower.catchUp(api)
            #expect(follower.epoch != before, "a restored store keeps its epoch")
            #expect(follower.startedOver == 1)
            #expect(follower.ids == Set((1...10).map(Int64.init) + (21...35).map(Int64.init)))
            #expect(follower.ids == (try storedIDs(api)))
        }
    }

    /// An operator puts back, over the live store, a plain copy (cp, sqlite3's .backup) taken before the
    /// server last opened the store: the sidecar names the id of that open, not the copy's.
    @Test func R_D7_aStoreRestoredByHandFromACopyTakenBeforeItsLastOpenGetsANewEpoch() throws {
        try withNotes { api, files in
            try post(api, 1...10)
            let copy = try files.copy()
            try post(api, 11...12)
            files.close()  // a restart: the next request opens the store again
            try post(api, 13...20)
            let follower = try followAcrossPutBack(api, files, copy, volumeLost: false)
            #expect(follower.ids == (try storedIDs(api)))
        }
    }

    /// `cartograph backup-store` marks its copy: put back over the live store, even one taken since the store's
    /// last open (same instance id otherwise), or onto a lost volume, it opens with a new epoch.
    @Test(arguments: [false, true])
    func R_D7_aBackupOfBackupStorePutBackGetsANewEpoch(volumeLost: Bool) throws {
        try withNotes { api, files in
            try post(api, 1...10)
            let backup = FileManager.default.temporaryDirectory.appendingPathComponent("backup-\(UUID().uuidString).sqlite").path
            try StoreBackup.copy(store: files.path, to: backup)
            #expect(throws: CartographError.self) { try StoreBackup.copy(store: files.path, to: backup) }
            try post(api, 11...20)
            _ = try followAcrossPutBack(api, files, backup, volumeLost: volumeLost)
        }
    }

    /// The cluster's restore step marks each store it restored (scripts/cluster/node.py): the mark counts
    /// even for a store last written by a build that gave it no instance id.
    @Test func R_D7_aStoreTheRestoreStepMarkedGetsANewEpochEvenWithoutAnInstanceID() throws {
        try withNotes { api, files in
            try post(api, 1...10)
            let before = try #require(try api.get("changes")["epoch"]?.stringValue)
            files.close()
            try SQLiteConnection(path: files.path).run("DELETE FROM _cartograph_meta WHERE key = 'instance'")
            try files.writeSidecar(StoreInstance.restoredMark + "\n")
            #expect(try api.get("changes")["epoch"]?.stringValue != before)
        }
    }

    /// What must not change the epoch: reopening (a restart, a move through the replica that adopts the
    /// store's id), a store of a build before the check (no instance id, no sidecar), and a crash between
    /// the two writes of an open (the sidecar still accepts the store's previous id).
    @Test func R_D7_aStoreReopenedUpgradedOrInterruptedWhileOpeningKeepsItsEpoch() throws {
        try withNotes { api, files in
            try post(api, 1...10)
            let epoch = try #require(try api.get("changes")["epoch"]?.stringValue)
            let first = try #require(try files.instanceID())
            files.close()
            #expect(try api.get("changes")["epoch"]?.stringValue == epoch, "reopened")
            let second = try #require(try files.instanceID())
            #expect(second != first, "every open gives the store a new instance id")
            #expect(try String(contentsOfFile: files.sidecar, encoding: .utf8) == second + "\n")

            files.close()
            try SQLiteConnection(path: files.path).run("DELETE FROM _cartograph_meta WHERE key = 'instance'")
            try FileManager.default.removeItem(atPath: files.sidecar)
            #expect(try api.get("changes")["epoch"]?.stringValue == epoch, "a store of an older build, first opened by this one")
            #expect(try files.instanceID() != nil)

            files.close()
            try files.writeSidecar("\(try #require(try files.instanceID()))\n\(UUID().uuidString)\n")
            #expect(try api.get("changes")["epoch"]?.stringValue == epoch, "a crash after the sidecar took the next id")
            #expect(try storedIDs(api).count == 10)
        }
    }

    /// What the operator sees: the server logs one notice per store that opened as a restored copy, naming it
    /// with its new epoch and the one it replaced; nothing for a store that kept its epoch.
    @Test func R_D7_theServerLogsEachStoreThatOpenedAsARestoredCopy() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("restored-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("data/tenants/acme/m.sqlite").path
        /// A server on the data directory reads the feed's epoch, and says whether it logged a restored store.
        func epochAtStart() throws -> (epoch: String, logged: String?) {
            let server = try LiveServer(dataDirectory: directory)
            defer { server.stop() }
            let page = try server.client.send("GET", "/v1/tenants/acme/models/m/changes", token: server.adminToken)
            let epoch = try #require(try page.json()["epoch"]?.stringValue, "\(page.text)")
            let notice = "store restored from an older copy: its change feed has a new epoch, followers start again from 0"
            return (epoch, server.logContains(notice, timeout: 1) ? server.log : nil)
        }
        do {
            let server = try LiveServer(dataDirectory: directory)
            defer { server.stop() }
            let api = ModelAPI(client: server.client, key: server.adminToken, base: "/v1/tenants/acme/models/m")
            #expect(try server.client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).status == 201)
            #expect(try server.client.sendJSON("PUT", api.base, notesModel, token: server.adminToken).status == 201)
        }
        let kept = try epochAtStart()
        #expect(kept.logged == nil, "a restart keeps the epoch and says nothing")

        try FileManager.default.removeItem(atPath: store + StoreInstance.sidecarSuffix)  // the volume was lost
        let restored = try epochAtStart()
        #expect(restored.epoch != kept.epoch)
        let line = try #require(restored.logged?.split(separator: "\n").first { $0.contains("store restored from an older copy") })
        #expect(line.contains("notice") && line.contains("epoch=\(restored.epoch)") && line.contains("replacedEpoch=\(kept.epoch)")
                && line.contains("store=\(store)"), "\(line)")
    }

    /// Deleting a model deletes the instance file beside its store with its other files.
    @Test func R_D7_aDeletedModelTakesItsInstanceFileAlong() throws {
        try withNotes { api, files in
            try post(api, 1...3)
            #expect(FileManager.default.fileExists(atPath: files.sidecar))
            #expect(try api.client.send("DELETE", api.base, token: api.key).status == 204)
            #expect(!FileManager.default.fileExists(atPath: files.sidecar))
        }
    }
}
