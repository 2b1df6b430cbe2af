// What an operations team watches (docs/operations.md) on the real server: the metrics `serve` exports
// and their labels (R-S9), and the request log line of a problem (R-S10). CORS and what needs no
// server are in OperationsTests (in process).
import Foundation
import Testing
import CartographCore
import CartographTesting

/// A mapping whose payloads are complete listings of characters: what a payload leaves out is deleted.
private let rosterMapping: JSONValue = [
    "entity": "Character", "keyPath": "characters", "attributes": ["id": "identifier", "name": "name"],
    "deleteMissing": ["scope": "identifier > 0", "maxDeletes": 10],
]
private let payloads = "/v1/tenants/acme/models/comics/mappings/roster/payloads"

/// A server started with `arguments`, with tenant `acme`, model `comics` and mapping `roster`; passes its tenant admin key.
private func withRoster(_ arguments: [String] = [], _ body: (LiveServer, String) throws -> Void) throws {
    try withLiveServer(arguments: arguments) { (server) throws in
        let key = try #require(try server.client.sendJSON("POST", "/v1/tenants", ["id": "acme"], token: server.adminToken).json()["apiKey"]?.stringValue)
        #expect(try server.client.sendJSON("PUT", "/v1/tenants/acme/models/comics", comicsModel, token: key).status == 201)
        #expect(try server.client.sendJSON("PUT", "/v1/tenants/acme/models/comics/mappings/roster", rosterMapping, token: key).status == 201)
        try body(server, key)
    }
}

/// One series of a Prometheus text exposition.
struct MetricSample: Equatable {
    var name: String
    var labels: [String: String]
    var value: Double

    /// The samples of `exposition` (our label values hold no quotes, so no unescaping is needed).
    static func parse(_ exposition: String) -> [MetricSample] {
        exposition.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { return nil }
            let head = line[..<space]
            guard let brace = head.firstIndex(of: "{") else { return MetricSample(name: String(head), labels: [:], value: value) }
            var labels: [String: String] = [:]
            var rest = head[head.index(after: brace)...].dropLast()
            while let equals = rest.firstIndex(of: "=") {
                let name = String(rest[..<equals])
                rest = rest[rest.index(equals, offsetBy: 2)...]
                guard let close = rest.firstIndex(of: "\"") else { break }
                labels[name] = String(rest[..<close])
                rest = rest[rest.index(after: close)...].drop { $0 == "," }
            }
            return MetricSample(name: String(head[..<brace]), labels: labels, value: value)
        }
    }
}

extension [MetricSample] {
    /// The value of the series `name` with exactly `labels`, or nil when there is none.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        first { $0.name == name && $0.labels == labels }?.value
    }
}

private func scrape(_ server: LiveServer) throws -> [MetricSample] {
    MetricSample.parse(try server.client.send("GET", "/metrics").text)
}

@Suite(.serialized) struct OperationsLiveTests {
    // MARK: Metrics (R-S9)

    @Test func R_S9_objectsMappedAreCountedByModelAndActionForCommittedPayloadsOnly() throws {
        try withRoster { (server, key) throws in
            let client = server.client
            #expect(try client.sendJSON("POST", payloads, ["characters": [["id": 1, "name": "Thor"], ["id": 2, "name": "Hulk"]]], token: key).status == 200)
            #expect(try client.sendJSON("POST", payloads, ["characters": [["id": 1, "name": "Thor"], ["id": 2, "name": "Hulk"]]], token: key).json()["unchanged"] == 2)
            let third = try client.sendJSON("POST", payloads, ["characters": [["id": 1, "name": "Thor Odinson"]]], token: key).json()
            #expect(third["updated"] == 1 && third["deleted"] == 1)
            // Neither a dry run nor a replay under an Idempotency-Key commits anything.
            #expect(try client.sendJSON("POST", payloads + "?dryRun=true", ["characters": [["id": 3, "name": "Storm"]]], token: key).json()["inserted"] == 1)
            let body = (["characters": [["id": 1, "name": "Thor Odinson"], ["id": 4, "name": "Loki"]]] as JSONValue).jsonBytes
            for _ in 0..<2 {
                let posted = try client.send("POST", payloads, headers: [("Content-Type", "application/json"), ("Idempotency-Key", "k-1")], body: body, token: key)
                #expect(try posted.json()["inserted"] == 1)
            }
            // A snapshot session's page maps Thor again; its completion deletes Loki, whom no page mentioned.
            #expect(try client.sendJSON("POST", payloads + "?snapshot=s-1", ["characters": [["id": 1, "name": "Thor Odinson"]]], token: key).status == 200)
            let completed = try client.send("POST", "/v1/tenants/acme/models/comics/mappings/roster/snapshots/s-1/complete", token: key)
            #expect(try completed.json()["deleted"] == 1)
            let metrics = try scrape(server)
            let mapped = { (action: String) in metrics.value("cartograph_objects_mapped_total", ["model": "comics", "action": action]) }
            #expect(mapped("insert") == 3)
            #expect(mapped("update") == 1)
            #expect(mapped("unchanged") == 4)
            #expect(mapped("delete") == 2)
        }
    }

    @Test func R_S9_requestBodiesAreAHistogramByRoute() throws {
        try withRoster { (server, key) throws in
            let characters: [JSONValue] = (1...40).map { ["id": .number(JSONNumber($0)), "name": .string("Character \($0)")] }
            let body = (["characters": .array(characters)] as JSONValue).jsonBytes
            #expect(body.count > 1024 && body.count < 4096)
            let posted = try server.client.send("POST", payloads, headers: [("Content-Type", "application/json")], body: body, token: key)
            #expect(posted.status == 200)
            #expect(try server.client.send("GET", "/v1/tenants/acme/models/comics", token: key).status == 200)
            #expect(try server.client.send("GET", "/v1/tenants", token: server.adminToken).status == 200)
            let metrics = try scrape(server)
            let route = ["route": "/v1/tenants/{tenant}/models/{model}/mappings/{mapping}/payloads"]
            #expect(metrics.value("cartograph_http_request_body_bytes_count", route) == 1)
            #expect(metrics.value("cartograph_http_request_body_bytes_sum", route) == Double(body.count))
            #expect(metrics.value("cartograph_http_request_body_bytes_bucket", route.merging(["le": "1024.0"]) { $1 }) == 0)
            #expect(metrics.value("cartograph_http_request_body_bytes_bucket", route.merging(["le": "4096.0"]) { $1 }) == 1)
            // The tenant's creation and the model's PUT have theirs; the GETs of the same paths take no body and add nothing.
            #expect(metrics.value("cartograph_http_request_body_bytes_count", ["route": "/v1/tenants"]) == 1)
            #expect(metrics.value("cartograph_http_request_body_bytes_count", ["route": "/v1/tenants/{tenant}/models/{model}"]) == 1)
            #expect(!metrics.contains { $0.name.hasPrefix("cartograph_http_request_body_bytes") && $0.labels["route"] == "/metrics" })
        }
    }

    @Test func R_S9_gaugesReportOpenStoresStoreBytesAndTheProcess() throws {
        try withRoster { (server, key) throws in
            #expect(try server.client.sendJSON("POST", payloads, ["characters": [["id": 1, "name": "Thor"]]], token: key).status == 200)
            let storeFile = server.dataDirectory.appendingPathComponent("data/tenants/acme/comics.sqlite").path
            let onDisk = {
                ["", "-wal"].reduce(0.0) { total, suffix in
                    total + ((try? FileManager.default.attributesOfItem(atPath: storeFile + suffix)[.size] as? NSNumber)?.doubleValue ?? 0)
                }
            }
            // A checkpoint in the background may change the WAL around the scrape.
            let before = onDisk()
            let text = try server.client.send("GET", "/metrics").text
            let after = onDisk()
            let metrics = MetricSample.parse(text)
            #expect(metrics.value("cartograph_open_stores") == 1)
            let storeBytes = try #require(metrics.value("cartograph_store_bytes"))
            #expect(storeBytes == before || storeBytes == after, "the one store's database and WAL: \(storeBytes), \(before), \(after)")
            #expect(storeBytes > 4096)
            let resident = try #require(metrics.value("process_resident_memory_bytes"))
            #expect(resident > 1_000_000 && resident < 8_000_000_000)
            let files = try #require(metrics.value("process_open_fds"))
            #expect(files > 3)
            #expect(try #require(metrics.value("process_max_fds")) >= files)
            // Without --metrics-tenant-labels no series names a tenant.
            #expect(!text.contains("tenant="))
            #expect(!text.contains("acme"))
        }
    }

    @Test func R_S9_problemsAreCountedByType() throws {
        try withLiveServer { (server) throws in
            #expect(try server.client.send("GET", "/v1/tenants/nobody", token: server.adminToken).status == 404)
            #expect(try server.client.send("GET", "/v1/tenants/nobody/models", token: server.adminToken).status == 404)
            #expect(try server.client.send("GET", "/v1/tenants").status == 401)
            #expect(try server.client.send("GET", "/v1/tenants?limit=1", token: server.adminToken).status == 400)
            let metrics = try scrape(server)
            #expect(metrics.value("cartograph_problems_total", ["type": "urn:cartograph:problem:not-found"]) == 2)
            #expect(metrics.value("cartograph_problems_total", ["type": "urn:cartograph:problem:unauthorized"]) == 1)
            #expect(metrics.value("cartograph_problems_total", ["type": "urn:cartograph:problem:bad-request"]) == 1)
            #expect(metrics.value("cartograph_problems_total", ["type": "urn:cartograph:problem:forbidden"]) == nil)
        }
    }

    @Test func R_S9_tenantLabelsComeOnlyWithTheFlagAndOnlyForAuthenticatedRequests() throws {
        try withRoster(["--metrics-tenant-labels"]) { (server, key) throws in
            #expect(try server.client.sendJSON("POST", payloads, ["characters": [["id": 1, "name": "Thor"]]], token: key).status == 200)
            // A made-up tenant with no valid token adds no series of its own.
            #expect(try server.client.send("GET", "/v1/tenants/made-up/models", token: "cg_1_nope").status == 401)
            var metrics = try scrape(server)
            #expect(metrics.value("cartograph_objects_mapped_total", ["tenant": "acme", "model": "comics", "action": "insert"]) == 1)
            #expect(metrics.value("cartograph_http_requests_total",
                                  ["tenant": "acme", "method": "POST", "route": "/v1/tenants/{tenant}/models/{model}/mappings/{mapping}/payloads", "status": "200"]) == 1)
            #expect(metrics.value("cartograph_problems_total", ["tenant": "", "type": "urn:cartograph:problem:unauthorized"]) == 1)
            #expect(!metrics.contains { $0.labels["tenant"] == "made-up" })
            #expect(try #require(metrics.value("cartograph_store_bytes", ["tenant": "acme", "model": "comics"])) > 4096)
            // A deleted store's gauge goes with it.
            #expect(try server.client.send("DELETE", "/v1/tenants/acme/models/comics", token: key).status == 204)
            metrics = try scrape(server)
            #expect(!metrics.contains { $0.name == "cartograph_store_bytes" })
        }
    }

    // MARK: Logs (R-S10)

    @Test func R_S10_aProblemsLogLineCarriesItsTypeAndDetail() throws {
        try withLiveServer { (server) throws in
            let missing = try server.client.send("GET", "/v1/tenants/nobody", headers: [("X-Request-Id", "ops-404")], token: server.adminToken)
            #expect(missing.status == 404)
            let refused = try server.client.send("GET", "/v1/tenants", headers: [("X-Request-Id", "ops-401")])
            #expect(refused.status == 401)
            #expect(try server.client.send("GET", "/healthz", headers: [("X-Request-Id", "ops-200")]).status == 200)
            #expect(server.logContains("request.id=ops-200"))
            let lines = server.log.split(separator: "\n")
            let notFound = try #require(lines.first { $0.contains("request.id=ops-404") })
            #expect(notFound.contains("http.status=404"))
            #expect(notFound.contains("problem.type=urn:cartograph:problem:not-found"))
            #expect(notFound.contains(#"problem.detail="No tenant named 'nobody'.""#), "a detail with spaces is one quoted value: \(notFound)")
            let unauthorized = try #require(lines.first { $0.contains("request.id=ops-401") })
            #expect(unauthorized.contains("problem.type=urn:cartograph:problem:unauthorized"))
            #expect(unauthorized.contains(#"problem.detail="Missing bearer token: send 'Authorization: Bearer <token>'.""#))
            let ok = try #require(lines.first { $0.contains("request.id=ops-200") })
            #expect(!ok.contains("problem."))
        }
    }

    /// Details that repeat what the client sent (an object key, a predicate, a query value, a path) are
    /// left out of the log line; its problem type stays.
    @Test func R_S10_aProblemDetailQuotingTheRequestStaysOutOfTheLog() throws {
        try withRoster(["--log-format", "json"]) { (server, key) throws in
            let canary = "canary7391"
            let objects = "/v1/tenants/acme/models/comics/entities/Character/objects"
            let requests: [(target: String, status: Int, type: String)] = [
                (objects + "/\(canary)", 400, "bad-request"),
                (objects + "/73917391", 404, "not-found"),
                (objects + "?where=name%20%3D%3D%20%27\(canary)%27%20AND", 400, "bad-request"),
                (objects + "?limit=\(canary)", 400, "bad-request"),
                ("/v1/\(canary)", 404, "not-found"),
            ]
            for (index, request) in requests.enumerated() {
                let answer = try server.client.send("GET", request.target, headers: [("X-Request-Id", "quoted-\(index)")], token: key)
                #expect(answer.status == request.status, "\(request.target): \(answer.text)")
                if index == 1 { #expect(try answer.json()["detail"] == "No Character object with key '73917391'.", "the client reads the whole detail") }
            }
            #expect(server.logContains(#""request.id":"quoted-\#(requests.count - 1)""#))
            let lines = server.log.split(separator: "\n")
            for (index, request) in requests.enumerated() {
                let line = try #require(lines.first { $0.contains(#""request.id":"quoted-\#(index)""#) })
                #expect(line.contains(#""problem.type":"urn:cartograph:problem:\#(request.type)""#), "\(line)")
                #expect(!line.contains("problem.detail"), "\(line)")
            }
            #expect(!server.log.contains(canary) && !server.log.contains("73917391"))
        }
    }
}
