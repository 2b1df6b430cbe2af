// Liveness, readiness, metrics and the OpenAPI document.
import CartographCore

enum ServiceRoutes {
    static let all: [Route] = [
        Route("GET", "/healthz", access: .anyone) { _ in .json(["status": "ok"]) },
        Route("GET", "/readyz", access: .anyone) { context in
            switch context.application.serviceState {
            case .ready:
                // Ready for every store but those listed: a store's fault is the store's, not the server's.
                let faults = context.application.storeFaults.report
                return .json(faults.isEmpty ? ["status": "ready"] : ["status": "ready", "storeFaults": .array(faults)])
            case .starting: throw CartographError(.unavailable, "The server is starting.", retryAfterSeconds: 1)
            case .draining: throw CartographError(.unavailable, "The server is shutting down.", retryAfterSeconds: 1)
            }
        },
        Route("GET", "/metrics", access: .anyone) { context in
            if context.application.configuration.metricsRequireAdmin, context.principal != .admin {
                throw CartographError(.unauthorized, "Metrics need the admin token on this server.")
            }
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                                body: context.application.renderMetrics())
        },
        Route("GET", "/openapi.yaml", access: .anyone) { _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/yaml")], body: PackageResources.openapi_yaml)
        },
    ]
}
