// The real `cartograph serve` over real HTTP: control plane, auth rules (DESIGN §2), hostile input,
// service endpoints, request ids and graceful drain (R-S5).
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

@Suite(.serialized) struct HostileInputLiveTests {
    @Test func malformedJSONIs400WithOffsetAndServerStaysHealthy() throws {
        try withLiveServer { server in
            let response = try server.client.send("POST", "/v1/tenants", headers: [("Content-Type", "application/json")],
                                                  body: Array(#"{"id": "acme",}"#.utf8), token: server.adminToken)
            #expect(response.status == 400)
            let problem = try response.json()
            #expect(problem["offset"] == 14)
            #expect(problem["detail"]?.stringValue?.contains("not valid JSON") == true)
            #expect(try server.client.send("GET", "/v1/tenants", token: server.adminToken).json()["items"] == [])
        }
    }

    @Test func invalidUTF8Is400() throws {
        try withLiveServer { server in
            let body: [UInt8] = Array(#"{"id": "ac"#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)
            let response = try server.client.send("POST", "/v1/tenants", headers: [("Content-Type", "application/json")],
                                                  body: body, token: server.adminToken)
            #expect(response.status == 400)
            #expect(try response.json()["detail"]?.stringValue?.contains("UTF-8") == true)
            #expect(try server.client.send("GET", "/healthz").status == 200)
        }
    }

    @Test func R_S2_jsonNested10000DeepIs400() throws {
        try withLiveServer { server in
            let body = Array((String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)).utf8)
            let response = try server.client.send("POST", "/v1/tenants", headers: [("Content-Type", "application/json")],
                                                  body: body, token: server.adminToken)
            #expect(response.status == 400)
            #expect(try response.json()["detail"]?.stringValue?.contains("deeper than the limit of 512") == true)
            #expect(try server.client.send("GET", "/healthz").status == 200)
        }
    }

    @Test func R_S2_bodyOverTheLimitIs413BeforeItIsRead() throws {
        try withLiveServer { server in
            // Content-Length announces 70 MiB against the 64 MiB default: refused from the headers alone.
            let announced = try server.client.send(
                "POST", "/v1/tenants", headers: [("Content-Type", "application/json"), ("Content-Length", String(70 << 20))],
                body: [], token: server.adminToken)
            #expect(announced.status == 413)
            #expect(try announced.json()["detail"]?.stringValue?.contains("67108864") == true)
            #expect(try server.client.send("GET", "/healthz").status == 200)
        }
    }

    @Test func R_S2_streamedBodyOverTheLimitIs413() throws {
        try withLiveServer(arguments: ["--max-body-bytes", "65536"]) { server in
            // Chunked upload with no Content-Length: the limit is enforced while the body streams in.
            let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 32 * 1024)
            var request = Array("POST /v1/tenants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(server.adminToken)\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".utf8)
            for _ in 0..<3 { request += Array("8000\r\n".utf8) + chunk + Array("\r\n".utf8) }
            request += Array("0\r\n\r\n".utf8)
            let response = try server.client.sendRaw(request)
            #expect(response.status == 413)
            #expect(try response.json()["status"] == 413)
            #expect(try server.client.send("GET", "/v1/tenants", token: server.adminToken).json()["items"] == [])
        }
    }

    @Test func seventyMiBBodyIsRefusedAndServerStaysHealthy() throws {
        try withLiveServer { server in
            let body = [UInt8](repeating: UInt8(ascii: " "), count: 70 << 20)
            let response = try server.client.send("POST", "/v1/tenants", headers: [("Content-Type", "application/json")],
                                                  body: body, token: server.adminToken)
            #expect(response.status == 413)
            #expect(try server.client.send("GET", "/healthz").json()["status"] == "ok")
        }
    }

    @Test(arguments: ["text/plain", "application/x-www-form-urlencoded", ""])
    func wrongContentTypeIs415(contentType: String) throws {
        try withLiveServer { server in
            let headers = contentType.isEmpty ? [] : [("Content-Type", contentType)]
            let response = try server.client.send("POST", "/v1/tenants", headers: headers, body: Array(#"{"id":"acme"}"#.utf8),
                                                  token: server.adminToken)
            #expect(response.status == 415)
            #expect(try response.json()["detail"]?.stringValue?.contains("application/json") == true)
            #expect(try server.client.send("GET", "/v1/tenants", token: server.adminToken).json()["items"] == [])
        }
    }

    @Test func unknownRouteIs404AndWrongMethodIs405WithAllow() throws {
        try withLiveServer { server in
            let missing = try server.client.send("GET", "/v1/nothing-here", token: server.adminToken)
            #expect(missing.status == 404)
            #expect(try missing.json()["instance"] == "/v1/nothing-here")
            let wrongMethod = try server.client.send("PATCH", "/v1/tenants", token: server.adminToken)
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.header("Allow") == "POST, GET")
            let wrongMethodTenant = try server.client.send("PUT", "/v1/tenants/acme", token: server.adminToken)
            #expect(wrongMethodTenant.header("Allow") == "GET, PATCH, DELETE")
        }
    }

    @Test(arguments: ["/v1/tenants/..%2F..", "/v1/tenants/..%2f..%2fetc", "/v1/tenants/acme%00", "/v1/tenants/..",
                      "/v1/tenants/%2e%2e", "/v1/tenants/ACME", "/v1/tenants/a%ZZ"])
    func R_S1_pathTraversalAndBadNamesAre400(path: String) throws {
        try withLiveServer { server in
            let response = try server.client.send("GET", path, token: server.adminToken)
            #expect(response.status == 400, "\(path)")
            #expect(try response.json()["status"] == 400)
            // Nothing was created outside the tenants directory.
            let entries = try FileManager.default.contentsOfDirectory(atPath: server.dataDirectory.appendingPathComponent("data").path)
            #expect(Set(entries).isSubset(of: ["control.sqlite", "control.sqlite-wal", "control.sqlite-shm", "tenants", "admin.token"]))
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
