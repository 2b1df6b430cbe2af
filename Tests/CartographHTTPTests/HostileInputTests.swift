// Hostile input the application refuses (R-S1, R-S2, R-Q2), in process: malformed JSON, invalid UTF-8,
// JSON nested past the depth limit, wrong content types, unknown routes and methods, path traversal and
// bad names. Bodies over the size limit are refused by the transport: HostileInputLiveTests.
import Foundation
import Testing
import CartographCore
import CartographTesting

@Suite(.serialized) struct HostileInputTests {
    @Test func malformedJSONIs400WithOffsetAndServerStaysHealthy() throws {
        let server = try InProcessServer()
        let response = try server.client.send("POST", "/v1/tenants", headers: [("Content-Type", "application/json")],
                                              body: Array(#"{"id": "acme",}"#.utf8), token: server.adminToken)
        #expect(response.status == 400)
        let problem = try response.json()
        #expect(problem["offset"] == 14)
        #expect(problem["detail"]?.stringValue?.contains("not valid JSON") == true)
        #expect(try server.client.send("GET", "/v1/tenants", token: server.adminToken).json()["items"] == [])
    }

    @Test func invalidUTF8Is400() throws {
        let server = try InProcessServer()
        let body: [UInt8] = Array(#"{"id": "ac"#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)
        let response = try server.client.send("POST", "/v1/tenants", headers: [("Content-Type", "application/json")],
                                              body: body, token: server.adminToken)
        #expect(response.status == 400)
        #expect(try response.json()["detail"]?.stringValue?.contains("UTF-8") == true)
        #expect(try server.client.send("GET", "/healthz").status == 200)
    }

    @Test func R_S2_jsonNested10000DeepIs400() throws {
        let server = try InProcessServer()
        let body = Array((String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)).utf8)
        let response = try server.client.send("POST", "/v1/tenants", headers: [("Content-Type", "application/json")],
                                              body: body, token: server.adminToken)
        #expect(response.status == 400)
        #expect(try response.json()["detail"]?.stringValue?.contains("deeper than the limit of 512") == true)
        #expect(try server.client.send("GET", "/healthz").status == 200)
    }

    @Test(arguments: ["text/plain", "application/x-www-form-urlencoded", ""])
    func wrongContentTypeIs415(contentType: String) throws {
        let server = try InProcessServer()
        let headers = contentType.isEmpty ? [] : [("Content-Type", contentType)]
        let response = try server.client.send("POST", "/v1/tenants", headers: headers, body: Array(#"{"id":"acme"}"#.utf8),
                                              token: server.adminToken)
        #expect(response.status == 415)
        #expect(try response.json()["detail"]?.stringValue?.contains("application/json") == true)
        #expect(try server.client.send("GET", "/v1/tenants", token: server.adminToken).json()["items"] == [])
    }

    @Test func unknownRouteIs404AndWrongMethodIs405WithAllow() throws {
        let server = try InProcessServer()
        let missing = try server.client.send("GET", "/v1/nothing-here", token: server.adminToken)
        #expect(missing.status == 404)
        #expect(try missing.json()["instance"] == "/v1/nothing-here")
        let wrongMethod = try server.client.send("PATCH", "/v1/tenants", token: server.adminToken)
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("Allow") == "POST, GET")
        let wrongMethodTenant = try server.client.send("POST", "/v1/tenants/acme", token: server.adminToken)
        #expect(wrongMethodTenant.header("Allow") == "GET, PUT, PATCH, DELETE")
    }

    @Test(arguments: ["/v1/tenants/..%2F..", "/v1/tenants/..%2f..%2fetc", "/v1/tenants/acme%00", "/v1/tenants/..",
                      "/v1/tenants/%2e%2e", "/v1/tenants/ACME", "/v1/tenants/a%ZZ"])
    func R_S1_pathTraversalAndBadNamesAre400(path: String) throws {
        let server = try InProcessServer()
        let response = try server.client.send("GET", path, token: server.adminToken)
        #expect(response.status == 400, "\(path)")
        #expect(try response.json()["status"] == 400)
        // Nothing was created outside the tenants directory.
        let entries = try FileManager.default.contentsOfDirectory(atPath: server.dataDirectory.appendingPathComponent("data").path)
        #expect(Set(entries).isSubset(of: ["control.sqlite", "control.sqlite-wal", "control.sqlite-shm", "tenants", "admin.token"]))
    }
}

