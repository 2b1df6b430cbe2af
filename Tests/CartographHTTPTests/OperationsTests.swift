// What an operations team relies on that the application answers itself, in process: CORS for browser
// apps (R-S8), the model label's cap (R-S9) and how the text log writes a value (R-S10). The metrics a
// server exports and the lines it logs are read from a live server: OperationsLiveTests.
import Foundation
import Testing
import CartographCore
import CartographTesting
@testable import CartographHTTP
@testable import cartograph

private let console = "https://console.example.com"

@Suite(.serialized) struct OperationsTests {
    // MARK: CORS (R-S8)

    @Test func R_S8_aPreflightFromAListedOriginGetsTheRoutesMethodsAndTheAPIsHeaders() throws {
        let server = try InProcessServer(arguments: ["--cors-origin", console, "--cors-origin", "http://localhost:3000"])
        // No token: a browser's preflight never carries one.
        let preflight = try server.client.send("OPTIONS", "/v1/tenants/acme/models/comics/mappings/roster/payloads", headers: [
            ("Origin", console), ("Access-Control-Request-Method", "POST"), ("Access-Control-Request-Headers", "authorization, content-type"),
        ])
        #expect(preflight.status == 204)
        #expect(preflight.body.isEmpty)
        #expect(preflight.header("Access-Control-Allow-Origin") == console)
        #expect(preflight.header("Access-Control-Allow-Methods") == "POST, OPTIONS")
        #expect(preflight.header("Allow") == "POST, OPTIONS")
        let allowedHeaders = Set((preflight.header("Access-Control-Allow-Headers") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(allowedHeaders.isSuperset(of: ["Authorization", "Content-Type", "Idempotency-Key", "X-Request-Id"]))
        #expect(preflight.header("Access-Control-Max-Age") == "600")
        #expect(preflight.headers.contains { $0.name.lowercased() == "vary" && $0.value == "Origin" })
        let keys = try server.client.send("OPTIONS", "/v1/tenants/acme/keys", headers: [
            ("Origin", "http://localhost:3000"), ("Access-Control-Request-Method", "GET"),
        ])
        #expect(keys.status == 204)
        #expect(keys.header("Access-Control-Allow-Origin") == "http://localhost:3000")
        #expect(keys.header("Access-Control-Allow-Methods") == "POST, GET, OPTIONS")
    }

    @Test func R_S8_aPreflightFromAnOriginNotListedIsA403WithoutCORSHeaders() throws {
        let server = try InProcessServer(arguments: ["--cors-origin", console])
        for origin in ["https://evil.example", "https://console.example.com.evil.example", "http://console.example.com"] {
            let refused = try server.client.send("OPTIONS", "/v1/tenants", headers: [("Origin", origin), ("Access-Control-Request-Method", "GET")])
            #expect(refused.status == 403, "\(origin)")
            let problem = try refused.json()
            #expect(problem["type"] == "urn:cartograph:problem:origin-not-allowed")
            #expect(problem["detail"]?.stringValue?.contains("Origin '\(origin)' may not call this server from a browser") == true)
            #expect(!refused.headers.contains { $0.name.lowercased().hasPrefix("access-control-") }, "\(refused.headers)")
        }
        let noOrigins = try InProcessServer()
        let withoutOrigins = try noOrigins.client.send("OPTIONS", "/v1/tenants", headers: [("Origin", console), ("Access-Control-Request-Method", "GET")])
        #expect(withoutOrigins.status == 403)
        #expect(try withoutOrigins.json()["detail"]?.stringValue?.contains("the server allows no cross-origin requests") == true)
        #expect(withoutOrigins.header("Access-Control-Allow-Origin") == nil)
        #expect(withoutOrigins.header("Vary") == nil, "a server without origins answers the same whatever the origin")
    }

    /// OPTIONS that is not a preflight describes the path (RFC 9110 §9.3.7): 204 with `Allow`; an unknown path stays a 404.
    @Test func R_S8_OPTIONSWithoutAPreflightIs204WithAllow() throws {
        let server = try InProcessServer()
        let options = try server.send("OPTIONS", "/v1/tenants")
        #expect(options.status == 204)
        #expect(options.header("Allow") == "POST, GET, OPTIONS")
        #expect(options.header("Access-Control-Allow-Origin") == nil)
        #expect(try server.send("OPTIONS", "/v1/tenants/acme/models/m").header("Allow") == "PUT, GET, DELETE, OPTIONS")
        let unknown = try server.send("OPTIONS", "/v2/nothing")
        #expect(unknown.status == 404)
        #expect(try unknown.json()["type"] == "urn:cartograph:problem:not-found")
    }

    @Test func R_S8_answersCarryCORSHeadersForListedOriginsOnly() throws {
        let server = try InProcessServer(arguments: ["--cors-origin", console])
        let listed = try server.send("GET", "/v1/tenants", headers: [("Origin", console)], token: server.adminToken)
        #expect(listed.status == 200)
        #expect(listed.header("Access-Control-Allow-Origin") == console)
        let exposed = Set((listed.header("Access-Control-Expose-Headers") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(exposed.isSuperset(of: ["X-Request-Id", "Retry-After", "RateLimit", "RateLimit-Policy", "WWW-Authenticate", "Location", "Allow"]))
        #expect(listed.headers.contains { $0.name == "Vary" && $0.value == "Origin" })
        // A problem reaches the browser app too, so that it can show why.
        let unauthorized = try server.send("GET", "/v1/tenants", headers: [("Origin", console)])
        #expect(unauthorized.status == 401)
        #expect(unauthorized.header("Access-Control-Allow-Origin") == console)
        let unlisted = try server.send("GET", "/v1/tenants", headers: [("Origin", "https://evil.example")], token: server.adminToken)
        #expect(unlisted.status == 200)
        #expect(unlisted.header("Access-Control-Allow-Origin") == nil)
        #expect(unlisted.header("Access-Control-Expose-Headers") == nil)
        #expect(unlisted.headers.contains { $0.name == "Vary" && $0.value == "Origin" }, "a cache must keep the two answers apart")
        let noOrigins = try InProcessServer()
        let plain = try noOrigins.send("GET", "/v1/tenants", headers: [("Origin", console)], token: noOrigins.adminToken)
        #expect(plain.header("Access-Control-Allow-Origin") == nil)
        #expect(!plain.headers.contains { $0.name == "Vary" && $0.value == "Origin" })
    }

    // MARK: What the metrics and the log write (R-S9, R-S10)

    /// Tenants name their models, so without tenant labels the model label is capped: the first names
    /// get series of their own, the rest share one; with tenant labels (unbounded anyway) every name is kept.
    @Test func R_S9_modelLabelsAreCappedWithoutTenantLabels() {
        let metrics = ServerMetrics(tenantLabels: false)
        let names = (0..<ServerMetrics.modelLabelLimit).map { "model-\($0)" }
        #expect(names.map(metrics.modelLabel) == names)
        #expect(metrics.modelLabel("one-more") == "_other")
        #expect(metrics.modelLabel("model-0") == "model-0", "a name with a series keeps it")
        #expect(metrics.modelLabel(names.last!) == names.last!)
        let perTenant = ServerMetrics(tenantLabels: true)
        #expect((0...ServerMetrics.modelLabelLimit).map { perTenant.modelLabel("m\($0)") } == (0...ServerMetrics.modelLabelLimit).map { "m\($0)" })
    }

    /// The text log writes a value as logfmt does, so that a problem's detail stays one value and a line one line.
    @Test func R_S10_textLogValuesAreQuotedAndEscapedAsLogfmt() {
        func text(_ value: String) -> String {
            var line: [UInt8] = []
            BufferedLogHandler.appendTextValue(value, to: &line)
            return String(decoding: line, as: UTF8.self)
        }
        #expect(text("urn:cartograph:problem:not-found") == "urn:cartograph:problem:not-found")
        #expect(text("") == #""""#)
        #expect(text("No tenant named 'x'.") == #""No tenant named 'x'.""#)
        #expect(text("a=b") == #""a=b""#)
        #expect(text("say \"hi\"\nthen\\") == #""say \"hi\"\nthen\\""#)
        #expect(text("tab\tbell\u{07}") == #""tab\tbell\u0007""#)
    }
}
