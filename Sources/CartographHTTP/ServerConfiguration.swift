// Every setting of `cartograph serve`, built once at start-up by the executable from flags and
// environment. Modules receive it; none reads the environment itself.
import Foundation
import CartographMapping
public import CartographStore

/// The server's configuration, with the defaults of docs/configuration.md.
public struct ServerConfiguration: Sendable {
    /// Interface to bind (`0.0.0.0` = all IPv4 interfaces).
    public var host: String = "0.0.0.0"
    /// TCP port; 0 picks a free one (tests).
    public var port: Int = 8080
    /// Where control.sqlite, admin.token and the tenants' stores live.
    public var dataDirectory: String = "./data"
    /// The admin token; nil means "read or generate `<data-dir>/admin.token`".
    public var adminToken: String? = nil
    /// Request threads (each a libmicrohttpd daemon on the port). A connection stays on the thread whose socket
    /// the kernel gave it to: with one thread per core, two clients share a thread (and a core) one time in two;
    /// with twice as many, one time in four. More threads than that slowed gets by preemption inside locks
    /// (8 threads on 2 cores: 12-35k req/s, 4: 26-34k).
    public var threads: Int = 2 * ProcessInfo.processInfo.activeProcessorCount
    /// Largest accepted request body (413 beyond).
    public var maxBodyBytes: Int = 64 * 1024 * 1024
    /// Most objects (representations, nested ones included) in one payload (413 beyond).
    public var maxObjectsPerPayload: Int = MappingEngine.defaultMaximumObjects
    /// Deepest accepted JSON nesting (400 beyond).
    public var maxJSONDepth: Int = 512
    /// Most simultaneous connections.
    public var connectionLimit: Int = 1024
    /// Most simultaneous connections from one IP address (0 = no limit). Unless set, a quarter of
    /// `connectionLimit` (at least 1): one address cannot hold every slot, and a proxy in front still gets most.
    public var perIPConnectionLimit: Int {
        get { explicitPerIPConnectionLimit ?? max(1, connectionLimit / 4) }
        set { explicitPerIPConnectionLimit = newValue }
    }
    private var explicitPerIPConnectionLimit: Int?
    /// Seconds a request may take, from its first byte to its answer (R-S2): past it the work
    /// stops, nothing is stored and the answer is 503 `time-limit-exceeded`.
    public var requestTimeLimitSeconds: Int = 120
    /// Seconds an idle connection is kept.
    public var connectionTimeoutSeconds: Int = 120
    /// Seconds SIGTERM waits for in-flight requests before closing anyway.
    public var drainTimeoutSeconds: Int = 30
    /// Whether /metrics needs the admin token.
    public var metricsRequireAdmin: Bool = false
    /// Whether metrics keep series per tenant (unbounded: one set per tenant; off by default).
    public var metricsTenantLabels: Bool = false
    /// The origins browser apps may call the API from (`https://console.example.com`), matched exactly (R-S8).
    public var corsOrigins: [String] = []
    /// Most model stores kept open at once (least recently used closed first).
    public var maxOpenStores: Int = 256
    /// Seconds after which an unused store is closed.
    public var storeIdleSeconds: Int = 300
    /// What all stores' SQLite connections may hold together (page caches): past it caches recycle pages
    /// instead of growing. 96 MiB fits a writer's cache (32 MiB) and a few readers' (16 MiB each).
    public var sqliteMemoryBudgetBytes: Int64 = 96 << 20
    /// SQLite durability (R-S4).
    public var synchronous: SQLiteSynchronous = .normal
    /// Requests per second each tenant's keys may make, as a token bucket per tenant (R-S2; 0 = no
    /// limit, the default). The admin token is never limited. A tenant's own limit overrides it.
    public var tenantRateLimit: Double = 0
    /// Requests a tenant may make at once before its rate applies (the bucket's size; 0 = one
    /// second's worth of `tenantRateLimit`, at least 1).
    public var tenantRateBurst: Int = 0
    /// Bytes a tenant's stores may hold together (0 = no limit). A tenant's own limit overrides it.
    public var tenantMaxStoreBytes: Int64 = 0
    /// Models a tenant may register (0 = no limit). A tenant's own limit overrides it.
    public var tenantMaxModels: Int = 0
    /// How often at most a store's long polls are woken (R-D8): the commits of one interval wake them once.
    /// Not a flag: tests lengthen it so that a burst of commits surely falls within one interval.
    public var longPollWakeInterval: Duration = ChangeWaiters.defaultWakeInterval
    /// Hosts webhooks may reach although they are not public https hosts (R-W4): loopback or private
    /// addresses, and plain http. Matched by name, case-insensitively.
    public var webhookAllowedHosts: [String] = []
    /// Failed deliveries in a row after which a webhook is disabled until its next PUT (R-W3).
    public var webhookMaxFailures: Int = 10
    /// Seconds a delivery may take, connecting included (R-W4).
    public var webhookTimeoutSeconds: Int = 10
    /// Deliveries under way at once, across tenants (R-W4).
    public var webhookConcurrency: Int = 4
    /// The first retry's delay after a failed delivery; each further failure doubles it, up to 256 times it (R-W3).
    public var webhookRetryBase: Duration = .seconds(1)
    /// Feed entries per delivery at most.
    public var webhookBatchSize: Int = 100

    public init() {}
}
