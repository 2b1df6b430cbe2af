// Reliability over the real server: connection limits and request threads, what a restart meets after a
// crash or with a damaged file (found by the crash harness, scripts/crash-harness.py, and schemathesis),
// and secrets that must never reach the logs. A payload racing a migration is in ReliabilityTests (in process).
import Foundation
import Testing
import CartographCore
import CartographStore
import CartographTesting

@Suite(.serialized) struct ReliabilityLiveTests {
    @Test func R_S2_connectionsPerIPAreLimited() throws {
        try withLiveServer(arguments: ["--per-ip-connection-limit", "2"]) { (server) throws in
            let client = server.client
            // Two connections hold their slots with half-sent requests.
            var held = try (0..<2).map { _ in try client.connect() }
            defer { held.forEach { close($0) } }
            for socket in held { #expect(client.writeAll(socket, Array("GET /healthz HTTP/1.1\r\nHost: x\r\n".utf8))) }
            Thread.sleep(forTimeInterval: 0.2)
            // A third from the same address is closed without an answer.
            let third = try client.connect()
            defer { close(third) }
            _ = client.writeAll(third, Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            #expect(throws: (any Error).self) { try client.readResponse(third, timeoutSeconds: 5) }
            // Once one is released, a new connection is served.
            close(held.removeFirst())
            Thread.sleep(forTimeInterval: 0.2)
            #expect(try client.send("GET", "/healthz").json()["status"] == "ok")
        }
    }

    /// The connection limit counts every request thread's connections: each thread is a daemon of its own
    /// (below), whose own limit would let each take the whole limit.
    @Test func R_S2_theConnectionLimitCountsEveryThreadsConnections() throws {
        try withLiveServer(arguments: ["--threads", "4", "--connection-limit", "3", "--per-ip-connection-limit", "0"]) { (server) throws in
            let client = server.client
            var held = try (0..<3).map { _ in try client.connect() }
            defer { held.forEach { close($0) } }
            for socket in held { #expect(client.writeAll(socket, Array("GET /healthz HTTP/1.1\r\nHost: x\r\n".utf8))) }
            Thread.sleep(forTimeInterval: 0.2)
            let fourth = try client.connect()
            defer { close(fourth) }
            _ = client.writeAll(fourth, Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            #expect(throws: (any Error).self) { try client.readResponse(fourth, timeoutSeconds: 5) }
            close(held.removeFirst())
            Thread.sleep(forTimeInterval: 0.2)
            #expect(try client.send("GET", "/healthz").json()["status"] == "ok")
        }
    }

    /// Each request thread listens on a socket of its own on the one port (SO_REUSEPORT), so the kernel
    /// spreads connections over the threads: with one shared socket, a thread could take a client's whole
    /// burst of connections and leave the other cores idle (MicroHTTPDServer.swift has the numbers).
    @Test func R_S2_eachRequestThreadListensOnTheServersPort() throws {
        try withLiveServer(arguments: ["--threads", "3"]) { (server) throws in
            let table = try String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)
            let port = String(format: "%04X", server.port)
            // Columns: sl, local address (hex IP:port), remote address, state (0A = LISTEN), …
            let listening = table.split(separator: "\n").filter { line in
                let fields = line.split(separator: " ")
                return fields.count > 3 && fields[1].hasSuffix(":" + port) && fields[3] == "0A"
            }
            #expect(listening.count == 3, "\(listening)")
            #expect(try server.client.send("GET", "/healthz").status == 200)
        }
    }

    /// A crash after a tenant's row commits and before its directory exists (ControlStore.createTenant)
    /// left a tenant whose first model registration failed with 500. Simulated: the directory removed
    /// while the server is stopped.
    @Test func R_S4_aTenantWithoutItsDirectoryCanStillRegisterModels() throws {
        let server = try LiveServer()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let key = try #require(try server.client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        #expect(server.stop() == 0)
        try FileManager.default.removeItem(at: server.dataDirectory.appendingPathComponent("data/tenants/acme"))
        let restarted = try LiveServer(dataDirectory: server.dataDirectory)
        defer { restarted.stop() }
        let registered = try restarted.client.sendJSON("PUT", "/v1/tenants/acme/models/comics", comicsModel, token: key)
        #expect(registered.status == 201, "\(registered.text)")
        let mode = try FileManager.default.attributesOfItem(atPath: server.dataDirectory.appendingPathComponent("data/tenants/acme").path)[.posixPermissions]
        #expect((mode as? NSNumber)?.intValue == 0o700)
    }

    /// A store file that is not a database is a storage fault of its own (503 store-corrupt, docs/errors.md#storage-faults),
    /// never a SQL statement in the answer; the log names the request and the file.
    @Test func R_S6_aStoreFileThatIsNotADatabaseIsAStorageFaultLoggedWithTheRequestID() throws {
        let server = try LiveServer()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let key = try #require(try server.client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        #expect(try server.client.sendJSON("PUT", "/v1/tenants/acme/models/comics", comicsModel, token: key).status == 201)
        #expect(server.stop() == 0)
        let store = server.dataDirectory.appendingPathComponent("data/tenants/acme/comics.sqlite")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.path + suffix) }
        try Data(repeating: 0x5A, count: 8192).write(to: store)
        let restarted = try LiveServer(dataDirectory: server.dataDirectory)
        defer { restarted.stop() }
        let failed = try restarted.client.send("GET", "/v1/tenants/acme/models/comics/entities/Publisher/objects",
                                               headers: [("X-Request-Id", "fault-1")], token: key)
        #expect(failed.status == 503)
        #expect(try failed.json()["type"] == "urn:cartograph:problem:store-corrupt")
        #expect(failed.header("X-Request-Id") == "fault-1")
        #expect(!failed.text.contains("SQLite") && !failed.text.contains("SELECT"), "\(failed.text)")
        #expect(restarted.logContains("fault-1"))
        #expect(restarted.logContains("comics.sqlite"), "the log names the file")
    }

    /// A crash after a tenant's row is deleted and before its directory is (ControlStore.deleteTenant)
    /// left the directory behind, and a new tenant of the same name inherited the old one's stores
    /// (R-S1). Simulated: the row deleted from control.sqlite while the server is stopped.
    @Test func R_S1_R_S4_aNewTenantDoesNotInheritALeftoverDirectory() throws {
        let server = try LiveServer()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let client = server.client
        let key = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        #expect(try client.sendJSON("PUT", "/v1/tenants/acme/models/comics", comicsModel, token: key).status == 201)
        #expect(server.stop() == 0)
        let control = try SQLiteConnection(path: server.dataDirectory.appendingPathComponent("data/control.sqlite").path)
        try control.run("DELETE FROM tenants WHERE id = 'acme'")
        let restarted = try LiveServer(dataDirectory: server.dataDirectory)
        defer { restarted.stop() }
        let created = try restarted.client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: restarted.adminToken)
        #expect(created.status == 201)
        let newKey = try #require(try created.json()["apiKey"]?.stringValue)
        #expect(try restarted.client.send("GET", "/v1/tenants/acme/models", token: newKey).json()["items"] == [])
        #expect(try restarted.client.send("GET", "/v1/tenants/acme/models/comics", token: newKey).status == 404)
    }

    /// Tenant keys and the admin token never appear in the server's logs, whatever the log level and
    /// format, through a full flow: tenant, keys of every scope, model, mapping, payloads, queries,
    /// refused and revoked keys, and a restart.
    @Test(arguments: ["text", "json"])
    func secretsNeverReachTheLogs(format: String) throws {
        let arguments = ["--log-level", "trace", "--log-format", format]
        let server = try LiveServer(arguments: arguments, adminToken: nil)
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let client = server.client
        let admin = server.adminToken
        #expect(admin.hasPrefix("cga_"))
        var secrets = [admin]
        let created = try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: admin).json()
        let tenantKey = try #require(created["apiKey"]?.stringValue)
        secrets.append(tenantKey)
        var keys: [String: String] = [:]
        var keyIDs: [String: String] = [:]
        for scope in ["read", "write", "admin"] {
            let key = try client.sendJSON("POST", "/v1/tenants/acme/keys", ["scope": .string(scope)], token: tenantKey).json()
            keys[scope] = try #require(key["apiKey"]?.stringValue)
            keyIDs[scope] = try #require(key["id"]?.stringValue)
            secrets.append(keys[scope]!)
        }
        let (read, write, adminKey) = (keys["read"]!, keys["write"]!, keys["admin"]!)
        #expect(try client.send("GET", "/v1/tenants/acme/keys", token: adminKey).status == 200)
        #expect(try client.sendJSON("PUT", "/v1/tenants/acme/models/work", projectsModel, token: adminKey).status == 201)
        #expect(try client.sendJSON("PUT", "/v1/tenants/acme/models/work/mappings/projects", projectMapping(), token: adminKey).status == 201)
        let payload: JSONValue = ["projects": [["id": 1, "name": "Apollo", "owner": ["id": 7, "email": "a@x.io"]]]]
        let posted = try client.send("POST", "/v1/tenants/acme/models/work/mappings/projects/payloads",
                                     headers: [("Content-Type", "application/json"), ("Idempotency-Key", "k1")], body: payload.jsonBytes, token: write)
        #expect(posted.status == 200)
        #expect(try client.send("GET", "/v1/tenants/acme/models/work/entities/Project/objects?where=name%20==%20'Apollo'", token: read).status == 200)
        #expect(try client.send("GET", "/v1/tenants/acme/models/work/changes?since=0", token: read).status == 200)
        // A mapping cannot read the Authorization header through @metadata (R-P1): the token is not stored.
        let leak: JSONValue = ["entity": "Project", "keyPath": "projects",
                               "attributes": ["id": "projectID", "@metadata.header.authorization": "name"]]
        #expect(try client.sendJSON("PUT", "/v1/tenants/acme/models/work/mappings/leak", leak, token: adminKey).status == 201)
        #expect(try client.sendJSON("POST", "/v1/tenants/acme/models/work/mappings/leak/payloads", ["projects": [["id": 2]]],
                                    token: write).status == 200)
        let stored = try client.send("GET", "/v1/tenants/acme/models/work/entities/Project/objects/2", token: read)
        #expect(try stored.json()["name"] == "untitled")
        #expect(!(try client.send("GET", "/v1/tenants/acme/models/work/changes?since=0", token: read).text.contains("cg_")))
        // Refusals: too small a scope, a tenant key on an admin route, a garbled and a lower-case scheme, an invalid query.
        #expect(try client.sendJSON("PUT", "/v1/tenants/acme/models/other", projectsModel, token: read).status == 403)
        #expect(try client.send("GET", "/v1/tenants", token: write).status == 403)
        #expect(try client.send("GET", "/v1/tenants", headers: [("Authorization", "Bearer " + admin + "x")]).status == 401)
        #expect(try client.send("GET", "/v1/tenants", headers: [("Authorization", "bearer " + admin)]).status == 200)
        #expect(try client.send("GET", "/v1/tenants/acme/models/work/entities/Project/objects?where=((", token: read).status == 400)
        // Revoked: the key stops working.
        #expect(try client.send("DELETE", "/v1/tenants/acme/keys/\(keyIDs["read"]!)", token: adminKey).status == 204)
        #expect(try client.send("GET", "/v1/tenants/acme/models", token: read).status == 401)
        #expect(server.stop() == 0)
        // A restart reads the admin token from disk and logs where it is, not what it is.
        let restarted = try LiveServer(arguments: arguments, dataDirectory: server.dataDirectory, adminToken: nil)
        #expect(restarted.adminToken == admin)
        #expect(try restarted.client.send("GET", "/v1/tenants/acme/keys", token: adminKey).status == 200)
        #expect(restarted.stop() == 0)

        let logs = server.log + restarted.log
        #expect(logs.components(separatedBy: "\n").filter { $0.contains("request") }.count >= 15, "the flow was logged")
        for (index, secret) in secrets.enumerated() {
            // Booleans, so that a failure does not print the logs (and the secret) into the test output.
            let whole = logs.contains(secret), part = logs.contains(String(secret.suffix(32)))
            #expect(!whole, "secret \(index) (0 = admin token, then keys) reached the logs")
            #expect(!part, "the last 32 characters of secret \(index) reached the logs")
        }
    }
}
