// The real `cartograph serve` over real HTTP: control plane, auth rules (docs/api.md#authentication), service
// endpoints, request ids and graceful drain (R-S5). Hostile input: HostileInputLiveTests.swift.
import Foundation
import Testing
import CartographCore
import CartographTesting

@Suite(.serialized) struct ControlPlaneLiveTests {
    @Test func tenantLifecycleOverHTTP() throws {
        try withLiveServer { server in
            let client = server.client
            let created = try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken)
            #expect(created.status == 201)
            let body = try created.json()
            #expect(body["id"] == "acme")
            let apiKey = try #require(body["apiKey"]?.stringValue)
            #expect(apiKey.hasPrefix("cg_"))

            let list = try client.send("GET", "/v1/tenants", token: server.adminToken)
            #expect(try list.json()["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["acme"])
            let shown = try client.send("GET", "/v1/tenants/acme", token: server.adminToken)
            #expect(try shown.json()["id"] == "acme")

            let duplicate = try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken)
            #expect(duplicate.status == 409)
            #expect(try duplicate.json()["status"] == 409)

            #expect(try client.send("DELETE", "/v1/tenants/acme", token: server.adminToken).status == 204)
            #expect(try client.send("GET", "/v1/tenants/acme", token: server.adminToken).status == 404)
            #expect(try client.send("GET", "/v1/tenants", token: server.adminToken).json()["items"] == [])
            // The deleted tenant's key is gone with it.
            #expect(try client.send("GET", "/v1/tenants/acme/keys", token: apiKey).status == 401)
        }
    }

    /// R-N1: creation with the id in the path, so that a router sends it to the tenant's node.
    @Test func R_N1_putCreatesTheTenantNamedInThePathOnceAnd409sAfter() throws {
        try withLiveServer { server in
            let client = server.client
            let created = try client.send("PUT", "/v1/tenants/globex", token: server.adminToken)
            #expect(created.status == 201)
            let body = try created.json()
            #expect(body["id"] == "globex")
            let apiKey = try #require(body["apiKey"]?.stringValue)
            #expect(try client.send("GET", "/v1/tenants/globex/keys", token: apiKey).json()["items"]?.arrayValue?.count == 1)

            let again = try client.send("PUT", "/v1/tenants/globex", token: server.adminToken)
            #expect(again.status == 409)
            #expect(try again.json()["status"] == 409)
            // The first key still works and no second key was made.
            #expect(try client.send("GET", "/v1/tenants/globex/keys", token: apiKey).json()["items"]?.arrayValue?.count == 1)
            #expect(try client.send("GET", "/v1/tenants", token: server.adminToken).json()["items"]?.arrayValue?
                .compactMap { $0["id"]?.stringValue } == ["globex"])

            #expect(try client.send("PUT", "/v1/tenants/Globex", token: server.adminToken).status == 400)
            #expect(try client.send("PUT", "/v1/tenants/initech", token: apiKey).status == 403)
            #expect(try client.send("PUT", "/v1/tenants/initech").status == 401)
            #expect(try client.send("GET", "/v1/tenants/initech", token: server.adminToken).status == 404)
        }
    }

    @Test func keysAreScopedListedWithoutSecretsAndRevocable() throws {
        try withLiveServer { server in
            let client = server.client
            let adminKey = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken)
                .json()["apiKey"]?.stringValue)
            let created = try client.sendJSON("POST", "/v1/tenants/acme/keys", ["scope": "read"], token: adminKey)
            #expect(created.status == 201)
            let readKey = try #require(try created.json()["apiKey"]?.stringValue)
            let readKeyID = try #require(try created.json()["id"]?.stringValue)
            #expect(try created.json()["scope"] == "read")

            let listed = try client.send("GET", "/v1/tenants/acme/keys", token: adminKey)
            let items = try #require(try listed.json()["items"]?.arrayValue)
            #expect(items.compactMap { $0["scope"]?.stringValue } == ["admin", "read"])
            #expect(items.allSatisfy { $0["apiKey"] == nil })
            #expect(!listed.text.contains(String(readKey.suffix(64))))

            // A read key cannot manage keys (R: scope too small -> 403).
            let forbidden = try client.sendJSON("POST", "/v1/tenants/acme/keys", ["scope": "admin"], token: readKey)
            #expect(forbidden.status == 403)
            #expect(try forbidden.json()["detail"]?.stringValue?.contains("scope 'read'") == true)

            #expect(try client.send("DELETE", "/v1/tenants/acme/keys/\(readKeyID)", token: adminKey).status == 204)
            let revoked = try client.send("GET", "/v1/tenants/acme/keys", token: readKey)
            #expect(revoked.status == 401)
            #expect(revoked.header("WWW-Authenticate") == "Bearer")
            #expect(try client.send("DELETE", "/v1/tenants/acme/keys/\(readKeyID)", token: adminKey).status == 404)
            #expect(try client.send("GET", "/v1/tenants/acme/keys", token: adminKey).json()["items"]?.arrayValue?.count == 1)
        }
    }

    @Test func anotherTenantsKeyIsForbiddenAndTenantKeysCannotUseAdminRoutes() throws {
        try withLiveServer { server in
            let client = server.client
            let acmeKey = try #require(try client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
            _ = try client.sendJSON("POST", "/v1/tenants", ["id": "globex"], token: server.adminToken)
            let crossTenant = try client.send("GET", "/v1/tenants/globex/keys", token: acmeKey)
            #expect(crossTenant.status == 403)
            #expect(try crossTenant.json()["detail"]?.stringValue?.contains("another tenant") == true)
            let adminRoute = try client.send("GET", "/v1/tenants", token: acmeKey)
            #expect(adminRoute.status == 403)
            // The admin token acts as every tenant's admin.
            #expect(try client.send("GET", "/v1/tenants/globex/keys", token: server.adminToken).json()["items"]?.arrayValue?.count == 1)
        }
    }

    @Test(arguments: [
        ("missing", nil as String?),
        ("garbled", "Bearer not-a-token"),
        ("wrong scheme", "Basic YWRtaW46YWRtaW4="),
        ("well-formed but unknown", "Bearer cg_0123456789abcdef_" + String(repeating: "ab", count: 32)),
    ])
    func badTokensAre401(label: String, authorization: String?) throws {
        try withLiveServer { server in
            let headers = authorization.map { [("Authorization", $0)] } ?? []
            let response = try server.client.send("GET", "/v1/tenants", headers: headers)
            #expect(response.status == 401, "\(label)")
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(try response.json()["status"] == 401)
            #expect(try server.client.send("GET", "/healthz").status == 200)
        }
    }

    @Test func invalidTenantIdInBodyIs422WithPointer() throws {
        try withLiveServer { server in
            let response = try server.client.sendJSON("POST", "/v1/tenants", ["id": "Not Valid!"], token: server.adminToken)
            #expect(response.status == 422)
            #expect(try response.json()["errors"]?.arrayValue?.first?["pointer"] == "/id")
            let wrongScope = try server.client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken)
            let key = try #require(try wrongScope.json()["apiKey"]?.stringValue)
            let badScope = try server.client.sendJSON("POST", "/v1/tenants/acme/keys", ["scope": "root"], token: key)
            #expect(badScope.status == 422)
            #expect(try badScope.json()["errors"]?.arrayValue?.first?["pointer"] == "/scope")
        }
    }
}

@Suite(.serialized) struct ServiceLiveTests {
    @Test func healthReadinessMetricsAndSpec() throws {
        try withLiveServer { server in
            let client = server.client
            #expect(try client.send("GET", "/healthz").json()["status"] == "ok")
            #expect(try client.send("GET", "/readyz").json()["status"] == "ready")
            _ = try client.send("GET", "/v1/tenants", token: server.adminToken)
            _ = try client.send("GET", "/v1/tenants")
            let metrics = try client.send("GET", "/metrics")
            #expect(metrics.header("Content-Type")?.hasPrefix("text/plain") == true)
            #expect(metrics.text.contains(#"cartograph_http_requests_total{method="GET",route="/v1/tenants",status="200"} 1"#))
            #expect(metrics.text.contains(#"cartograph_http_requests_total{method="GET",route="/v1/tenants",status="401"} 1"#))
            #expect(metrics.text.contains("cartograph_http_request_duration_seconds_bucket"))
            let spec = try client.send("GET", "/openapi.yaml")
            #expect(spec.header("Content-Type") == "application/yaml")
            #expect(spec.text.hasPrefix("openapi: 3.1"))
        }
    }

    @Test func metricsCanRequireTheAdminToken() throws {
        try withLiveServer(arguments: ["--metrics-auth", "admin"]) { (server) throws in
            #expect(try server.client.send("GET", "/metrics").status == 401)
            #expect(try server.client.send("GET", "/metrics", token: server.adminToken).text.contains("cartograph_http_requests_total"))
        }
    }

    @Test func R_S6_requestIdIsEchoedOrGenerated() throws {
        try withLiveServer { server in
            let echoed = try server.client.send("GET", "/healthz", headers: [("X-Request-Id", "trace-123")])
            #expect(echoed.header("X-Request-Id") == "trace-123")
            let generated = try server.client.send("GET", "/v1/tenants/missing", token: server.adminToken)
            let id = try #require(generated.header("X-Request-Id"))
            #expect(id.count >= 8)
            #expect(server.logContains("request.id=\(id)"))
            #expect(server.logContains("request.id=trace-123"))
        }
    }

    @Test func R_S5_sigtermFinishesInFlightRequestsAndExitsZero() throws {
        let server = try LiveServer()
        defer { try? FileManager.default.removeItem(at: server.dataDirectory) }
        let client = server.client
        // Start a request and leave its body half sent, so it is in flight when SIGTERM arrives.
        let body = Array(#"{"id": "draining"}"#.utf8)
        let socket = try client.connect()
        defer { close(socket) }
        let head = "POST /v1/tenants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(server.adminToken)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        client.writeAll(socket, Array(head.utf8) + body.prefix(5))
        Thread.sleep(forTimeInterval: 0.3)
        kill(server.processIdentifier, SIGTERM)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(server.isRunning, "the server waits for the in-flight request")
        client.writeAll(socket, Array(body.dropFirst(5)))
        let response = try client.readResponse(socket)
        #expect(response.status == 201)
        #expect(try response.json()["id"] == "draining")
        #expect(server.waitForExit() == 0)
        #expect(server.logContains("draining"))
        // The tenant it created was committed.
        let restarted = try LiveServer(dataDirectory: server.dataDirectory)
        defer { restarted.stop() }
        #expect(try restarted.client.send("GET", "/v1/tenants/draining", token: restarted.adminToken).json()["id"] == "draining")
    }

    @Test func generatedAdminTokenIsWrittenWithMode0600AndWorks() throws {
        let server = try LiveServer(adminToken: nil)
        defer { server.stop(); try? FileManager.default.removeItem(at: server.dataDirectory) }
        let path = server.dataDirectory.appendingPathComponent("data/admin.token").path
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(server.log.contains("path=\(path)"))
        #expect(!server.log.contains(server.adminToken))
        #expect(try server.client.send("GET", "/v1/tenants", token: server.adminToken).json()["items"] == [])
    }
}
