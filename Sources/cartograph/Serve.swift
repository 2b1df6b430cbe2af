// `cartograph serve`: flags and environment -> ServerConfiguration -> running server.
import ArgumentParser
import Foundation
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import UnixSignals
import CartographCore
import CartographStore
import CartographHTTP

/// The configuration before any flag or environment variable: `--help` states its defaults.
private let defaults = ServerConfiguration()

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the HTTP API.",
        discussion: """
            Every option can also be set in the environment as CARTOGRAPH_<OPTION> (e.g. CARTOGRAPH_PORT, \
            CARTOGRAPH_DATA_DIR, CARTOGRAPH_ADMIN_TOKEN); a flag wins over the environment.
            """
    )

    @Option(help: "Interface to bind. [env: CARTOGRAPH_HOST] (default: \(defaults.host))") var host: String?
    @Option(help: "TCP port; 0 picks a free port. [env: CARTOGRAPH_PORT] (default: \(defaults.port))") var port: Int?
    @Option(name: .customLong("data-dir"), help: "Data directory. [env: CARTOGRAPH_DATA_DIR] (default: \(defaults.dataDirectory))") var dataDir: String?
    @Option(name: .customLong("admin-token"), help: "Admin token; generated into <data-dir>/admin.token when absent. [env: CARTOGRAPH_ADMIN_TOKEN]")
    var adminToken: String?
    @Option(help: "HTTP worker threads. [env: CARTOGRAPH_THREADS] (default: twice the number of cores)") var threads: Int?
    @Option(name: .customLong("max-body-bytes"), help: "Largest request body. [env: CARTOGRAPH_MAX_BODY_BYTES] (default: \(defaults.maxBodyBytes))")
    var maxBodyBytes: Int?
    @Option(name: .customLong("max-objects-per-payload"), help: "Most objects in one payload, nested ones included. [env: CARTOGRAPH_MAX_OBJECTS_PER_PAYLOAD] (default: \(defaults.maxObjectsPerPayload))")
    var maxObjectsPerPayload: Int?
    @Option(name: .customLong("max-json-depth"), help: "Deepest JSON nesting, at most \(Self.deepestJSONDepth). [env: CARTOGRAPH_MAX_JSON_DEPTH] (default: \(defaults.maxJSONDepth))")
    var maxJSONDepth: Int?
    @Option(name: .customLong("connection-limit"), help: "Most open connections. [env: CARTOGRAPH_CONNECTION_LIMIT] (default: \(defaults.connectionLimit))")
    var connectionLimit: Int?
    @Option(name: .customLong("per-ip-connection-limit"), help: "Most connections per client IP, 0 = no limit. [env: CARTOGRAPH_PER_IP_CONNECTION_LIMIT] (default: a quarter of the connection limit)")
    var perIPConnectionLimit: Int?
    @Option(name: .customLong("request-time-limit"), help: "Seconds a request may take before it is stopped (503, nothing stored). [env: CARTOGRAPH_REQUEST_TIME_LIMIT] (default: \(defaults.requestTimeLimitSeconds))")
    var requestTimeLimit: Int?
    @Option(name: .customLong("connection-timeout"), help: "Seconds an idle connection is kept. [env: CARTOGRAPH_CONNECTION_TIMEOUT] (default: \(defaults.connectionTimeoutSeconds))")
    var connectionTimeout: Int?
    @Option(name: .customLong("drain-timeout"), help: "Seconds SIGTERM waits for in-flight requests. [env: CARTOGRAPH_DRAIN_TIMEOUT] (default: \(defaults.drainTimeoutSeconds))")
    var drainTimeout: Int?
    @Option(help: "SQLite durability: normal or full. [env: CARTOGRAPH_SYNC] (default: \(defaults.synchronous.rawValue))") var sync: String?
    @Option(name: .customLong("max-open-stores"), help: "Most model stores open at once. [env: CARTOGRAPH_MAX_OPEN_STORES] (default: \(defaults.maxOpenStores))")
    var maxOpenStores: Int?
    @Option(name: .customLong("sqlite-memory-mib"), help: "MiB all stores' SQLite page caches may hold together. [env: CARTOGRAPH_SQLITE_MEMORY_MIB] (default: \(defaults.sqliteMemoryBudgetBytes >> 20))")
    var sqliteMemoryMiB: Int?
    @Option(name: .customLong("store-idle-seconds"), help: "Seconds before an unused store is closed. [env: CARTOGRAPH_STORE_IDLE_SECONDS] (default: \(defaults.storeIdleSeconds))")
    var storeIdleSeconds: Int?
    @Option(name: .customLong("tenant-rate-limit"),
            help: "Requests per second each tenant's keys may make, 0 = no limit; the admin token is never limited; a tenant's own limit wins. [env: CARTOGRAPH_TENANT_RATE_LIMIT] (default: \(String(format: "%g", defaults.tenantRateLimit)))")
    var tenantRateLimit: Double?
    @Option(name: .customLong("tenant-rate-burst"),
            help: "Requests a tenant may make at once, 0 = one second's worth of the rate. [env: CARTOGRAPH_TENANT_RATE_BURST] (default: \(defaults.tenantRateBurst))")
    var tenantRateBurst: Int?
    @Option(name: .customLong("tenant-max-store-bytes"),
            help: "Bytes a tenant's stores may hold together, 0 = no limit. [env: CARTOGRAPH_TENANT_MAX_STORE_BYTES] (default: \(defaults.tenantMaxStoreBytes))")
    var tenantMaxStoreBytes: Int?
    @Option(name: .customLong("tenant-max-models"), help: "Models a tenant may register, 0 = no limit. [env: CARTOGRAPH_TENANT_MAX_MODELS] (default: \(defaults.tenantMaxModels))")
    var tenantMaxModels: Int?
    @Option(name: .customLong("metrics-auth"), help: "Who may read /metrics: anyone or admin. [env: CARTOGRAPH_METRICS_AUTH] (default: \(defaults.metricsRequireAdmin ? "admin" : "anyone"))")
    var metricsAuth: String?
    @Flag(name: .customLong("metrics-tenant-labels"),
          help: "Label metrics with the tenant too: one set of series per tenant; true or false in the environment. [env: CARTOGRAPH_METRICS_TENANT_LABELS] (default: \(defaults.metricsTenantLabels ? "on" : "off"))")
    var metricsTenantLabels = false
    @Option(name: .customLong("cors-origin"),
            help: "An origin browser apps may call the API from, e.g. https://console.example.com; repeat for more (comma-separated in the environment). [env: CARTOGRAPH_CORS_ORIGIN] (default: none)")
    var corsOrigin: [String] = []
    @Option(name: .customLong("webhook-allow-host"),
            help: "A host webhooks may reach although it is not a public https host (loopback, private addresses, plain http), matched by name; repeat for more (comma-separated in the environment). [env: CARTOGRAPH_WEBHOOK_ALLOW_HOST] (default: none)")
    var webhookAllowHost: [String] = []
    @Option(name: .customLong("webhook-max-failures"),
            help: "Failed deliveries in a row after which a webhook is disabled until it is PUT again. [env: CARTOGRAPH_WEBHOOK_MAX_FAILURES] (default: \(defaults.webhookMaxFailures))")
    var webhookMaxFailures: Int?
    @Option(name: .customLong("webhook-timeout"),
            help: "Seconds a webhook delivery may take, connecting included. [env: CARTOGRAPH_WEBHOOK_TIMEOUT] (default: \(defaults.webhookTimeoutSeconds))")
    var webhookTimeout: Int?
    @Option(name: .customLong("webhook-concurrency"),
            help: "Webhook deliveries under way at once. [env: CARTOGRAPH_WEBHOOK_CONCURRENCY] (default: \(defaults.webhookConcurrency))")
    var webhookConcurrency: Int?
    @Option(name: .customLong("webhook-retry-base-ms"),
            help: "Milliseconds before the first retry of a failed delivery, doubled for each further failure up to 256 times. [env: CARTOGRAPH_WEBHOOK_RETRY_BASE_MS] (default: \(defaults.webhookRetryBase.components.seconds * 1000))")
    var webhookRetryBaseMs: Int?
    @Option(name: .customLong("log-format"), help: "text (key=value) or json (one object per line). [env: CARTOGRAPH_LOG_FORMAT] (default: \(Settings.defaultLogFormat.rawValue))")
    var logFormat: String?
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical. [env: CARTOGRAPH_LOG_LEVEL] (default: \(Settings.defaultLogLevel.rawValue))")
    var logLevel: String?

    /// The reader and the code that walks a value recurse once per level: 100,000 levels overflowed an
    /// 8 MiB stack (found while probing the depth limit for the fuzz targets), and a debug build overflows it at 4,096;
    /// 2,048 leaves room on a request thread.
    static let deepestJSONDepth = 2_048

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let settings = try Settings(serve: self, environment: environment)
        let registry = PrometheusCollectorRegistry()
        var metricsFactory = PrometheusMetricsFactory(registry: registry)
        metricsFactory.valueHistogramBuckets = MetricHistograms.valueBuckets
        MetricsSystem.bootstrap(metricsFactory)
        let sink = BufferedLogHandler.Sink()
        defer { sink.flush() }
        LoggingSystem.bootstrap { label in
            BufferedLogHandler(label: label, sink: sink, format: settings.logFormat, logLevel: settings.logLevel)
        }
        let logger = Logger(label: "cartograph")
        let configuration = settings.configuration

        SQLiteConnection.limitMemory(bytes: configuration.sqliteMemoryBudgetBytes)
        // One clock for the control store, every model store and the handlers.
        let clock = WallClock.system
        let directory = DataDirectory(path: configuration.dataDirectory)
        let control = try ControlStore(directory: directory, synchronous: configuration.synchronous, clock: clock)
        let admin = try directory.adminToken(configured: configuration.adminToken)
        if admin.generated {
            logger.notice("generated an admin token", metadata: ["path": "\(directory.adminTokenFile.path)"])
        } else if configuration.adminToken == nil {
            logger.info("using the admin token stored on disk", metadata: ["path": "\(directory.adminTokenFile.path)"])
        }
        let stores = StoreRegistry(directory: directory, synchronous: configuration.synchronous,
                                   maxOpenStores: configuration.maxOpenStores, readersPerStore: max(8, configuration.threads), clock: clock) { store in
            logger.notice("store restored from an older copy: its change feed has a new epoch, followers start again from 0",
                          metadata: ["store": "\(store.path)", "epoch": "\(store.epoch)", "replacedEpoch": "\(store.replacedEpoch ?? "")"])
        }
        let application = Application(configuration: configuration, control: control, stores: stores, adminToken: admin.token, logger: logger,
                                      metricsExposition: { registry.emitToBuffer() }, clock: clock)
        let service = HTTPService(server: MicroHTTPDServer(application: application), logger: logger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: service)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            ))
        try await group.run()
        logger.notice("stopped")
    }
}

/// Flags over environment over defaults.
struct Settings {
    static let defaultLogLevel = Logger.Level.info, defaultLogFormat = BufferedLogHandler.Format.text

    var configuration = ServerConfiguration()
    var logLevel = Settings.defaultLogLevel
    var logFormat = Settings.defaultLogFormat

    init(serve: Serve, environment: [String: String]) throws {
        func value(_ flag: String?, _ name: String) -> String? { flag ?? environment["CARTOGRAPH_" + name] }
        func integer(_ flag: Int?, _ name: String, range: ClosedRange<Int>) throws -> Int? {
            guard let text = flag.map(String.init) ?? environment["CARTOGRAPH_" + name] else { return nil }
            guard let number = Int(text), range.contains(number) else {
                throw ValidationError("\(name.lowercased().replacingOccurrences(of: "_", with: "-")) must be a whole number in \(range), not '\(text)'.")
            }
            return number
        }
        func decimal(_ flag: Double?, _ name: String, range: ClosedRange<Double>) throws -> Double? {
            guard let text = flag.map({ "\($0)" }) ?? environment["CARTOGRAPH_" + name] else { return nil }
            guard let number = Double(text), number.isFinite, range.contains(number) else {
                throw ValidationError("\(name.lowercased().replacingOccurrences(of: "_", with: "-")) must be a number in \(range), not '\(text)'.")
            }
            return number
        }
        if let v = value(serve.host, "HOST") { configuration.host = v }
        if let v = try integer(serve.port, "PORT", range: 0...65535) { configuration.port = v }
        if let v = value(serve.dataDir, "DATA_DIR") { configuration.dataDirectory = v }
        configuration.adminToken = value(serve.adminToken, "ADMIN_TOKEN")
        if let v = try integer(serve.threads, "THREADS", range: 1...1024) { configuration.threads = v }
        if let v = try integer(serve.maxBodyBytes, "MAX_BODY_BYTES", range: 1...(1 << 40)) { configuration.maxBodyBytes = v }
        if let v = try integer(serve.maxJSONDepth, "MAX_JSON_DEPTH", range: 1...Serve.deepestJSONDepth) { configuration.maxJSONDepth = v }
        if let v = try integer(serve.maxObjectsPerPayload, "MAX_OBJECTS_PER_PAYLOAD", range: 1...100_000_000) { configuration.maxObjectsPerPayload = v }
        if let v = try integer(serve.connectionLimit, "CONNECTION_LIMIT", range: 1...1_000_000) { configuration.connectionLimit = v }
        if let v = try integer(serve.perIPConnectionLimit, "PER_IP_CONNECTION_LIMIT", range: 0...1_000_000) {
            configuration.perIPConnectionLimit = v
        }
        if let v = try integer(serve.requestTimeLimit, "REQUEST_TIME_LIMIT", range: 1...86_400) { configuration.requestTimeLimitSeconds = v }
        if let v = try integer(serve.connectionTimeout, "CONNECTION_TIMEOUT", range: 1...86_400) {
            configuration.connectionTimeoutSeconds = v
        }
        if let v = try integer(serve.drainTimeout, "DRAIN_TIMEOUT", range: 0...3_600) { configuration.drainTimeoutSeconds = v }
        if let v = try integer(serve.maxOpenStores, "MAX_OPEN_STORES", range: 1...100_000) { configuration.maxOpenStores = v }
        if let v = try integer(serve.storeIdleSeconds, "STORE_IDLE_SECONDS", range: 1...86_400) { configuration.storeIdleSeconds = v }
        if let v = try integer(serve.sqliteMemoryMiB, "SQLITE_MEMORY_MIB", range: 8...1_048_576) { configuration.sqliteMemoryBudgetBytes = Int64(v) << 20 }
        if let v = try decimal(serve.tenantRateLimit, "TENANT_RATE_LIMIT", range: 0...1_000_000) { configuration.tenantRateLimit = v }
        if let v = try integer(serve.tenantRateBurst, "TENANT_RATE_BURST", range: 0...1_000_000_000) { configuration.tenantRateBurst = v }
        if let v = try integer(serve.tenantMaxStoreBytes, "TENANT_MAX_STORE_BYTES", range: 0...(1 << 50)) {
            configuration.tenantMaxStoreBytes = Int64(v)
        }
        if let v = try integer(serve.tenantMaxModels, "TENANT_MAX_MODELS", range: 0...1_000_000) { configuration.tenantMaxModels = v }
        if let v = value(serve.sync, "SYNC") {
            guard let sync = SQLiteSynchronous(rawValue: v.lowercased()) else { throw ValidationError("sync must be 'normal' or 'full', not '\(v)'.") }
            configuration.synchronous = sync
        }
        if let v = value(serve.metricsAuth, "METRICS_AUTH") {
            guard v == "anyone" || v == "admin" else { throw ValidationError("metrics-auth must be 'anyone' or 'admin', not '\(v)'.") }
            configuration.metricsRequireAdmin = v == "admin"
        }
        if serve.metricsTenantLabels {
            configuration.metricsTenantLabels = true
        } else if let v = environment["CARTOGRAPH_METRICS_TENANT_LABELS"] {
            guard let on = ["true": true, "1": true, "false": false, "0": false][v.lowercased()] else {
                throw ValidationError("metrics-tenant-labels must be 'true' or 'false', not '\(v)'.")
            }
            configuration.metricsTenantLabels = on
        }
        let origins = serve.corsOrigin.isEmpty
            ? (environment["CARTOGRAPH_CORS_ORIGIN"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            : serve.corsOrigin
        configuration.corsOrigins = try origins.map { (text) throws(ValidationError) -> String in
            guard let origin = CORSOrigin.parse(text) else {
                throw ValidationError("cors-origin must be an origin like https://console.example.com (scheme, host, optional port; no path, no wildcard), not '\(text)'.")
            }
            return origin
        }
        let allowedHosts = serve.webhookAllowHost.isEmpty
            ? (environment["CARTOGRAPH_WEBHOOK_ALLOW_HOST"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            : serve.webhookAllowHost
        configuration.webhookAllowedHosts = try allowedHosts.map { (host) throws(ValidationError) -> String in
            guard !host.isEmpty, !host.contains("/"), !host.contains(":") || host.hasPrefix("[") else {
                throw ValidationError("webhook-allow-host must be a host name or address such as hooks.internal or 127.0.0.1 (no scheme, port or path), not '\(host)'.")
            }
            return host
        }
        if let v = try integer(serve.webhookMaxFailures, "WEBHOOK_MAX_FAILURES", range: 1...1_000_000) { configuration.webhookMaxFailures = v }
        if let v = try integer(serve.webhookTimeout, "WEBHOOK_TIMEOUT", range: 1...600) { configuration.webhookTimeoutSeconds = v }
        if let v = try integer(serve.webhookConcurrency, "WEBHOOK_CONCURRENCY", range: 1...256) { configuration.webhookConcurrency = v }
        if let v = try integer(serve.webhookRetryBaseMs, "WEBHOOK_RETRY_BASE_MS", range: 1...3_600_000) { configuration.webhookRetryBase = .milliseconds(v) }
        if let v = value(serve.logFormat, "LOG_FORMAT") {
            guard let format = BufferedLogHandler.Format(rawValue: v.lowercased()) else { throw ValidationError("log-format must be 'text' or 'json', not '\(v)'.") }
            logFormat = format
        }
        if let v = value(serve.logLevel, "LOG_LEVEL") {
            guard let level = Logger.Level(rawValue: v.lowercased()) else { throw ValidationError("log-level '\(v)' is not a level.") }
            logLevel = level
        }
    }
}
