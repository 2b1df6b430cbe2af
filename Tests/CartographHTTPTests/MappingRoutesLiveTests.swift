// The metrics of mapping (R-S6) on the real server: `serve` bootstraps the metrics registry that
// /metrics renders, so they are read from a live server.
import Foundation
import Testing
import CartographCore
import CartographTesting

@Suite(.serialized) struct MappingRoutesLiveTests {
    @Test func R_S6_R_P17_metricsCountMappedObjectsDriftAndStoreSizes() throws {
        try withLiveServer { (server) throws in
            let key = try registerComics(on: server)
            _ = try server.client.sendJSON("PUT", "/v1/tenants/acme/models/comics/mappings/characters", characterMapping, token: key)
            let posted = try server.client.sendJSON("POST", "/v1/tenants/acme/models/comics/mappings/characters/payloads",
                                                    ["characters": [["id": 1, "name": "Thor", "publisher": ["id": 2, "name": "Marvel"]]]], token: key)
            #expect(try posted.json()["inserted"] == 2)
            // R-P17: two keys the mapping does not read.
            let drifting = try server.client.sendJSON("POST", "/v1/tenants/acme/models/comics/mappings/characters/payloads",
                                                      ["characters": [["id": 3, "name": "Loki", "alias": "trickster", "since": 1962]]], token: key)
            #expect(try drifting.json()["drift"]?.arrayValue?.count == 2)
            let metrics = MetricSample.parse(try server.client.send("GET", "/metrics").text)
            #expect(metrics.value("cartograph_objects_mapped_total", ["model": "comics", "action": "insert"]) == 3)
            #expect(metrics.value("cartograph_drift_total", ["model": "comics"]) == 2)
            #expect(try #require(metrics.value("cartograph_store_bytes")) > 4096)
        }
    }
}
