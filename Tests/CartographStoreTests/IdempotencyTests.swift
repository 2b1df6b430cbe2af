// R-P11's Idempotency-Key, checked and stored inside the write transaction (docs/mapping.md, "Posting
// a payload"): two concurrent requests with one key apply the payload once.
import Foundation
import Synchronization
import Testing
import CartographCore
import CartographMapping
import CartographTesting
@testable import CartographStore
import CartographHTTP

/// What the two requests saw, shared by their threads.
private final class Requests: Sendable {
    let applied = Atomic<Int>(0)
    let responses = Mutex<[JSONValue]>([])
}

struct IdempotencyTests {
    /// The first request is still mapping (inside its transaction) when the second, with the same key and
    /// body, arrives: the second must wait and answer the first's stored result, not apply the payload again.
    @Test func R_P11_twoConcurrentRequestsWithOneKeyApplyThePayloadOnce() throws {
        let store = try makeStore()
        // A pooled read connection exists already (opening one can wait for the writer's lock, which
        // would hide a lookup made outside the transaction).
        _ = try store.read { (r) throws(CartographError) in try r.page(ObjectQuery(entity: "Team")) }
        let requests = Requests()
        let firstIsInside = DispatchSemaphore(value: 0)
        @Sendable func post(signalling: Bool) {
            let request: (key: String, requestHash: [UInt8]) = ("retry-1", [1, 2, 3])
            let response = try? store.applyPayload(idempotency: request, dryRun: false, answer: ResultDocument.bytes) { (tx) throws(CartographError) -> MappingResult in
                let n = requests.applied.add(1, ordering: .relaxed).newValue
                if signalling {
                    firstIsInside.signal()
                    Thread.sleep(forTimeInterval: 0.3)  // the second request arrives meanwhile
                }
                _ = try tx.insert(entity: "Team", values: ["id": .integer(Int64(n))])
                var result = MappingResult()
                result.inserted = 1
                return result
            }
            requests.responses.withLock { $0.append(response.flatMap { try? JSONReader().parse($0.body) } ?? .null) }
        }
        // Threads of their own, as the server's request threads are (a dispatch queue may not start the
        // second while the first sleeps).
        let done = DispatchSemaphore(value: 0)
        Thread { post(signalling: true); done.signal() }.start()
        firstIsInside.wait()
        Thread { post(signalling: false); done.signal() }.start()
        done.wait()
        done.wait()
        #expect(requests.applied.load(ordering: .relaxed) == 1)
        let answers = requests.responses.withLock { $0 }
        #expect(answers.count == 2)
        #expect(answers.first == answers.last, "the second answers the first's stored result")
        #expect(answers.first?["changeSeq"] != nil)
        #expect(answers.first?["inserted"] == 1)
        let teams = try store.read { (r) throws(CartographError) in try r.page(ObjectQuery(entity: "Team")) }.items
        #expect(teams.count == 1)
    }

    @Test func R_P11_aKeyReusedWithAnotherRequestIsRefusedAndAppliesNothing() throws {
        let store = try makeStore()
        let body = { (tx: StoreTransaction) throws(CartographError) -> MappingResult in
            _ = try tx.insert(entity: "Team", values: ["id": .integer(1)])
            return MappingResult()
        }
        _ = try store.applyPayload(idempotency: ("k", [1]), dryRun: false, answer: ResultDocument.bytes, body)
        #expect {
            _ = try store.applyPayload(idempotency: ("k", [2]), dryRun: false, answer: ResultDocument.bytes, body)
        } throws: { error in (error as? CartographError)?.code == .unprocessable }
        let teams = try store.read { (r) throws(CartographError) in try r.page(ObjectQuery(entity: "Team")) }.items
        #expect(teams.count == 1)
    }

    /// A key answers its retries for `idempotencyKeyLifetime` by the store's clock, and no longer: once the
    /// clock has moved past it, the key with another request is a new request. The test moves the clock
    /// instead of sleeping, so a time read from anywhere but the store's clock would keep the key alive.
    @Test func R_P11_aKeyExpiresOnceTheStoresClockPassesItsLifetime() throws {
        let time = TestClock()
        let store = try makeStore(clock: time.clock)
        func insertTeam(_ id: Int64) -> (StoreTransaction) throws(CartographError) -> MappingResult {
            { (tx) throws(CartographError) -> MappingResult in
                _ = try tx.insert(entity: "Team", values: ["id": .integer(id)])
                return MappingResult()
            }
        }
        _ = try store.applyPayload(idempotency: ("k", [1]), dryRun: false, answer: ResultDocument.bytes, insertTeam(1))
        time.advance(hours: ModelStore.idempotencyKeyLifetime / 3600 - 0.1)
        #expect {
            _ = try store.applyPayload(idempotency: ("k", [2]), dryRun: false, answer: ResultDocument.bytes, insertTeam(2))
        } throws: { error in (error as? CartographError)?.code == .unprocessable }
        time.advance(hours: 0.2)
        _ = try store.applyPayload(idempotency: ("k", [2]), dryRun: false, answer: ResultDocument.bytes, insertTeam(2))
        let teams = try store.read { (r) throws(CartographError) in try r.page(ObjectQuery(entity: "Team")) }.items
        #expect(teams.count == 2, "the expired key's new request was applied")
    }
}
