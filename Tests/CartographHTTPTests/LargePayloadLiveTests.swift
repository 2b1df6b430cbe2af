// A large payload on the real server: mapped by a request worker while the request threads go on
// answering (R-S11), and finished before a stopped server exits (R-S5). Its answer and rollback are in
// LargePayloadTests (in process).
import Foundation
import Synchronization
import Testing
import CartographCore
import CartographStore
import CartographTesting

/// The status of a payload posted on another thread and when it came, nil until it is answered.
private final class PayloadAnswer: Sendable {
    let answer = Mutex<(status: Int, at: Date)?>(nil)
}

@Suite(.serialized) struct LargePayloadLiveTests {
    @Test func R_S11_aLargePayloadIsMappedOffTheThreadThatAcceptedItsConnection() throws {
        // One request thread: without the workers, the health check below would wait for the payload's answer.
        try ModelAPI.with(model: LargePayloadTests.model, mappings: ["items": LargePayloadTests.mapping], serverArguments: ["--threads", "1"],
                          live: true) { (api) throws in
            let items: [JSONValue] = (0..<100_000).map { ["id": .number(JSONNumber($0)), "name": .string("item \($0)")] }
            let body = JSONValue.object(JSONObject([("items", .array(items))])).jsonBytes
            let payload = PayloadAnswer()
            let done = DispatchSemaphore(value: 0)
            Thread {
                let status = (try? api.client.send("POST", api.base + "/mappings/items/payloads", headers: [("Content-Type", "application/json")],
                                                   body: body, token: api.key))?.status ?? 0
                payload.answer.withLock { $0 = (status, Date()) }
                done.signal()
            }.start()
            Thread.sleep(forTimeInterval: 0.3)  // the body is sent and being mapped (about 3 s in a debug build)
            #expect(try api.client.send("GET", "/healthz").status == 200)
            let healthAnswered = Date()
            done.wait()
            let (status, answered) = try #require(payload.answer.withLock { $0 })
            #expect(status == 200)
            #expect(answered.timeIntervalSince(healthAnswered) > 0.5, "the health check was answered while the payload was mapped")
            #expect(try api.get("entities/Item/objects?count=true")["total"] == 100_000)
        }
    }

    @Test func R_S5_R_S11_aServerStoppedWhileAWorkerMapsAPayloadWaitsForItAndExitsCleanly() throws {
        // libmicrohttpd aborts the process when it is stopped with a connection still suspended: past
        // the drain timeout, stopping must wait for the workers' payloads as it waits for request threads.
        let server = try LiveServer(arguments: ["--drain-timeout", "0"])
        let key = try #require(try server.client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        #expect(try server.client.sendJSON("PUT", "/v1/tenants/acme/models/m", LargePayloadTests.model, token: key).status == 201)
        #expect(try server.client.sendJSON("PUT", "/v1/tenants/acme/models/m/mappings/items", LargePayloadTests.mapping, token: key).status == 201)
        let items: [JSONValue] = (0..<100_000).map { ["id": .number(JSONNumber($0)), "name": .string("item \($0)")] }
        let body = JSONValue.object(JSONObject([("items", .array(items))])).jsonBytes
        let client = server.client
        let done = DispatchSemaphore(value: 0)
        Thread {
            _ = try? client.send("POST", "/v1/tenants/acme/models/m/mappings/items/payloads", headers: [("Content-Type", "application/json")],
                                 body: body, token: key)
            done.signal()
        }.start()
        Thread.sleep(forTimeInterval: 0.5)  // the payload is being mapped by a worker (seconds in a debug build)
        #expect(server.stop() == 0, "SIGTERM past the drain timeout still exits cleanly")
        done.wait()
        // The payload was finished before the server stopped: stored whole.
        let path = server.dataDirectory.appendingPathComponent("data/tenants/acme/m.sqlite").path
        #expect(try SQLiteConnection(path: path).rows("SELECT count(*) FROM Item").first?.first?.integerValue == 100_000)
    }
}
