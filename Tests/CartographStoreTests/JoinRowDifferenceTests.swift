// A to-many stored in a join table is written as a difference (issue 29, docs/storage.md "Join
// tables"): rows of destinations that stay are left as they are, an unordered relationship named in
// another order is unchanged (R-P4), and an ordered one always reads back in the order written (R-M2).
import Foundation
import Testing
import CartographCore
import CartographMapping
import CartographTesting
@testable import CartographStore

/// A playlist's songs are ordered and have no inverse: a join table owned by the playlist.
private let playlistModel: JSONValue = [
    "entities": [
        ["name": "Playlist", "attributes": [["name": "id", "type": "integer64"]],
         "relationships": [["name": "songs", "destination": "Song", "toMany": true, "ordered": true]]],
        ["name": "Song", "attributes": [["name": "id", "type": "integer64"]]],
    ],
]

@Suite struct JoinRowDifferenceTests {
    /// The join rows of `source` as (destination, rowid), read on a connection of their own.
    private func joinRows(_ store: ModelStore, table: String, source: Int64) throws -> [Int64: Int64] {
        let connection = try SQLiteConnection(path: store.path, readOnly: true)
        var rows: [Int64: Int64] = [:]
        for row in try connection.rows("SELECT destination, rowid FROM \(quoted(table)) WHERE source = ?", [.integer(source)]) {
            rows[row[0].integerValue!] = row[1].integerValue!
        }
        return rows
    }

    private func feedHead(_ store: ModelStore) throws -> Int64 {
        try ChangeFeed.head(try SQLiteConnection(path: store.path, readOnly: true))
    }

    @Test func R_P4_aChangedToManyWritesOnlyTheJoinRowsOfDestinationsThatComeOrGo() throws {
        let store = try makeStore()
        let (ids, _) = try store.write { (tx) throws(CartographError) -> [Int64] in
            let teams = try (1...4).map { (n) throws(CartographError) in try tx.insert(entity: "Team", values: ["id": .integer(Int64(n))]) }
            let character = try tx.insert(entity: "Character", values: ["id": .integer(5)])
            try tx.setRelationship(id: character, entity: "Character", relationship: "teams", to: Array(teams[0..<3]))
            return teams + [character]
        }
        let (teams, character) = (Array(ids[0..<4]), ids[4])
        let before = try joinRows(store, table: "Character.teams", source: character)
        _ = try store.write { (tx) throws(CartographError) in
            try tx.setRelationship(id: character, entity: "Character", relationship: "teams", to: [teams[3], teams[2], teams[1]])
        }
        let after = try joinRows(store, table: "Character.teams", source: character)
        #expect(Set(after.keys) == [teams[1], teams[2], teams[3]])
        // The two teams that stayed kept their rows: deleted and inserted again, they would have new rowids.
        #expect(after[teams[1]] == before[teams[1]])
        #expect(after[teams[2]] == before[teams[2]])
        let read = try store.read { (r) throws(CartographError) in try r.object(entity: "Character", key: "5") }
        #expect(Set(read?["teams"]?.arrayValue ?? []) == [2, 3, 4])
    }

    @Test func R_P4_anUnorderedToManyNamedInAnotherOrderIsUnchanged() throws {
        let store = try makeStore()
        let (ids, _) = try store.write { (tx) throws(CartographError) -> [Int64] in
            let teams = try (1...3).map { (n) throws(CartographError) in try tx.insert(entity: "Team", values: ["id": .integer(Int64(n))]) }
            let character = try tx.insert(entity: "Character", values: ["id": .integer(5)])
            try tx.setRelationship(id: character, entity: "Character", relationship: "teams", to: teams)
            return teams + [character]
        }
        let head = try feedHead(store)
        let before = try joinRows(store, table: "Character.teams", source: ids[3])
        let (touched, _) = try store.write { (tx) throws(CartographError) -> Int in
            try tx.setRelationship(id: ids[3], entity: "Character", relationship: "teams", to: [ids[2], ids[0], ids[1]])
            return tx.touched.count
        }
        #expect(touched == 0)
        #expect(try feedHead(store) == head)
        #expect(try joinRows(store, table: "Character.teams", source: ids[3]) == before)
    }

    @Test func R_M2_anOrderedToManyReadsBackInTheOrderLastWrittenAfterEveryDifference() throws {
        let store = try makeStore(playlistModel)
        let (songs, _) = try store.write { (tx) throws(CartographError) -> [Int64] in
            let songs = try (1...12).map { (n) throws(CartographError) in try tx.insert(entity: "Song", values: ["id": .integer(Int64(n))]) }
            _ = try tx.insert(entity: "Playlist", values: ["id": .integer(1)])
            return songs
        }
        let playlist = songs.last! + 1
        var random = SeededRandom(seed: 29)
        var list: [Int64] = []
        for step in 0..<200 {
            // Appends, prepends, removals, insertions in the middle, moves and whole new lists.
            var next = list
            switch step % 6 {
            case 0: next.append(contentsOf: songs.filter { !list.contains($0) }.shuffled(using: &random).prefix(2))
            case 1: next.insert(contentsOf: songs.filter { !list.contains($0) }.shuffled(using: &random).prefix(1), at: 0)
            case 2: if !next.isEmpty { next.remove(at: Int.random(in: 0..<next.count, using: &random)) }
            case 3: if let song = songs.first(where: { !list.contains($0) }) { next.insert(song, at: Int.random(in: 0...next.count, using: &random)) }
            case 4: next.shuffle(using: &random)
            default: next = Array(songs.shuffled(using: &random).prefix(Int.random(in: 0...8, using: &random)))
            }
            let kept = try joinRows(store, table: "Playlist.songs", source: playlist)
            _ = try store.write { (tx) throws(CartographError) in
                try tx.setRelationship(id: playlist, entity: "Playlist", relationship: "songs", to: next)
            }
            let read = try store.read { (r) throws(CartographError) in try r.object(entity: "Playlist", key: "1") }
            let expected = next.map { JSONValue.number(JSONNumber($0 - songs[0] + 1)) }
            #expect(read?["songs"]?.arrayValue ?? [] == expected, "step \(step)")
            if step % 6 == 0 {
                // An append keeps every row that was there.
                let rows = try joinRows(store, table: "Playlist.songs", source: playlist)
                #expect(kept.allSatisfy { rows[$0.key] == $0.value }, "step \(step)")
            }
            list = next
        }
    }

    @Test func R_M2_newDestinationsOfAnOrderedListFitBetweenTheStayersOrTheListIsWrittenAgain() {
        // Stayers 10 at 0 and 11 at 5: two new songs between them take 1 and 2, one after 11 takes 6,
        // one before 10 takes -1.
        let placed = StoreTransaction.positions(of: [9, 10, 1, 2, 11, 3], keeping: [10: 0, 11: 5], staying: [10, 11])
        #expect(placed?.map { $0.destination } == [9, 1, 2, 3])
        #expect(placed?.map { $0.position } == [-1, 1, 2, 6])
        // No room: stayers at 0 and 1 with a song between them.
        #expect(StoreTransaction.positions(of: [10, 1, 11], keeping: [10: 0, 11: 1], staying: [10, 11]) == nil)
        // Stayers out of order.
        #expect(StoreTransaction.positions(of: [11, 10], keeping: [10: 0, 11: 1], staying: [10, 11]) == nil)
    }
}
