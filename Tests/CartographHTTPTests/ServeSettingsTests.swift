// How `cartograph serve` reads its flags into a configuration (Settings), without starting a server.
import ArgumentParser
import Foundation
import Testing
import CartographHTTP
@testable import cartograph

struct ServeSettingsTests {
    private func settings(_ arguments: [String]) throws -> Settings { try Settings(serve: Serve.parse(arguments), environment: [:]) }

    @Test func R_S2_connectionsPerIPDefaultToAQuarterOfTheConnectionLimit() throws {
        #expect(try settings([]).configuration.perIPConnectionLimit == 256)
        #expect(try settings(["--connection-limit", "100"]).configuration.perIPConnectionLimit == 25)
        #expect(try settings(["--connection-limit", "2"]).configuration.perIPConnectionLimit == 1)
        #expect(try settings(["--connection-limit", "100", "--per-ip-connection-limit", "0"]).configuration.perIPConnectionLimit == 0)
        #expect(try Settings(serve: Serve.parse([]), environment: ["CARTOGRAPH_PER_IP_CONNECTION_LIMIT": "7"]).configuration.perIPConnectionLimit == 7)
    }

    /// Issue 15: the reader pool's page caches have a total memory budget (SQLite's soft heap limit).
    @Test func theSQLiteMemoryBudgetIsReadInMiB() throws {
        #expect(try settings([]).configuration.sqliteMemoryBudgetBytes == 96 << 20)
        #expect(try settings(["--sqlite-memory-mib", "40"]).configuration.sqliteMemoryBudgetBytes == 40 << 20)
        #expect(try Settings(serve: Serve.parse([]), environment: ["CARTOGRAPH_SQLITE_MEMORY_MIB": "200"]).configuration.sqliteMemoryBudgetBytes == 200 << 20)
        #expect(throws: ValidationError.self) { try settings(["--sqlite-memory-mib", "1"]) }
    }

    /// R-S8: `--cors-origin` is repeatable (the environment takes a comma-separated list); each value must
    /// be an origin, kept lowercased as browsers send it; a wildcard or a path is refused at start-up.
    @Test func R_S8_corsOriginsAreExactOriginsFromFlagsOrTheEnvironment() throws {
        #expect(try settings([]).configuration.corsOrigins == [])
        #expect(try settings(["--cors-origin", "https://Console.Example.com", "--cors-origin", "http://localhost:3000"]).configuration.corsOrigins
                == ["https://console.example.com", "http://localhost:3000"])
        let fromEnvironment = try Settings(serve: Serve.parse([]), environment: ["CARTOGRAPH_CORS_ORIGIN": "https://a.example, http://[::1]:8000"])
        #expect(fromEnvironment.configuration.corsOrigins == ["https://a.example", "http://[::1]:8000"])
        for bad in ["*", "https://*.example.com", "https://console.example.com/", "https://console.example.com/app", "console.example.com", "ftp://x.example", "https://"] {
            #expect(throws: ValidationError.self, "\(bad)") { try settings(["--cors-origin", bad]) }
        }
    }

    /// R-W3, R-W4: the webhook flags — allowed hosts repeatable (comma-separated in the environment), names
    /// or addresses only; failures, timeout, concurrency and the retry base within their ranges.
    @Test func R_W3_R_W4_webhookFlagsAndTheirEnvironment() throws {
        let defaults = try settings([]).configuration
        #expect(defaults.webhookAllowedHosts == [] && defaults.webhookMaxFailures == 10 && defaults.webhookTimeoutSeconds == 10)
        #expect(defaults.webhookConcurrency == 4 && defaults.webhookRetryBase == .seconds(1))
        let set = try settings(["--webhook-allow-host", "127.0.0.1", "--webhook-allow-host", "hooks.internal", "--webhook-max-failures", "3",
                                "--webhook-timeout", "2", "--webhook-concurrency", "8", "--webhook-retry-base-ms", "50"]).configuration
        #expect(set.webhookAllowedHosts == ["127.0.0.1", "hooks.internal"])
        #expect(set.webhookMaxFailures == 3 && set.webhookTimeoutSeconds == 2 && set.webhookConcurrency == 8 && set.webhookRetryBase == .milliseconds(50))
        let fromEnvironment = try Settings(serve: Serve.parse([]), environment: ["CARTOGRAPH_WEBHOOK_ALLOW_HOST": "127.0.0.1, [::1]",
                                                                                "CARTOGRAPH_WEBHOOK_MAX_FAILURES": "5"]).configuration
        #expect(fromEnvironment.webhookAllowedHosts == ["127.0.0.1", "[::1]"])
        #expect(fromEnvironment.webhookMaxFailures == 5)
        for bad in ["http://127.0.0.1", "127.0.0.1:8080", "hooks.internal/x", ""] {
            #expect(throws: ValidationError.self, "\(bad)") { try settings(["--webhook-allow-host", bad]) }
        }
        #expect(throws: ValidationError.self) { try settings(["--webhook-max-failures", "0"]) }
        #expect(throws: ValidationError.self) { try settings(["--webhook-retry-base-ms", "0"]) }
    }

    /// R-S9: tenant labels are off unless asked for, by the flag or the environment.
    @Test func R_S9_tenantLabelsAreOffUnlessAskedFor() throws {
        #expect(try settings([]).configuration.metricsTenantLabels == false)
        #expect(try settings(["--metrics-tenant-labels"]).configuration.metricsTenantLabels == true)
        #expect(try Settings(serve: Serve.parse([]), environment: ["CARTOGRAPH_METRICS_TENANT_LABELS": "true"]).configuration.metricsTenantLabels == true)
        #expect(try Settings(serve: Serve.parse([]), environment: ["CARTOGRAPH_METRICS_TENANT_LABELS": "0"]).configuration.metricsTenantLabels == false)
        #expect(throws: ValidationError.self) { try Settings(serve: Serve.parse([]), environment: ["CARTOGRAPH_METRICS_TENANT_LABELS": "maybe"]) }
    }

    /// Each worker thread keeps its connections: twice the cores, so a burst of connections on one thread
    /// still leaves another thread for each core.
    @Test func theHTTPThreadsDefaultToTwiceTheCores() throws {
        #expect(try settings([]).configuration.threads == 2 * ProcessInfo.processInfo.activeProcessorCount)
        #expect(try settings(["--threads", "3"]).configuration.threads == 3)
    }
}
