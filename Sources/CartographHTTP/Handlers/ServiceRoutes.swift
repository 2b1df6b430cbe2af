// Liveness, readiness, metrics and the OpenAPI document.
import CartographCore

struct ServiceRoutes: Sendable {
    let readiness: Readiness
    let storeFaults: StoreFaults
    /// Whether `/metrics` needs the admin token (`--metrics-auth admin`).
    let metricsRequireAdmin: Bool
    /// Renders the Prometheus text, the gauges read at scrape time brought up to date first.
    let metricsText: @Sendable () -> [UInt8]

    var routes: [Route] { [
        Route("GET", "/healthz", access: .anyone) { _ in .json(["status": "ok"]) },
        Route("GET", "/readyz", access: .anyone) { _ in
            switch readiness.state {
            case .ready:
                // Ready for every store but those listed: a store's fault is the store's, not the server's.
                let faults = storeFaults.report
                return .json(faults.isEmpty ? ["status": "ready"] : ["status": "ready", "storeFaults": .array(faults)])
            case .starting: throw CartographError(.unavailable, "The server is starting.", retryAfterSeconds: 1)
            case .draining: throw Readiness.shuttingDown
            }
        },
        Route("GET", "/metrics", access: .anyone) { context in
            if metricsRequireAdmin, context.principal != .admin {
                throw CartographError(.unauthorized, "Metrics need the admin token on this server.")
            }
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: metricsText())
        },
        Route("GET", "/openapi.yaml", access: .anyone) { _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/yaml")], body: PackageResources.openapi_yaml)
        },
    ] }
}
