// The compacted change feed (docs/change-feed.md): one entry per object at its latest change (R-D4),
// followers paging while writers commit (R-D4), the head (R-D6), the epoch (R-D7), and stores whose
// feed was written in the earlier one-row-per-change layout.
import Foundation
import Testing
import CartographCore
import CartographMapping
@testable import CartographStore

struct ChangeFeedTests {
    private func page(_ store: ModelStore, since: Int64 = 0, limit: Int = 100) throws -> ChangeFeedPage {
        try store.read { (reader) throws(CartographError) in try reader.changes(since: since, limit: limit) }
    }

    private func rename(_ store: ModelStore, team id: Int64, to name: Int64) throws -> Int64 {
        try store.write { (tx) throws(CartographError) in
            let team = try required(try tx.object(entity: "Team", key: "\(id)"))
            try tx.update(id: team.id, entity: "Team", values: ["id": .integer(name)])
        }.changeSeq
    }

    @Test func R_D4_anObjectChangedSeveralTimesAppearsOnceAtItsLatestChange() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in
            for n in 1...3 { _ = try tx.insert(entity: "Team", values: ["id": .integer(Int64(n))]) }
        }
        _ = try rename(store, team: 1, to: 10)
        let last = try rename(store, team: 10, to: 11)
        let changes = try page(store).changes
        #expect(changes.map { $0["key"] } == [2, 3, 11], "team 1 only once, last, as it stands now")
        #expect(changes.last?["seq"]?.numberValue?.int64Value == last)
        #expect(changes.last?["object"]?["id"] == 11)
        // A write that changes nothing adds nothing: the head stays where it was.
        let (_, seq) = try store.write { (tx) throws(CartographError) in
            let team = try required(try tx.object(entity: "Team", key: "2"))
            try tx.update(id: team.id, entity: "Team", values: ["id": .integer(2)])
        }
        #expect(seq == last)
        #expect(try page(store).changes.count == 3)
    }

    /// New objects are written to the feed a run at a time: the runs around a deletion and an update still
    /// give each object the next sequence number, in first-touch order.
    @Test func R_D4_runsOfNewObjectsGetDenseSequenceNumbersInFirstTouchOrderAroundADeletion() throws {
        let store = try makeStore()
        let old = try store.write { (tx) throws(CartographError) in
            try tx.insert(entity: "Team", values: ["id": .integer(1)])
        }.value
        let head = try page(store).next
        // Five new teams (one run), one of them deleted in the same transaction (it leaves no entry), an
        // older team changed between them, then three new characters (a run of another entity).
        _ = try store.write { (tx) throws(CartographError) in
            var teams: [Int64] = []
            for n in 2...4 { teams.append(try tx.insert(entity: "Team", values: ["id": .integer(Int64(n))])) }
            try tx.update(id: old, entity: "Team", values: ["id": .integer(100)])
            for n in 5...6 { teams.append(try tx.insert(entity: "Team", values: ["id": .integer(Int64(n))])) }
            try tx.delete(id: teams[1], entity: "Team")
            for n in 7...9 { _ = try tx.insert(entity: "Character", values: ["id": .integer(Int64(n))]) }
        }
        let changes = try page(store, since: head).changes
        #expect(changes.map { $0["key"] } == [2, 4, 100, 5, 6, 7, 8, 9])
        #expect(changes.map { $0["seq"]?.numberValue?.int64Value } == (1...8).map { head + Int64($0) })
    }

    /// A follower reads two entries a page while a writer changes objects it has read and objects it has
    /// not reached yet: when it reaches the head it holds exactly what the store holds.
    @Test func R_D4_aFollowerPagingWhileWritersCommitReachesEveryFinalState() throws {
        let store = try makeStore()
        _ = try store.write { (tx) throws(CartographError) in
            for n in 1...8 { _ = try tx.insert(entity: "Team", values: ["id": .integer(Int64(n))]) }
        }
        var mirror: [Int64: JSONValue] = [:]
        var since: Int64 = 0
        var round = 0
        while true {
            let next = try page(store, since: since, limit: 2)
            for change in next.changes {
                if change["op"] == "delete" {
                    mirror = mirror.filter { $0.value["_entity"] != change["entity"] || $0.value["id"] != change["key"] }
                } else {
                    let id = try #require(change["object"]?["_id"]?.numberValue?.int64Value)
                    mirror[id] = change["object"]
                }
            }
            if next.next == since { break }
            since = next.next
            round += 1
            // Round 1: one team already read (1) and one not yet read (8) change; round 2: team 1 again
            // and a deletion of one not yet read (7).
            if round == 1 {
                _ = try rename(store, team: 1, to: 100)
                _ = try rename(store, team: 8, to: 800)
            } else if round == 2 {
                _ = try rename(store, team: 100, to: 101)
                _ = try store.write { (tx) throws(CartographError) in
                    let team = try required(try tx.object(entity: "Team", key: "7"))
                    return try tx.delete(id: team.id, entity: "Team")
                }
            }
        }
        // Team.members is stored by Character.teams ("Character.teams" sorts first): the feed leaves it out.
        let stored = withoutDerived(try storeContents(store, roots: ["Team"]), ["Team": "members"])
        #expect(mirror == stored)
        #expect(Set(stored.values.compactMap { $0["id"]?.numberValue?.int64Value }) == [101, 2, 3, 4, 5, 6, 800])
    }

    @Test func R_D6_aSinceBeyondTheHeadIsRefusedNamingTheHead() throws {
        let store = try makeStore()
        let (_, head) = try store.write { (tx) throws(CartographError) in _ = try tx.insert(entity: "Team", values: ["id": .integer(1)]) }
        #expect(try page(store, since: head).changes.isEmpty)
        #expect(try page(store, since: head).next == head)
        #expect {
            _ = try page(store, since: head + 1)
        } throws: { error in
            guard let error = error as? CartographError else { return false }
            return error.code == .badRequest && error.detail.contains("(\(head))") && error.errors.first?.pointer == "/since"
        }
    }

    @Test func R_D7_everyStoreHasAnEpochThatOutlivesReopeningAndDiffersBetweenStores() throws {
        let store = try makeStore()
        let epoch = store.epoch
        #expect(epoch.count == 32 && epoch.allSatisfy(\.isHexDigit))
        #expect(try ModelStore(name: "library", path: store.path).epoch == epoch)
        #expect(try makeStore().epoch != epoch)
    }

    /// A store whose feed was written one row (with the object's JSON) per change, as before compaction:
    /// opening it keeps each object's latest entry, so the head and every follower's position stay valid.
    @Test func R_D4_aFeedOfTheEarlierLayoutIsCompactedWhenTheStoreOpens() throws {
        let store = try makeStore()
        var ids: [Int64] = []
        _ = try store.write { (tx) throws(CartographError) in
            ids = try (1...2).map { (n) throws(CartographError) in try tx.insert(entity: "Team", values: ["id": .integer(Int64(n))]) }
        }
        // Rewrite the file's feed as the earlier layout held it: team 1 changed at 1 and 3, team 2 at 2,
        // a team with _id 99 deleted at 4.
        let connection = try SQLiteConnection(path: store.path)
        try connection.execute("""
            DROP TABLE _cartograph_feed;
            DELETE FROM _cartograph_meta WHERE key = 'epoch';
            CREATE TABLE _cartograph_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, op TEXT NOT NULL, entity TEXT NOT NULL,
                object_id INTEGER NOT NULL, key TEXT NOT NULL, object TEXT, at INTEGER NOT NULL);
            """)
        for (op, id, key, at) in [("upsert", ids[0], "1", 0), ("upsert", ids[1], "2", 0), ("upsert", ids[0], "1", 0),
                                  ("delete", 99, "9", 1_700_000_000_000)] as [(String, Int64, String, Int64)] {
            try connection.run("INSERT INTO _cartograph_changes (op, entity, object_id, key, object, at) VALUES (?, 'Team', ?, ?, '{}', ?)",
                               [.text(op), .integer(id), .text(key), .integer(at)])
        }
        let reopened = try ModelStore(name: "library", path: store.path)
        let changes = try page(reopened).changes
        #expect(changes.map { $0["seq"] } == [2, 3, 4])
        #expect(changes.map { $0["key"] } == [2, 1, 9])
        #expect(changes.map { $0["op"] } == ["upsert", "upsert", "delete"])
        #expect(changes[2]["deletedAt"] == "2023-11-14T22:13:20.000Z")
        #expect(reopened.epoch.count == 32)
        #expect(try connection.rows("SELECT name FROM sqlite_master WHERE name = '_cartograph_changes'").isEmpty)
        // The next write continues after the old head.
        let (_, seq) = try reopened.write { (tx) throws(CartographError) in _ = try tx.insert(entity: "Team", values: ["id": .integer(3)]) }
        #expect(seq == 5)
    }
}
