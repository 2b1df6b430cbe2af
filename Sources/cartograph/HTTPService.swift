// The server as a swift-service-lifecycle service: start, wait for SIGTERM/SIGINT, drain (R-S5).
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import CartographHTTP
import CartographStore

struct HTTPService: Service {
    let server: MicroHTTPDServer
    let logger: Logger

    func run() async throws {
        let port = try server.start()
        server.application.setServiceState(.ready)
        let configuration = server.application.configuration
        logger.notice("listening", metadata: [
            "host": "\(configuration.host)", "port": "\(port)", "threads": "\(configuration.threads)",
            "data_dir": "\(configuration.dataDirectory)",
        ])
        // Closes stores nobody has used for a while, so idle tenants hold no open files.
        let stores = server.application.stores, idleSeconds = configuration.storeIdleSeconds
        let sweeper = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(min(60, idleSeconds)))
                stores.closeIdleStores(olderThan: Int64(idleSeconds))
            }
        }
        defer { sweeper.cancel() }
        server.application.startWebhookDeliveries()
        // Sleeps until the service group relays a shutdown signal.
        try? await gracefulShutdown()
        server.application.stopWebhookDeliveries()
        logger.notice("draining", metadata: ["in_flight": "\(server.inFlight.load(ordering: .relaxed))"])
        server.application.setServiceState(.draining)
        server.quiesce()
        let drained = server.waitForInFlightRequests(timeout: .seconds(configuration.drainTimeoutSeconds))
        if !drained { logger.warning("drain timed out; closing remaining connections") }
        server.stop()
    }
}
