// A mapping's raw archive, its dead letters and replay through a fixed mapping (R-P18, docs/mapping.md
// "Archive, replay and dead letters"), against a model store whose clock the test moves.
import Foundation
import Testing
@testable import CartographStore
import CartographCore
import CartographMapping
import CartographHTTP
import CartographTesting

struct ArchiveReplayTests {
    static let model: JSONValue = ["entities": [
        ["name": "Issue", "userInfo": ["identityAttributes": "number"],
         "attributes": [["name": "number", "type": "integer64"], ["name": "title", "type": "string"], ["name": "state", "type": "string"]]],
    ]]

    /// The mapping with its bug: the API's `state` is read from `status`, which it never sends.
    static func issues(stateFrom key: String = "status", archive: JSONValue = ["days": 30]) -> JSONValue {
        ["entity": "Issue", "keyPath": "items", "attributes": ["number": "number", "title": "title", key: "state"],
         "discardsInvalidObjectsOnInsert": true, "archive": archive]
    }

    static let first: JSONValue = ["items": [["number": 1, "title": "one", "state": "open"], ["title": "no number", "state": "closed"]]]
    static let second: JSONValue = ["items": [["number": 3, "title": "three", "state": "closed"]]]

    /// A store of the model with `mappings` registered, its clock `clock`.
    static func withStore(_ clock: TestClock, mappings: [(String, JSONValue)], _ body: (StoreHarness) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("archive-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = StoreHarness(store: try ModelStore(name: "m", path: directory.appendingPathComponent("m.sqlite").path, clock: clock.clock))
        try #require(try harness.registerModel(model) == .created)
        for (name, document) in mappings { try harness.registerMapping(name, document) }
        try body(harness)
    }

    @discardableResult
    /// Ingests `payload` through the registered mapping `name` as the payload route does; the answer document.
    static func post(_ harness: StoreHarness, _ name: String, _ payload: JSONValue, dryRun: Bool = false,
                     query: JSONObject = JSONObject(), quota: StorageQuota? = nil) throws -> JSONValue {
        let document = try #require(try harness.registeredMapping(name))
        let metadata: JSONValue = ["receivedAt": "2026-11-28T00:00:00Z", "query": .object(query), "header": ["user-agent": "fetcher/1"]]
        let ingested = try harness.store.ingest(payload.jsonBytes, mapping: .document(document, name: name), model: try harness.model(),
                                                options: IngestOptions(metadata: metadata, dryRun: dryRun, quota: quota), answer: ResultDocument.bytes)
        return try JSONReader().parse(ingested.body)
    }

    static func archived(_ harness: StoreHarness, _ name: String = "issues") throws -> [ArchivedPayload] {
        try harness.store.archivedPayloads(mapping: name, limit: 1000).items
    }

    static func replay(_ harness: StoreHarness, from: Int64, to: Int64, dryRun: Bool = false) throws -> [ReplayedPayload] {
        let outcome = try harness.store.replay(mapping: "issues", from: from, to: to, model: try harness.model(), dryRun: dryRun,
                                               maximumObjects: MappingEngine.defaultMaximumObjects, quota: nil)
        #expect(outcome.next == nil, "no time limit: the whole range")
        return outcome.payloads
    }

    /// Rows of an archive table, expired ones included (the listing never shows those).
    static func rowCount(_ harness: StoreHarness, _ table: String) throws -> Int64 {
        try harness.store.read { (reader) throws(CartographError) -> Int64 in
            do { return try reader.reader.connection.rows("SELECT count(*) FROM \(quoted(table))").first?.first?.integerValue ?? -1 } catch {
                throw CartographError.store(error, "count")
            }
        }
    }

    @Test func R_P18_aCommittedPayloadIsArchivedInItsOwnTransactionAndADryRunOrARefusalIsNot() throws {
        let clock = TestClock()
        let strict: JSONValue = ["entity": "Issue", "keyPath": "items", "attributes": ["number", "title"], "archive": ["days": 2]]
        try Self.withStore(clock, mappings: [("issues", Self.issues()), ("strict", strict)]) { harness in
            let answer = try Self.post(harness, "issues", Self.first, query: JSONObject([("repo", "octo/hello")]))
            let archived = try Self.archived(harness)
            #expect(archived.count == 1)
            let entry = try #require(archived.first)
            #expect(answer["archive"] == ["id": .number(JSONNumber(entry.id))])
            #expect(answer["changeSeq"]?.numberValue?.int64Value == entry.changeSeq)
            #expect(entry.bytes == Int64(Self.first.jsonBytes.count))
            #expect(entry.storedBytes > 0)
            #expect(entry.mappingVersion.count == 16)
            #expect(entry.metadata["query"] == ["repo": "octo/hello"])
            #expect(entry.metadata["header"]?["user-agent"] == "fetcher/1")
            #expect(entry.expiresAt - entry.receivedAt == 30 * 86_400_000)
            #expect(try harness.store.archivedBody(mapping: "issues", id: entry.id) == Self.first.jsonBytes, "the body as posted")

            let dry = try Self.post(harness, "issues", Self.second, dryRun: true)
            #expect(dry["archive"] == nil)
            #expect(throws: CartographError.self) { try Self.post(harness, "strict", ["items": [["title": "no number"]]]) }
            #expect(try Self.archived(harness).count == 1, "a dry run archives nothing")
            #expect(try Self.archived(harness, "strict").isEmpty, "a refused payload archives nothing")
            #expect(try Self.rowCount(harness, ArchiveTables.payloads) == 1)

            // Expiry: a payload of the mapping after its rows expired deletes them in its transaction.
            try Self.post(harness, "strict", ["items": [["number": 7, "title": "seven"]]])
            clock.advance(hours: 49)
            #expect(try Self.archived(harness, "strict").isEmpty, "expired rows are never listed")
            #expect(try Self.rowCount(harness, ArchiveTables.payloads) == 2, "nor deleted before the mapping's next payload")
            let later = try Self.post(harness, "strict", ["items": [["number": 8, "title": "eight"]]])
            #expect(try Self.archived(harness, "strict").map(\.id) == [try #require(later["archive"]?["id"]?.numberValue?.int64Value)])
            #expect(try Self.rowCount(harness, ArchiveTables.payloads) == 2, "the expired row was deleted, the new one kept")
        }
    }

    @Test func R_P18_R_P11_aRetryAnsweredFromItsIdempotencyKeyIsNotArchivedAgain() throws {
        try Self.withStore(TestClock(), mappings: [("issues", Self.issues())]) { harness in
            let document = try #require(try harness.registeredMapping("issues"))
            var answers: [JSONValue] = []
            for _ in 0..<2 {
                let options = IngestOptions(idempotency: ("retry-1", Array("same request".utf8)))
                let ingested = try harness.store.ingest(Self.second.jsonBytes, mapping: .document(document, name: "issues"), model: try harness.model(),
                                                        options: options, answer: ResultDocument.bytes)
                answers.append(try JSONReader().parse(ingested.body))
            }
            let archived = try Self.archived(harness)
            #expect(archived.count == 1)
            #expect(answers.map { $0["archive"]?["id"]?.numberValue?.int64Value } == [archived.first?.id, archived.first?.id],
                    "the stored answer names the archived payload")
        }
    }

    @Test func R_P18_R_S2_archivedBodiesCountTowardTheStorageQuota() throws {
        let plain: JSONValue = ["entity": "Issue", "keyPath": "items", "attributes": ["number", "title"]]
        try Self.withStore(TestClock(), mappings: [("issues", Self.issues()), ("plain", plain)]) { harness in
            // About 400 KB of hex digits no mapping reads: about 200 KB deflated.
            let blob = (0..<50_000).map { String(format: "%08x", UInt32(truncatingIfNeeded: $0 &* 2_654_435_761)) }.joined()
            let payload: JSONValue = ["items": [["number": 1, "title": "one", "blob": .string(blob)]]]
            try Self.post(harness, "plain", payload)
            let quota = StorageQuota(tenant: "acme", maxBytes: harness.store.usedBytes + 64 * 1024, otherStoresBytes: 0)
            #expect(try Self.post(harness, "plain", payload, quota: quota)["unchanged"] == 1, "the same payload unarchived grows nothing")
            let refused = try #require(throws: CartographError.self) { try Self.post(harness, "issues", payload, quota: quota) }
            #expect(refused.code == .quotaExceeded)
            #expect(try Self.archived(harness).isEmpty, "nothing was stored")
        }
    }

    @Test func R_P18_aDiscardedObjectIsKeptAsADeadLetterWithItsPointerReasonsAndRepresentation() throws {
        try Self.withStore(TestClock(), mappings: [("issues", Self.issues())]) { harness in
            let answer = try Self.post(harness, "issues", Self.first)
            let letters = try harness.store.deadLetters(mapping: "issues", limit: 10).items
            #expect(letters.count == 1)
            let letter = try #require(letters.first)
            #expect(letter.archiveID == answer["archive"]?["id"]?.numberValue?.int64Value)
            #expect(letter.pointer == "/items/1")
            #expect(letter.entity == "Issue")
            #expect(letter.representation == ["title": "no number", "state": "closed"])
            #expect(letter.reasons == answer["discarded"]?[0]?["errors"] ?? nil)
            #expect(letter.reasons.arrayValue?.isEmpty == false)
            // Keyset paging: one item per page, `next` naming the last.
            try Self.post(harness, "issues", ["items": [["title": "again"]]])
            let page = try harness.store.deadLetters(mapping: "issues", limit: 1)
            #expect(page.items.map(\.id) == [letter.id])
            #expect(page.next == letter.id)
            let rest = try harness.store.deadLetters(mapping: "issues", after: letter.id, limit: 1)
            #expect(rest.items.first?.representation == ["title": "again"])
            #expect(rest.next == nil)
        }
    }

    @Test func R_P18_replayingThroughAnUnchangedMappingChangesNothingAndThroughAFixedOneCorrectsTheObjects() throws {
        try Self.withStore(TestClock(), mappings: [("issues", Self.issues())]) { harness in
            try Self.post(harness, "issues", Self.first)
            try Self.post(harness, "issues", Self.second)
            let ids = try Self.archived(harness).map(\.id)
            #expect(ids.count == 2)
            #expect(try harness.object("Issue", "1")["state"] == .null, "the bug: state read from a key the API never sends")
            let head = try harness.feedHead()

            let unchanged = try Self.replay(harness, from: ids[0], to: ids[1])
            #expect(unchanged.map(\.archiveID) == ids, "in their original order")
            #expect(unchanged.map(\.unchanged) == [1, 1])
            #expect(unchanged.allSatisfy { $0.inserted == 0 && $0.updated == 0 && $0.deleted == 0 })
            #expect(unchanged.map(\.discarded) == [1, 0])
            #expect(try harness.feedHead() == head, "no change-feed entry (R-P4)")
            #expect(try Self.archived(harness).count == 2, "a replay is not archived again")

            try harness.registerMapping("issues", Self.issues(stateFrom: "state"))
            #expect(try Self.archived(harness).map(\.id) == ids, "registering the fixed mapping keeps the archive")
            let dry = try Self.replay(harness, from: ids[0], to: ids[1], dryRun: true)
            #expect(dry.map(\.updated) == [1, 1])
            #expect(dry.allSatisfy { $0.changeSeq == nil })
            #expect(dry.first?.changes == [["pointer": "/items/0", "entity": "Issue", "key": 1, "action": "update"]])
            #expect(try harness.object("Issue", "1")["state"] == .null, "a dry run stores nothing")
            #expect(try harness.feedHead() == head)

            let fixed = try Self.replay(harness, from: ids[0], to: ids[1])
            #expect(fixed.map(\.updated) == [1, 1])
            let sequences = fixed.compactMap(\.changeSeq)
            #expect(sequences.count == 2 && sequences[0] < sequences[1], "each payload committed in a transaction of its own")
            #expect(try harness.object("Issue", "1")["state"] == "open")
            #expect(try harness.object("Issue", "3")["state"] == "closed")
            #expect(try harness.feedHead() == head + 2, "one entry per corrected object")
            #expect(try Self.archived(harness).count == 2)
            // Replaying the fixed mapping again: nothing left to change.
            #expect(try Self.replay(harness, from: ids[0], to: ids[1]).allSatisfy { $0.updated == 0 && $0.unchanged == 1 })
        }
    }

    @Test func R_P18_aReplayStopsBetweenPayloadsToAnswerWithinTheTimeLimitAndSaysWhereToGoOn() throws {
        try Self.withStore(TestClock(), mappings: [("issues", Self.issues())]) { harness in
            for page in [Self.first, Self.second, Self.first] { try Self.post(harness, "issues", page) }
            let ids = try Self.archived(harness).map(\.id)
            // 2 s of a 10 s limit remain: less than a quarter, so only the first payload is replayed.
            let deadline = RequestDeadline(limit: .seconds(10), from: .now - .seconds(8))
            let outcome = try RequestDeadline.$current.withValue(deadline) { () throws -> ReplayOutcome in
                try harness.store.replay(mapping: "issues", from: ids[0], to: ids[2], model: try harness.model(), dryRun: false,
                                         maximumObjects: MappingEngine.defaultMaximumObjects, quota: nil)
            }
            #expect(outcome.payloads.map(\.archiveID) == [ids[0]])
            #expect(outcome.next == ids[1])
            let rest = try Self.replay(harness, from: try #require(outcome.next), to: ids[2])
            #expect(rest.map(\.archiveID) == [ids[1], ids[2]])
        }
    }

    @Test func R_P18_aReplayOfARangeThatIsNotKeptIs404NamingWhatRemains() throws {
        let clock = TestClock()
        try Self.withStore(clock, mappings: [("issues", Self.issues(archive: ["days": 1])), ("other", Self.issues())]) { harness in
            try Self.post(harness, "issues", Self.first)
            clock.advance(hours: 20)
            try Self.post(harness, "issues", Self.second)
            try Self.post(harness, "other", Self.second)
            let ids = try Self.archived(harness).map(\.id)
            let other = try #require(try Self.archived(harness, "other").first?.id)
            clock.advance(hours: 5)  // the first expired, the second is kept
            let error = try #require(throws: CartographError.self) { try Self.replay(harness, from: ids[0], to: ids[1]) }
            #expect(error.code == .notFound)
            #expect(error.detail.contains("archived payload \(ids[1]) remains"), "\(error.detail)")
            #expect(pointers(error) == ["/from"])
            let another = try #require(throws: CartographError.self) { try Self.replay(harness, from: ids[1], to: other) }
            #expect(pointers(another) == ["/to"], "another mapping's payload is not this one's")
            #expect(try Self.replay(harness, from: ids[1], to: ids[1]).count == 1)

            try harness.registerMapping("issues", ["entity": "Issue", "keyPath": "items", "attributes": ["number", "title"]])
            #expect(try Self.archived(harness).isEmpty, "a mapping registered without archive forgets it")
            let conflict = try #require(throws: CartographError.self) { try Self.replay(harness, from: ids[1], to: ids[1]) }
            #expect(conflict.code == .conflict)
        }
    }

    static let wrongArchives: [(JSONValue, String)] = [
        (["days": 0], "/archive/days"), (["days": 3651], "/archive/days"), (["days": .number(JSONNumber(validatedText: "1.5"))], "/archive/days"),
        (["days": "30"], "/archive/days"), ([:], "/archive/days"), (["days": 3, "weeks": 1], "/archive/weeks"), (30, "/archive"),
    ]

    @Test(arguments: wrongArchives)
    func R_P18_aWrongArchiveIsRefusedAtItsPointer(archive: JSONValue, pointer: String) throws {
        try Self.withStore(TestClock(), mappings: []) { harness in
            let error = try #require(throws: CartographError.self) { try harness.registerMapping("issues", Self.issues(archive: archive)) }
            #expect(error.code == .unprocessable)
            #expect(pointers(error) == [pointer], "\(error)")
        }
    }

    @Test func R_P18_archiveBelongsToTopLevelMappingsAndIsStoredNormalized() throws {
        try Self.withStore(TestClock(), mappings: []) { harness in
            try harness.registerMapping("issues", Self.issues(archive: ["days": 7]))
            #expect(try harness.registeredMapping("issues")?["archive"] == ["days": 7])
            let nested: JSONValue = ["entity": "Issue", "attributes": ["number"], "dynamic": ["keyPath": "kind", "map": [
                "x": ["entity": "Issue", "attributes": ["number"], "archive": ["days": 7]]]]]
            let error = try #require(throws: CartographError.self) { try harness.registerMapping("nested", nested) }
            #expect(pointers(error) == ["/dynamic/map/x/archive"], "\(error)")
        }
    }
}

fileprivate extension JSONValue {
    /// The element at `index` of an array; nil for anything else.
    subscript(index: Int) -> JSONValue? { arrayValue.flatMap { $0.indices.contains(index) ? $0[index] : nil } }
}
