// R-W1…R-W4 on the real server (docs/webhooks.md): a receiver on loopback (a Python process that checks
// every signature with Python's own hmac) sees every entry of the change feed at least once, across a
// receiver outage and a restart of the server on its data directory; a run of failures disables the
// webhook, a PUT enables it again; a redirect is a failed delivery.
import Foundation
import Testing
import CartographCore
import CartographTesting
@testable import CartographHTTP

struct ReceiverError: Error, CustomStringConvertible { var description: String { "the webhook receiver did not start" } }

/// The Python receiver (Fixtures/webhook-receiver.py) in a directory of its own.
final class WebhookReceiver {
    let directory: URL
    let port: Int
    private let process: Process

    init(secret: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cartograph-receiver-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/webhook-receiver.py")
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, secret, directory.path]
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        var found: Int?
        while found == nil, Date() < deadline, process.isRunning {
            found = (try? String(contentsOf: directory.appendingPathComponent("port"), encoding: .utf8)).flatMap { Int($0) }
            if found == nil { Thread.sleep(forTimeInterval: 0.02) }
        }
        guard let found else { kill(process.processIdentifier, SIGKILL); throw ReceiverError() }
        port = found
    }

    var url: String { "http://127.0.0.1:\(port)/hook" }

    /// "ok" (204), "fail" (500), "redirect" (302) or "slow" (204 after 3 seconds).
    func answer(_ mode: String) throws {
        try mode.write(to: directory.appendingPathComponent("mode"), atomically: true, encoding: .utf8)
    }

    /// Every request so far: `{"id", "timestamp", "valid", "answered", "body"}`.
    func requests() -> [JSONValue] {
        guard let text = try? String(contentsOf: directory.appendingPathComponent("received.jsonl"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONReader().parse(Array($0.utf8)) }
    }

    /// The entries of the deliveries it accepted, in the order received.
    func acceptedEntries() -> [JSONValue] {
        requests().filter { $0["answered"] == 204 }.flatMap { $0["body"]?["changes"]?.arrayValue ?? [] }
    }

    /// Waits until `condition` holds of the requests; false after `timeout` seconds.
    func wait(timeout: TimeInterval = 20, until condition: ([JSONValue]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(requests()) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition(requests())
    }

    deinit {
        // SIGKILL: the child inherits the test process's blocked signal mask, SIGTERM included.
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The Standard Webhooks specification's own example secret (24 bytes).
let webhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

@Suite(.serialized) struct WebhookLiveTests {
    static let base = "/v1/tenants/acme/models/comics"
    static let mapping: JSONValue = ["entity": "Character", "keyPath": "characters", "attributes": ["id": "identifier", "name": "name"]]

    /// Tenant `acme`, model `comics` and a mapping for characters; the tenant's admin key.
    static func setUp(_ server: LiveServer) throws -> String {
        let key = try #require(try server.client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        try #require(try server.client.sendJSON("PUT", base, comicsModel, token: key).status == 201)
        try #require(try server.client.sendJSON("PUT", base + "/mappings/characters", mapping, token: key).status == 201)
        return key
    }

    /// Posts characters `ids`, named "<prefix> <id>".
    static func post(_ server: LiveServer, key: String, ids: some Sequence<Int>, prefix: String) throws {
        let characters = ids.map { JSONValue.object(JSONObject([("id", .number(JSONNumber($0))), ("name", .string("\(prefix) \($0)"))])) }
        let answer = try server.client.sendJSON("POST", base + "/mappings/characters/payloads", ["characters": .array(characters)], token: key)
        try #require(answer.status == 200, "\(answer.text)")
    }

    static func webhook(_ server: LiveServer, key: String, name: String = "mirror") throws -> JSONValue {
        try server.client.send("GET", "/v1/tenants/acme/webhooks/\(name)", token: key).json()
    }

    /// The latest name the receiver accepted for each character key.
    static func names(in entries: [JSONValue]) -> [Int: String] {
        var names: [Int: String] = [:]
        for entry in entries where entry["entity"] == "Character" {
            if let key = entry["key"]?.numberValue?.int64Value, let name = entry["object"]?["name"]?.stringValue { names[Int(key)] = name }
        }
        return names
    }

    static func serverArguments(maxFailures: Int = 1000) -> [String] {
        ["--webhook-allow-host", "127.0.0.1", "--webhook-retry-base-ms", "50", "--webhook-max-failures", "\(maxFailures)", "--webhook-timeout", "5"]
    }

    /// A deleted webhook gets nothing more: the dispatcher keeps the list of webhooks between writes (so a
    /// write does not query the control store), and a DELETE empties it.
    @Test func R_W1_aDeletedWebhookReceivesNothingMore() throws {
        let receiver = try WebhookReceiver(secret: webhookSecret)
        let server = try LiveServer(arguments: Self.serverArguments())
        defer { server.stop(); try? FileManager.default.removeItem(at: server.dataDirectory) }
        let key = try Self.setUp(server)
        let put = try server.client.sendJSON("PUT", "/v1/tenants/acme/webhooks/mirror",
                                             ["url": .string(receiver.url), "secret": .string(webhookSecret), "models": [["name": "comics"]]], token: key)
        #expect(put.status == 201, "\(put.text)")
        try Self.post(server, key: key, ids: 1...3, prefix: "before")
        #expect(receiver.wait { _ in Self.names(in: receiver.acceptedEntries()).count == 3 })
        #expect(try server.client.send("DELETE", "/v1/tenants/acme/webhooks/mirror", token: key).status == 204)
        let delivered = receiver.requests().count
        try Self.post(server, key: key, ids: 4...6, prefix: "after")
        Thread.sleep(forTimeInterval: 1.5)  // more than the scheduler's sweep: a delivery would have been sent by now
        #expect(receiver.requests().count == delivered)
        #expect(Self.names(in: receiver.acceptedEntries()) == [1: "before 1", 2: "before 2", 3: "before 3"])
    }

    @Test func R_W2_R_W3_everyEntryArrivesSignedAcrossAReceiverOutageAndAServerRestart() throws {
        let receiver = try WebhookReceiver(secret: webhookSecret)
        var server = try LiveServer(arguments: Self.serverArguments())
        defer { server.stop(); try? FileManager.default.removeItem(at: server.dataDirectory) }
        let key = try Self.setUp(server)
        try Self.post(server, key: key, ids: 1...150, prefix: "first")

        let put = try server.client.sendJSON("PUT", "/v1/tenants/acme/webhooks/mirror",
                                             ["url": .string(receiver.url), "secret": .string(webhookSecret), "models": [["name": "comics"]]], token: key)
        #expect(put.status == 201, "\(put.text)")
        #expect(try put.json()["secretSet"] == true)
        #expect(!put.text.contains(webhookSecret), "the secret is never answered")

        // 150 entries: two batches (at most 100 each), in feed order.
        #expect(receiver.wait { Self.names(in: $0.filter { $0["answered"] == 204 }.flatMap { $0["body"]?["changes"]?.arrayValue ?? [] }).count == 150 })
        var accepted = receiver.requests().filter { $0["answered"] == 204 }
        #expect(accepted.allSatisfy { ($0["body"]?["changes"]?.arrayValue?.count ?? 0) <= 100 })
        let seqs = accepted.flatMap { $0["body"]?["changes"]?.arrayValue ?? [] }.compactMap { $0["seq"]?.numberValue?.int64Value }
        #expect(seqs == seqs.sorted(), "feed order")
        #expect(accepted.first?["body"]?["type"] == "cartograph.changes")
        #expect(accepted.first?["body"]?["model"] == "comics")
        #expect(accepted.first?["body"]?["epoch"]?.stringValue?.count == 32)
        // An entry is written as GET …/changes writes it.
        let feed = try server.client.send("GET", Self.base + "/changes?since=0&limit=1", token: key).json()
        #expect(accepted.first?["body"]?["changes"]?.arrayValue?.first == feed["changes"]?.arrayValue?.first)

        // (1) The receiver fails for a while: nothing is lost, the log shows the failures, then a success.
        try receiver.answer("fail")
        try Self.post(server, key: key, ids: 100...220, prefix: "second")
        #expect(receiver.wait { $0.filter { $0["answered"] == 500 }.count >= 3 })
        let failing = try Self.webhook(server, key: key)
        #expect(failing["state"] == "enabled")
        #expect((failing["consecutiveFailures"]?.numberValue?.int64Value ?? 0) >= 1)
        #expect(failing["deliveries"]?.arrayValue?.first?["outcome"] == "failed")
        #expect(failing["deliveries"]?.arrayValue?.first?["status"] == 500)
        try receiver.answer("ok")
        #expect(receiver.wait { requests in
            let names = Self.names(in: requests.filter { $0["answered"] == 204 }.flatMap { $0["body"]?["changes"]?.arrayValue ?? [] })
            return (100...220).allSatisfy { names[$0] == "second \($0)" }
        })
        let recovered = try Self.webhook(server, key: key)
        #expect(recovered["consecutiveFailures"] == 0)
        let outcomes = recovered["deliveries"]?.arrayValue?.compactMap { $0["outcome"]?.stringValue } ?? []
        #expect(outcomes.first == "delivered")
        #expect(outcomes.contains("failed"))
        // The attempts are counted by outcome (/metrics, R-S9).
        let metrics = try server.client.send("GET", "/metrics").text
        #expect(metrics.contains(#"cartograph_webhook_deliveries_total{outcome="delivered"}"#))
        #expect(metrics.contains(#"cartograph_webhook_deliveries_total{outcome="failed"}"#))

        // (2) Writes while the receiver is down, then the server restarts on its data directory: delivery
        // resumes from the stored position (not from 0), and nothing is missed.
        try receiver.answer("fail")
        let before = receiver.requests().count
        try Self.post(server, key: key, ids: 221...260, prefix: "third")
        #expect(receiver.wait { $0.count > before })
        let stored = try #require(try Self.webhook(server, key: key)["positions"]?.arrayValue?.first?["since"]?.numberValue?.int64Value)
        #expect(stored > 0)
        #expect(server.stop() == 0)
        try receiver.answer("ok")
        let afterStop = receiver.requests().count
        server = try LiveServer(arguments: Self.serverArguments(), dataDirectory: server.dataDirectory)
        #expect(receiver.wait { requests in
            let names = Self.names(in: requests.filter { $0["answered"] == 204 }.flatMap { $0["body"]?["changes"]?.arrayValue ?? [] })
            return (221...260).allSatisfy { names[$0] == "third \($0)" }
        })
        let resumed = receiver.requests().dropFirst(afterStop).filter { $0["answered"] == 204 }
        #expect(resumed.first?["body"]?["since"]?.numberValue?.int64Value == stored, "resumed from the stored position")

        // Every request was signed, and every character arrived with its last name.
        let requests = receiver.requests()
        #expect(requests.allSatisfy { $0["valid"] == true }, "every signature verifies")
        accepted = requests.filter { $0["answered"] == 204 }
        let names = Self.names(in: accepted.flatMap { $0["body"]?["changes"]?.arrayValue ?? [] })
        #expect(names.count == 260)
        #expect((1...99).allSatisfy { names[$0] == "first \($0)" })
        #expect((100...220).allSatisfy { names[$0] == "second \($0)" })
        #expect((221...260).allSatisfy { names[$0] == "third \($0)" })
        // A retried batch keeps its webhook-id.
        #expect(Set(requests.compactMap { $0["id"]?.stringValue }).allSatisfy { $0.hasPrefix("msg_") })
    }

    @Test func R_W3_aRunOfFailuresDisablesTheWebhookAndAPutEnablesItAgain() throws {
        let receiver = try WebhookReceiver(secret: webhookSecret)
        try receiver.answer("fail")
        try withLiveServer(arguments: Self.serverArguments(maxFailures: 3)) { (server) throws in
            let key = try Self.setUp(server)
            let document: JSONValue = ["url": .string(receiver.url), "secret": .string(webhookSecret),
                                       "models": [["name": "comics", "entities": ["Character"]]]]
            #expect(try server.client.sendJSON("PUT", "/v1/tenants/acme/webhooks/mirror", document, token: key).status == 201)
            try Self.post(server, key: key, ids: 1...5, prefix: "a")
            var disabled = JSONValue.null
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                disabled = try Self.webhook(server, key: key)
                if disabled["state"] == "disabled" { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
            #expect(disabled["state"] == "disabled")
            #expect(disabled["consecutiveFailures"] == 3)
            #expect(disabled["disabledReason"]?.stringValue?.contains("answered 500") == true)
            #expect(disabled["deliveries"]?.arrayValue?.count == 3)
            Thread.sleep(forTimeInterval: 0.5)
            #expect(receiver.requests().count == 3, "a disabled webhook sends nothing")

            try receiver.answer("ok")
            // Enabled again by a PUT (the secret may be left out: the stored one is kept).
            let again = try server.client.sendJSON("PUT", "/v1/tenants/acme/webhooks/mirror",
                                                   ["url": .string(receiver.url), "models": [["name": "comics", "entities": ["Character"]]]], token: key)
            #expect(again.status == 200)
            #expect(try again.json()["state"] == "enabled")
            #expect(try again.json()["consecutiveFailures"] == 0)
            #expect(receiver.wait { Self.names(in: $0.filter { $0["answered"] == 204 }.flatMap { $0["body"]?["changes"]?.arrayValue ?? [] }).count == 5 })
            #expect(receiver.requests().allSatisfy { $0["valid"] == true })
            // Only Character entries: the publisher-less payload has none of another entity anyway, but the filter holds.
            #expect(receiver.acceptedEntries().allSatisfy { $0["entity"] == "Character" })
        }
    }

    @Test func R_W4_aRedirectIsAFailedDeliveryAndIsNotFollowed() throws {
        let receiver = try WebhookReceiver(secret: webhookSecret)
        try receiver.answer("redirect")
        try withLiveServer(arguments: Self.serverArguments()) { (server) throws in
            let key = try Self.setUp(server)
            #expect(try server.client.sendJSON("PUT", "/v1/tenants/acme/webhooks/mirror",
                                               ["url": .string(receiver.url), "secret": .string(webhookSecret), "models": [["name": "comics"]]],
                                               token: key).status == 201)
            try Self.post(server, key: key, ids: 1...2, prefix: "a")
            var state = JSONValue.null
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                state = try Self.webhook(server, key: key)
                if state["deliveries"]?.arrayValue?.isEmpty == false { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
            let last = state["deliveries"]?.arrayValue?.first
            #expect(last?["outcome"] == "failed")
            #expect(last?["status"] == 302)
            #expect(last?["error"]?.stringValue?.contains("redirects are not followed") == true)
            #expect(state["positions"]?.arrayValue?.first?["since"] == nil || state["positions"]?.arrayValue?.first?["since"] == 0)
        }
    }
    @Test func R_W3_R_D7_aModelRegisteredAgainIsDeliveredFromZeroInItsNewEpoch() throws {
        let receiver = try WebhookReceiver(secret: webhookSecret)
        try withLiveServer(arguments: Self.serverArguments()) { (server) throws in
            let key = try Self.setUp(server)
            #expect(try server.client.sendJSON("PUT", "/v1/tenants/acme/webhooks/mirror",
                                               ["url": .string(receiver.url), "secret": .string(webhookSecret), "models": [["name": "comics"]]],
                                               token: key).status == 201)
            try Self.post(server, key: key, ids: 1...3, prefix: "old")
            #expect(receiver.wait { Self.names(in: $0.flatMap { $0["body"]?["changes"]?.arrayValue ?? [] }).count == 3 })
            let oldEpoch = try #require(receiver.requests().last?["body"]?["epoch"]?.stringValue)

            // The model deleted and registered again: a new store, a new epoch, its feed from 1 again.
            #expect(try server.client.send("DELETE", Self.base, token: key).status == 204)
            try #require(try server.client.sendJSON("PUT", Self.base, comicsModel, token: key).status == 201)
            try #require(try server.client.sendJSON("PUT", Self.base + "/mappings/characters", Self.mapping, token: key).status == 201)
            try Self.post(server, key: key, ids: 1...2, prefix: "new")
            #expect(receiver.wait { $0.contains { $0["body"]?["epoch"]?.stringValue != oldEpoch && $0["answered"] == 204 } })
            let fresh = receiver.requests().filter { $0["body"]?["epoch"]?.stringValue != oldEpoch }
            #expect(fresh.first?["body"]?["since"] == 0, "started again from 0")
            #expect(Self.names(in: fresh.flatMap { $0["body"]?["changes"]?.arrayValue ?? [] }) == [1: "new 1", 2: "new 2"])
        }
    }
    @Test func R_W4_aReceiverSlowerThanTheTimeoutIsAFailedDelivery() throws {
        let receiver = try WebhookReceiver(secret: webhookSecret)
        try receiver.answer("slow")
        try withLiveServer(arguments: Self.serverArguments() + ["--webhook-timeout", "1"]) { (server) throws in
            let key = try Self.setUp(server)
            #expect(try server.client.sendJSON("PUT", "/v1/tenants/acme/webhooks/mirror",
                                               ["url": .string(receiver.url), "secret": .string(webhookSecret), "models": [["name": "comics"]]],
                                               token: key).status == 201)
            let started = Date()
            try Self.post(server, key: key, ids: 1...2, prefix: "a")
            var last: JSONValue?
            while Date().timeIntervalSince(started) < 20 {
                last = try Self.webhook(server, key: key)["deliveries"]?.arrayValue?.last
                if last != nil { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
            #expect(last?["outcome"] == "failed")
            #expect(last?["status"] == nil, "no answer in time")
            #expect(last?["error"]?.stringValue?.hasPrefix("no answer") == true, "\(String(describing: last))")
            #expect((last?["durationMs"]?.numberValue?.doubleValue ?? 0) < 2900, "ended at the timeout, not when the receiver answered")
            // The receiver recovers: the batch arrives.
            #expect(receiver.requests().allSatisfy { $0["answered"] == "late" })
            try receiver.answer("ok")
            #expect(receiver.wait { Self.names(in: $0.filter { $0["answered"] == 204 }.flatMap { $0["body"]?["changes"]?.arrayValue ?? [] }).count == 2 })
        }
    }
    /// The machine's own name passes the check at registration (it is not an address), and is refused before
    /// each delivery once it resolves to a loopback or private address. (Where the name resolves to a public
    /// address there is nothing to check here.)
    @Test func R_W4_aNameThatResolvesToALoopbackAddressIsRefusedBeforeDelivery() throws {
        let name = ProcessInfo.processInfo.hostName.lowercased()
        guard name != "localhost", WebhookAddressPolicy(allowedHosts: []).refusalAfterResolving(name, port: 443) != nil else { return }
        let receiver = try WebhookReceiver(secret: webhookSecret)
        try withLiveServer(arguments: Self.serverArguments()) { (server) throws in
            let key = try Self.setUp(server)
            let put = try server.client.sendJSON("PUT", "/v1/tenants/acme/webhooks/mirror",
                                                 ["url": .string("https://\(name):\(receiver.port)/hook"), "secret": .string(webhookSecret),
                                                  "models": [["name": "comics"]]], token: key)
            #expect(put.status == 201, "a name is not refused at registration: \(put.text)")
            try Self.post(server, key: key, ids: 1...2, prefix: "a")
            var last: JSONValue?
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                last = try Self.webhook(server, key: key)["deliveries"]?.arrayValue?.first
                if last != nil { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
            #expect(last?["outcome"] == "failed")
            #expect(last?["error"]?.stringValue?.contains("'\(name)' resolves to") == true, "\(String(describing: last))")
            #expect(receiver.requests().isEmpty, "nothing was sent")
        }
    }
}
