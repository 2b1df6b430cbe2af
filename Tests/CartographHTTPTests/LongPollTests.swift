// R-D8 (docs/change-feed.md): `GET …/changes?since=N&wait=S` with nothing after N answers an empty page at
// its deadline, and at once when entries are there. In process: the application parks a poll as the
// transport does (what needs the socket is in LongPollLiveTests).
import Foundation
import Testing
import CartographCore
import CartographTesting

struct LongPollTests {
    static let changes = "/v1/tenants/acme/models/comics/changes"

    @Test func R_D8_aLongPollWithNothingNewAnswersAnEmptyPageAtItsDeadline() throws {
        try withComics { (server, key) throws in
            try seedComics(server, characters: 1)
            let head = try #require(try server.client.send("GET", Self.changes, token: key).json()["next"]?.numberValue?.int64Value)
            let started = Date()
            let response = try server.client.send("GET", "\(Self.changes)?since=\(head)&wait=1", token: key)
            #expect(response.status == 200)
            #expect(Date().timeIntervalSince(started) >= 0.9, "it waited")
            #expect(try response.json()["changes"] == [])
            #expect(try response.json()["next"]?.numberValue?.int64Value == head)
            #expect(response.header("X-Request-Id") != nil)
            // Entries already there answer at once, whatever the wait.
            #expect(try server.client.send("GET", "\(Self.changes)?since=0&wait=60", token: key).json()["changes"]?.arrayValue?.count == 2)
            let tooLong = try server.client.send("GET", "\(Self.changes)?wait=61", token: key)
            #expect(tooLong.status == 400)
            #expect(try tooLong.json()["errors"]?.arrayValue?.first?["pointer"] == "/wait")
        }
    }
}
