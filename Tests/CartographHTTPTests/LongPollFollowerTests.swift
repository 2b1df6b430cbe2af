// R-D8 (issue 30, docs/change-feed.md): followers long-polling a feed are woken at most once per
// interval and answered from one read per position; a parked poll is answered only while its key
// and its tenant still let it in. In process: the application parks a poll as the transport does.
import Foundation
import Synchronization
import Testing
import CartographCore
@testable import CartographHTTP
import CartographTesting

private let ledgerModel: JSONValue = ["entities": [
    ["name": "Entry", "attributes": [["name": "id", "type": "integer64"], ["name": "memo", "type": "string"]]],
]]

/// An in-process server with tenant acme, its admin key, and model ledger with mapping entries.
private struct Ledger {
    static let base = "/v1/tenants/acme/models/ledger"
    let server: InProcessServer
    let admin: String

    init(longPollWakeInterval: Duration = ServerConfiguration().longPollWakeInterval) throws {
        server = try InProcessServer(longPollWakeInterval: longPollWakeInterval)
        admin = try #require(try server.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        try #require(try server.sendJSON("PUT", Self.base, ledgerModel, token: admin).status == 201)
        try #require(try server.sendJSON("PUT", Self.base + "/mappings/entries", ["entity": "Entry", "keyPath": "entries", "attributes": ["id", "memo"]],
                                          token: admin).status == 201)
    }

    /// Commits one entry.
    func write(_ id: Int, memo: String) throws {
        let response = try server.sendJSON("POST", Self.base + "/mappings/entries/payloads",
                                           ["entries": [["id": .number(JSONNumber(Int64(id))), "memo": .string(memo)]]], token: admin)
        try #require(response.status == 200, "\(response.text)")
    }

    /// The feed's head.
    func head() throws -> Int64 {
        try #require(try server.send("GET", Self.base + "/changes?limit=1000", token: admin).json()["next"]?.numberValue?.int64Value)
    }

    /// A new key of `scope`: its token and id.
    func key(_ scope: String) throws -> (token: String, id: String) {
        let created = try server.sendJSON("POST", "/v1/tenants/acme/keys", ["scope": .string(scope)], token: admin).json()
        return (try #require(created["apiKey"]?.stringValue), try #require(created["id"]?.stringValue))
    }

    /// Waits (at most 10 s) until `count` long polls are parked.
    func waitUntilParked(_ count: Int) throws {
        let deadline = Date().addingTimeInterval(10)
        while server.application.changeWaiters.parkedCount < count, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        try #require(server.application.changeWaiters.parkedCount == count)
    }
}

/// A request sent on its own thread, and its answer once it has one.
private final class Sent: Sendable {
    private let answer = Mutex<RawResponse?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Sends `GET target`.
    init(_ server: InProcessServer, _ target: String, token: String) {
        Thread { [self] in
            let response = try? server.send("GET", target, token: token)
            answer.withLock { $0 = response }
            done.signal()
        }.start()
    }

    /// The answer, waited for up to `seconds`; nil if there was none by then.
    func wait(seconds: Double = 10) -> RawResponse? {
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        return answer.withLock { $0 }
    }
}

@Suite struct LongPollFollowerTests {
    @Test func R_D8_aPollWhoseKeyIsRevokedWhileItWaitsAnswers401AndNothingWrittenAfter() throws {
        let ledger = try Ledger()
        try ledger.write(1, memo: "before the revocation")
        let head = try ledger.head()
        let revoked = try ledger.key("read"), kept = try ledger.key("read")
        let changes = "\(Ledger.base)/changes?since=\(head)&wait=30"
        let revokedPoll = Sent(ledger.server, changes, token: revoked.token)
        let keptPoll = Sent(ledger.server, changes, token: kept.token)
        try ledger.waitUntilParked(2)

        #expect(try ledger.server.send("DELETE", "/v1/tenants/acme/keys/\(revoked.id)", token: ledger.admin).status == 204)
        try ledger.write(2, memo: "written after the revocation")

        let refused = try #require(revokedPoll.wait())
        #expect(refused.status == 401)
        #expect(try refused.json()["type"] == "urn:cartograph:problem:unauthorized")
        #expect(!refused.text.contains("written after the revocation"), "\(refused.text)")
        let answered = try #require(keptPoll.wait(), "the other key's poll is answered by the write")
        #expect(answered.status == 200)
        let memos = try answered.json()["changes"]?.arrayValue?.map { $0["object"]?["memo"]?.stringValue }
        #expect(memos == ["written after the revocation"])
    }

    @Test func R_D8_aPollWhoseKeyIsRevokedEndsAt401WithoutWaitingForAWrite() throws {
        let ledger = try Ledger()
        let reader = try ledger.key("read")
        let poll = Sent(ledger.server, "\(Ledger.base)/changes?since=\(try ledger.head())&wait=30", token: reader.token)
        try ledger.waitUntilParked(1)
        let revokedAt = Date()
        #expect(try ledger.server.send("DELETE", "/v1/tenants/acme/keys/\(reader.id)", token: ledger.admin).status == 204)
        let refused = try #require(poll.wait(seconds: 5), "answered well before its 30 s")
        #expect(Date().timeIntervalSince(revokedAt) < 5)
        #expect(refused.status == 401)
    }

    @Test func R_D8_aPollOfATenantDeletedWhileItWaitsEndsAtOnceWith404() throws {
        let ledger = try Ledger()
        let reader = try ledger.key("read")
        let keyPoll = Sent(ledger.server, "\(Ledger.base)/changes?since=\(try ledger.head())&wait=30", token: reader.token)
        let adminPoll = Sent(ledger.server, "\(Ledger.base)/changes?since=\(try ledger.head())&wait=30", token: ledger.server.adminToken)
        try ledger.waitUntilParked(2)
        let deletedAt = Date()
        #expect(try ledger.server.send("DELETE", "/v1/tenants/acme", token: ledger.server.adminToken).status == 204)
        for poll in [keyPoll, adminPoll] {
            let ended = try #require(poll.wait(seconds: 5), "answered well before its 30 s")
            #expect(ended.status == 404)
            #expect(try ended.json()["detail"] == "No tenant named 'acme'.")
        }
        #expect(Date().timeIntervalSince(deletedAt) < 5)
        #expect(ledger.server.application.changeWaiters.parkedCount == 0)
    }

    /// One timer serves every deadline: a poll parked after a longer one, with a shorter wait, still ends at its own.
    @Test func R_D8_eachPollEndsAtItsOwnDeadline() throws {
        let ledger = try Ledger()
        let changes = "\(Ledger.base)/changes?since=\(try ledger.head())"
        let started = Date()
        let long = Sent(ledger.server, changes + "&wait=3", token: ledger.admin)
        try ledger.waitUntilParked(1)
        let short = Sent(ledger.server, changes + "&wait=1", token: ledger.admin)
        let shortAnswer = try #require(short.wait())
        let shortTook = Date().timeIntervalSince(started)
        let longAnswer = try #require(long.wait())
        let longTook = Date().timeIntervalSince(started)
        #expect(shortAnswer.status == 200 && longAnswer.status == 200)
        #expect(try shortAnswer.json()["changes"] == [] && longAnswer.json()["changes"] == [])
        #expect(shortTook >= 0.9 && shortTook < 2.5, "the 1 s poll ended after \(shortTook) s")
        #expect(longTook >= 2.9 && longTook < 5, "the 3 s poll ended after \(longTook) s")
    }

    /// Ten commits 20 ms apart, within one wake interval: each follower is answered at most twice — by the first
    /// commit if it ended a quiet spell, then by the rest together — rather than once per commit, and every
    /// follower receives every entry, once, in order.
    @Test func R_D8_commitsWithinAWakeIntervalWakeEachFollowerOnceAndEveryFollowerGetsEveryEntry() throws {
        let ledger = try Ledger(longPollWakeInterval: .seconds(2))
        let head = try ledger.head()
        let commits = 10, followerCount = 20
        let received = Mutex<[[Int64]]>([]), answers = Mutex<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<followerCount {
            let server = ledger.server, token = ledger.admin
            Thread {
                var since = head, seqs: [Int64] = [], count = 0
                while since < head + Int64(commits), let page = try? server.send("GET", "\(Ledger.base)/changes?since=\(since)&wait=30", token: token).json() {
                    count += 1
                    seqs += page["changes"]?.arrayValue?.compactMap { $0["seq"]?.numberValue?.int64Value } ?? []
                    since = page["next"]?.numberValue?.int64Value ?? since
                }
                received.withLock { $0.append(seqs) }
                answers.withLock { $0.append(count) }
                done.signal()
            }.start()
        }
        try ledger.waitUntilParked(followerCount)
        for id in 1...commits {
            try ledger.write(id, memo: "entry \(id)")
            Thread.sleep(forTimeInterval: 0.02)
        }
        for _ in 0..<followerCount { #expect(done.wait(timeout: .now() + 20) == .success) }
        let expected = Array(head + 1...head + Int64(commits))
        #expect(received.withLock { $0 } == Array(repeating: expected, count: followerCount), "every follower got every entry once, in order")
        let counts = answers.withLock { $0 }
        #expect(counts.count == followerCount && counts.allSatisfy { $0 <= 2 }, "answers per follower: \(counts)")
    }
}

/// The waiting itself: a wake reads once per poll key, however many requests share it.
@Suite struct ChangeWaitersTests {
    /// A poll that counts its calls and answers once `ready` is set.
    private final class Feed: Sendable {
        let polls = Mutex(0)
        let ready = Atomic<Bool>(false)

        func pending(key: String) -> PendingResponse {
            let response = PendingResponse.waiting(for: "acme/ledger", pollKey: key, until: .now + .seconds(30)) { [self] final in
                polls.withLock { $0 += 1 }
                return ready.load(ordering: .acquiring) || final ? HTTPResponse(status: 200, body: Array(key.utf8)) : nil
            }
            return response.pending!
        }
    }

    @Test func R_D8_aWakeReadsOncePerPositionForAllTheRequestsAtIt() throws {
        let waiters = ChangeWaiters(wakeInterval: .seconds(1))
        let feed = Feed()
        let answered = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        func park(_ key: String) {
            waiters.park(feed.pending(key: key), admission: { nil }) { response in
                answered.withLock { $0.append(String(decoding: response.body, as: UTF8.self)) }
                done.signal()
            }
        }
        // The first request wakes the quiet store at once, which reads and finds nothing: the next wake is a second away.
        park("since 7")
        let deadline = Date().addingTimeInterval(5)
        while feed.polls.withLock({ $0 }) == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        try #require(feed.polls.withLock { $0 } == 1)
        // 109 more requests at two positions, then entries and five commits, all before that wake.
        for index in 0..<109 { park(index < 99 ? "since 7" : "since 3") }
        feed.ready.store(true, ordering: .releasing)
        for _ in 0..<5 { waiters.notify("acme/ledger") }
        for _ in 0..<110 { #expect(done.wait(timeout: .now() + 5) == .success) }
        #expect(feed.polls.withLock { $0 } == 3, "one read per position for 110 requests and 5 commits")
        let answers = answered.withLock { $0 }
        #expect(answers.filter { $0 == "since 7" }.count == 100 && answers.filter { $0 == "since 3" }.count == 10)
        #expect(waiters.parkedCount == 0)
    }

    @Test func R_D8_aWakeSendsItsAnswersInSlicesAndShutdownSendsThemAllAtOnce() throws {
        let pause = Duration.milliseconds(300)
        let waiters = ChangeWaiters(wakeInterval: .seconds(1), slicePause: pause)
        let feed = Feed()
        let answeredAt = Mutex<[ContinuousClock.Instant]>([])
        let done = DispatchSemaphore(value: 0)
        func park(_ key: String) {
            waiters.park(feed.pending(key: key), admission: { nil }) { _ in
                answeredAt.withLock { $0.append(.now) }
                done.signal()
            }
        }
        park("since 7")
        let deadline = Date().addingTimeInterval(5)
        while feed.polls.withLock({ $0 }) == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        let followers = 2 * ChangeWaiters.answersPerSlice + 1
        for _ in 1..<followers { park("since 7") }
        feed.ready.store(true, ordering: .releasing)
        waiters.notify("acme/ledger")
        for _ in 0..<followers { #expect(done.wait(timeout: .now() + 10) == .success) }
        let times = answeredAt.withLock { $0 }.sorted()
        try #require(times.count == followers)
        // Three slices: 16, 16 and 1, each a pause after the one before.
        let first = times[0]
        #expect(times.filter { $0 - first < pause / 2 }.count == ChangeWaiters.answersPerSlice)
        #expect(times[ChangeWaiters.answersPerSlice] - first >= pause)
        #expect(times[followers - 1] - first >= pause * 2)
        #expect(waiters.parkedCount == 0)

        // Shutdown answers every parked request before it returns, however many.
        feed.ready.store(false, ordering: .releasing)
        let draining = ChangeWaiters(wakeInterval: .seconds(1), slicePause: pause)
        let drained = Mutex(0)
        for _ in 0..<followers {
            draining.park(feed.pending(key: "since 9"), admission: { nil }) { _ in drained.withLock { $0 += 1 } }
        }
        Thread.sleep(forTimeInterval: 0.05)
        draining.answerAll()
        #expect(drained.withLock { $0 } == followers)
    }
}
