// A store migration interrupted by kill -9 (issue 14, "Bad input and safety"; docs/storage.md "The change
// feed"): a store whose feed has the earlier layout (one row per change) is compacted when it is opened,
// in one transaction. `cartograph map` opens such a store and is killed at growing delays, before,
// during and after the migration; each time the store must open, with nothing lost and nothing doubled.
import Foundation
import Testing
import CartographCore
import CartographTesting
@testable import CartographStore

private let teamsModel = #"{"entities": [{"name": "Team", "userInfo": {"identityAttributes": "id"}, "attributes": [{"name": "id", "type": "integer64"}, {"name": "name", "type": "string"}]}]}"#
private let teams = 20_000
/// Changes per team in the earlier feed: the migration keeps the last of each.
private let changesPerTeam = 3

struct StoreMigrationCrashTests {
    /// A store of `teams` teams whose feed is in the earlier layout, checkpointed into one file.
    private func legacyStore(at path: String) throws {
        let store = try ModelStore(name: "league", path: path)
        _ = try store.register(try ModelDocument.parse(json: try JSONReader().parse(teamsModel), name: "league"), allowDestructive: false)
        _ = try store.write { (tx) throws(CartographError) in
            for n in 1...teams { _ = try tx.insert(entity: "Team", values: ["id": .integer(Int64(n)), "name": .string("team \(n)")]) }
        }
        let connection = try SQLiteConnection(path: path)
        try connection.execute("""
            DROP TABLE _cartograph_feed;
            DELETE FROM _cartograph_meta WHERE key = 'epoch';
            CREATE TABLE _cartograph_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, op TEXT NOT NULL, entity TEXT NOT NULL,
                object_id INTEGER NOT NULL, key TEXT NOT NULL, object TEXT, at INTEGER NOT NULL);
            WITH RECURSIVE round(r) AS (SELECT 1 UNION ALL SELECT r + 1 FROM round WHERE r < \(changesPerTeam))
            INSERT INTO _cartograph_changes (op, entity, object_id, key, object, at)
                SELECT 'upsert', 'Team', t._id, t.id, '{"name": "' || t.name || '"}', 0 FROM round, Team AS t ORDER BY r, t._id;
            PRAGMA wal_checkpoint(TRUNCATE);
            """)
    }

    @Test func R_S4_aFeedMigrationKilledAtAnyPointLeavesAStoreThatOpensWithEveryChange() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("migration-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let seed = directory.appendingPathComponent("seed.sqlite").path
        try legacyStore(at: seed)
        let files = (model: directory.appendingPathComponent("model.json"), mapping: directory.appendingPathComponent("mapping.json"),
                     payload: directory.appendingPathComponent("payload.json"))
        try Data(teamsModel.utf8).write(to: files.model)
        try Data(#"{"entity": "Team", "attributes": {"id": "id", "name": "name"}}"#.utf8).write(to: files.mapping)
        try Data(#"[{"id": 1, "name": "renamed"}]"#.utf8).write(to: files.payload)

        /// Runs `cartograph map` on a fresh copy of the seed, killed after `delay` seconds (never when nil).
        func mapCopy(_ run: Int, killedAfter delay: Double?) throws -> (path: String, killed: Bool, seconds: Double) {
            let path = directory.appendingPathComponent("run-\(run).sqlite").path
            try FileManager.default.copyItem(atPath: seed, toPath: path)
            let process = Process()
            process.executableURL = LiveServer.binary
            process.arguments = ["map", "--model", files.model.path, "--mapping", files.mapping.path, "--store", path, files.payload.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let start = Date()
            try process.run()
            if let delay {
                Thread.sleep(forTimeInterval: delay)
                kill(process.processIdentifier, SIGKILL)
            }
            process.waitUntilExit()
            return (path, process.terminationReason == .uncaughtSignal, Date().timeIntervalSince(start))
        }
        // One run to its end times the whole map (start, migration, mapping); the kills land across that time.
        let whole = try mapCopy(0, killedAfter: nil)
        #expect(!whole.killed)
        var killedBeforeCommit = 0, killedAfterCommit = 0, completed = 0
        // The last run is never killed: however slow the machine is now, one map completes.
        for (run, fraction) in ([0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95] as [Double?] + [nil]).enumerated() {
            let (path, killed, _) = try mapCopy(run + 1, killedAfter: fraction.map { whole.seconds * $0 })
            let delay = Int(whole.seconds * (fraction ?? 0) * 1000)
            // What the kill left, before anything opens the store again.
            let raw = try SQLiteConnection(path: path)
            let legacyLeft = try !raw.rows("SELECT 1 FROM sqlite_master WHERE name = '_cartograph_changes'").isEmpty
            if killed { if legacyLeft { killedBeforeCommit += 1 } else { killedAfterCommit += 1 } } else { completed += 1 }

            let store = try ModelStore(name: "league", path: path)
            let page = try store.read { (reader) throws(CartographError) in try reader.changes(since: 0, limit: teams + 10) }
            let mapped = try raw.rows("SELECT name FROM Team WHERE id = 1").first?.first?.textValue == "renamed"
            #expect(page.entries.count == teams, "run \(run) (killed after \(delay) ms): one entry per team")
            #expect(page.next == Int64(teams * changesPerTeam) + (mapped ? 1 : 0), "run \(run): the head survives the migration")
            #expect(try raw.rows("SELECT count(*) FROM Team").first?.first?.integerValue == Int64(teams), "run \(run): no team lost or doubled")
            #expect(try raw.rows("SELECT name FROM sqlite_master WHERE name = '_cartograph_changes'").isEmpty, "run \(run): migrated on open")
            #expect(mapped || killed, "run \(run): a map that completed stored its payload")
        }
        #expect(completed >= 1, "the run that is not killed completes")
        #expect(killedBeforeCommit + killedAfterCommit >= 1, "some kill landed while the map ran (\(killedBeforeCommit) before the migration committed, \(killedAfterCommit) after)")
    }
}
