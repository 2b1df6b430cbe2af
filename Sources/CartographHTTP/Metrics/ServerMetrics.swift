// The server's Prometheus metrics (R-S9; docs/operations.md lists each with its labels), recorded through
// swift-metrics: `cartograph serve` bootstraps it with the Prometheus registry that /metrics renders.
// Every label takes a bounded set of values, as each distinct set is a series Prometheus keeps: routes
// are templates, statuses and problem types closed sets, model names capped at `modelLabelLimit`, and
// tenants appear only when the operator asks for them (`--metrics-tenant-labels`), never on histograms.
import Foundation
import Synchronization
import Metrics
import CartographStore

/// The bucket bounds of the value histograms, by metric name, for the metrics factory `cartograph serve` sets up.
public enum MetricHistograms {
    /// Request bodies: 1 KiB to 64 MiB (the default body limit), by factors of 4.
    public static let valueBuckets: [String: [Double]] = [
        "cartograph_http_request_body_bytes": (0...8).map { Double(1024 << (2 * $0)) },
    ]
}

/// Records what the server does as metrics. The handles of per-request series are kept, so that a request
/// looks nothing up in the registry.
final class ServerMetrics: Sendable {
    /// Whether series are kept per tenant (`--metrics-tenant-labels`).
    let tenantLabels: Bool
    /// Without tenant labels, this many model names get series of their own; the rest share `otherModel`.
    static let modelLabelLimit = 100
    static let otherModel = "_other"

    private let requestHandles = HandleCache<RequestSeries, (requests: Counter, duration: Metrics.Timer)>()
    private let bodyHandles = HandleCache<String, Recorder>()
    private let problemHandles = HandleCache<ProblemSeries, Counter>()

    /// The labels of a request's series ("" for the tenant without tenant labels): a key hashed as it
    /// is, where a string of them was built for every request.
    private struct RequestSeries: Hashable {
        let method: String, route: String, status: Int, tenant: String
    }

    /// The labels of a problem's series, as `RequestSeries`.
    private struct ProblemSeries: Hashable {
        let type: String, tenant: String
    }
    /// The model names that have series of their own (without tenant labels).
    private let labelledModels = Mutex<Set<String>>([])
    /// The stores whose size gauge the last scrape exported (with tenant labels), so that a deleted
    /// store's gauge goes away instead of repeating its last size.
    private let exportedStores = Mutex<Set<[String]>>([])

    init(tenantLabels: Bool) { self.tenantLabels = tenantLabels }

    /// `("tenant", …)` when series are kept per tenant; "" for a request no tenant authenticated.
    private func tenantDimension(_ tenant: String?) -> [(String, String)] {
        tenantLabels ? [("tenant", tenant ?? "")] : []
    }

    /// `cartograph_webhook_deliveries_total` by `outcome` (`delivered` or `failed`): one per POST to a receiver (R-W3).
    func webhookDelivery(outcome: String) {
        Counter(label: "cartograph_webhook_deliveries_total", dimensions: [("outcome", outcome)]).increment()
    }

    /// `cartograph_http_requests_total` and `cartograph_http_request_duration_seconds`.
    func request(method: String, route: String, status: Int, tenant: String?, nanoseconds: Int64) {
        let series = RequestSeries(method: method, route: route, status: status, tenant: tenantLabels ? tenant ?? "" : "")
        let handles = requestHandles.handle(series) {
            (Counter(label: "cartograph_http_requests_total",
                     dimensions: [("method", method), ("route", route), ("status", String(status))] + tenantDimension(tenant)),
             Metrics.Timer(label: "cartograph_http_request_duration_seconds", dimensions: [("method", method), ("route", route)]))
        }
        handles.requests.increment()
        handles.duration.recordNanoseconds(nanoseconds)
    }

    /// `cartograph_http_request_body_bytes`: the body of a request that reached its route.
    func requestBody(route: String, bytes: Int) {
        bodyHandles.handle(route) {
            Recorder(label: "cartograph_http_request_body_bytes", dimensions: [("route", route)], aggregate: true)
        }.record(bytes)
    }

    /// `cartograph_problems_total`: one problem answered, by its type URI.
    func problem(type: String, tenant: String?) {
        problemHandles.handle(ProblemSeries(type: type, tenant: tenantLabels ? tenant ?? "" : "")) {
            Counter(label: "cartograph_problems_total", dimensions: [("type", type)] + tenantDimension(tenant))
        }.increment()
    }

    /// `cartograph_objects_mapped_total`: what a committed payload (or snapshot completion) did, by action; and
    /// `cartograph_drift_total`, how often it drifted from its mapping.
    func objectsMapped(_ result: MappedCounts, tenant: String, model: String) {
        let modelLabel = modelLabel(model)
        for (action, count) in [("insert", result.inserted), ("update", result.updated), ("unchanged", result.unchanged), ("delete", result.deleted)] {
            Counter(label: "cartograph_objects_mapped_total", dimensions: [("model", modelLabel), ("action", action)] + tenantDimension(tenant))
                .increment(by: count)
        }
        // R-P17: keys not read and values of another type, over the model's committed payloads.
        if result.drifted > 0 {
            Counter(label: "cartograph_drift_total", dimensions: [("model", modelLabel)] + tenantDimension(tenant)).increment(by: result.drifted)
        }
    }

    /// The `model` label of a model: its name, or `otherModel` without tenant labels once `modelLabelLimit`
    /// other names have series (tenants name their models, so the names are not a closed set).
    func modelLabel(_ model: String) -> String {
        guard !tenantLabels else { return model }
        return labelledModels.withLock { names in
            if names.contains(model) { return model }
            guard names.count < Self.modelLabelLimit else { return Self.otherModel }
            names.insert(model)
            return model
        }
    }

    /// The gauges read when /metrics is scraped: open stores, parked long polls, the stores' bytes on disk, the
    /// process's memory and files.
    func refreshGauges(stores: StoreRegistry, tenants: [String], parkedLongPolls: Int) {
        Gauge(label: "cartograph_open_stores").record(stores.openStoreCount)
        Gauge(label: "cartograph_long_polls_parked").record(parkedLongPolls)
        let sizes = stores.storeSizesOnDisk(tenants: tenants)
        if tenantLabels {
            for size in sizes {
                Gauge(label: "cartograph_store_bytes", dimensions: [("tenant", size.tenant), ("model", size.model)]).record(size.bytes)
            }
            let current = Set(sizes.map { [$0.tenant, $0.model] })
            let gone = exportedStores.withLock { exported in
                defer { exported = current }
                return exported.subtracting(current)
            }
            for store in gone { Gauge(label: "cartograph_store_bytes", dimensions: [("tenant", store[0]), ("model", store[1])]).destroy() }
        } else {
            Gauge(label: "cartograph_store_bytes").record(sizes.reduce(Int64(0)) { $0 + $1.bytes })
        }
        let process = ProcessStatistics.current()
        if let bytes = process.residentBytes { Gauge(label: "process_resident_memory_bytes").record(bytes) }
        if let count = process.openDescriptors { Gauge(label: "process_open_fds").record(count) }
        if let limit = process.maxDescriptors { Gauge(label: "process_max_fds").record(limit) }
    }
}

/// Metric handles by the label values they were made for. Each thread looks in a shard of its own
/// (chosen by its thread id), each shard with its own lock: with one table behind one lock, the request
/// threads spun for it on every request (1.6% of a get's CPU). A handle is made once per shard, and
/// the metrics factory gives every shard's handle the same series.
private final class HandleCache<Key: Hashable & Sendable, Handle: Sendable>: Sendable {
    private final class Shard: Sendable {
        let handles = Mutex<[Key: Handle]>([:])
    }

    private static var shardCount: Int { 16 }
    private let shards = (0..<HandleCache.shardCount).map { _ in Shard() }

    func handle(_ key: Key, make: () -> Handle) -> Handle {
        // A thread id is an address: its low bits are alignment, so they are mixed in.
        let thread = UInt64(UInt(bitPattern: Int(bitPattern: pthread_self())))
        let shard = shards[Int(truncatingIfNeeded: (thread &* 0x9E37_79B9_7F4A_7C15) >> 60) % Self.shardCount]
        return shard.handles.withLock { handles in
            if let existing = handles[key] { return existing }
            let created = make()
            handles[key] = created
            return created
        }
    }
}
