// The server as a function from request to response. It owns the order of concerns for every
// request: request id, readiness, routing (OPTIONS and CORS), authentication, the tenant's rate limit,
// content type, handler, problem rendering, CORS headers, metrics and the request log.
import Foundation
public import Synchronization
public import Logging
public import CartographCore
public import CartographStore

/// Whether the service takes requests (`/readyz`, R-S5).
public enum ServiceState: UInt8, Sendable, AtomicRepresentable {
    case starting, ready, draining
}

/// The service's state, set by the server as it starts and drains, read by admission and `/readyz`.
final class Readiness: Sendable {
    private let current = Atomic<ServiceState>(.starting)

    var state: ServiceState { current.load(ordering: .acquiring) }
    func set(_ state: ServiceState) { current.store(state, ordering: .releasing) }

    /// The 503 of every request while the server drains.
    static let shuttingDown = CartographError(.unavailable, "The server is shutting down.", retryAfterSeconds: 1)
}

/// Cartograph's request handling, independent of any socket. It builds the route table once, giving
/// each group of handlers the services it uses; what a handler learns of its request is its `RequestContext`.
public final class Application: Sendable {
    public let configuration: ServerConfiguration
    public let control: ControlStore
    public let stores: StoreRegistry
    public let logger: Logger
    let router: Router
    /// The admin token, compared in constant time (`SecretHash.constantTimeMatches`) rather than hashed: its
    /// SHA-256 was a twentieth of a get's CPU. The server was given the token, and keeps it as it keeps the last
    /// secret that matched each key (`ControlStore.authenticate`).
    private let adminToken: [UInt8]
    private let readiness: Readiness
    /// The limits in force for each tenant (R-S2), and the rate limiter that enforces them.
    let tenantLimits: TenantLimitsInForce
    /// Long polls waiting for a store to change.
    let changeWaiters: ChangeWaiters
    /// Stores whose disk is full or whose file cannot be written or is damaged (`/readyz` lists them).
    let storeFaults: StoreFaults
    /// The origins browser apps may call from (R-S8).
    let cors: CORSPolicy
    let metrics: ServerMetrics
    private let problems: ProblemResponder
    /// Delivers the tenants' webhooks once `startWebhookDeliveries` is called (R-W1).
    let webhooks: WebhookDispatcher

    /// - Parameters:
    ///   - control, stores: made with the same `clock`.
    ///   - metricsExposition: renders the Prometheus text for `/metrics`.
    ///   - clock: the time of day the handlers read (a payload's `@metadata.receivedAt`, a storage fault's
    ///     `since`): the stores' clock, so that one clock stamps everything and a test can fix it.
    public init(configuration: ServerConfiguration, control: ControlStore, stores: StoreRegistry, adminToken: String, logger: Logger,
                metricsExposition: @escaping @Sendable () -> [UInt8] = { [] }, clock: WallClock = .system) {
        self.configuration = configuration
        self.control = control
        self.stores = stores
        self.logger = logger
        self.adminToken = Array(adminToken.utf8)
        let readiness = Readiness()
        let tenantLimits = TenantLimitsInForce(defaults: configuration, control: control)
        let changeWaiters = ChangeWaiters(wakeInterval: configuration.longPollWakeInterval)
        let storeFaults = StoreFaults(stores: stores, logger: logger, clock: clock)
        let metrics = ServerMetrics(tenantLabels: configuration.metricsTenantLabels)
        let problems = ProblemResponder(logger: logger)
        let jsonReader = JSONReader(maxDepth: configuration.maxJSONDepth)
        let lookup = ModelStoreLookup(control: control, stores: stores)
        let service = ServiceRoutes(readiness: readiness, storeFaults: storeFaults, metricsRequireAdmin: configuration.metricsRequireAdmin) {
            metrics.refreshGauges(stores: stores, tenants: control.tenants().map(\.id), parkedLongPolls: changeWaiters.parkedCount)
            return metricsExposition()
        }
        let controlPlane = ControlPlaneRoutes(control: control, stores: stores, limits: tenantLimits, changeWaiters: changeWaiters,
                                              jsonReader: jsonReader)
        let models = ModelRoutes(control: control, stores: stores, lookup: lookup, limits: tenantLimits, storeFaults: storeFaults,
                                 indexAdvisor: IndexAdvisor(logger: logger), jsonReader: jsonReader, problems: problems)
        let mappings = MappingRoutes(stores: stores, lookup: lookup, limits: tenantLimits, maxObjectsPerPayload: configuration.maxObjectsPerPayload,
                                     jsonReader: jsonReader, metrics: metrics, clock: clock)
        let webhooks = WebhookDispatcher(configuration: configuration, control: control, stores: stores, logger: logger, metrics: metrics, clock: clock)
        let webhookRoutes = WebhookRoutes(control: control, stores: stores, policy: WebhookAddressPolicy(allowedHosts: configuration.webhookAllowedHosts),
                                          dispatcher: webhooks, jsonReader: jsonReader)
        self.router = Router(routes: service.routes + controlPlane.routes + models.routes + mappings.routes + mappings.archiveRoutes + webhookRoutes.routes
                             + ConsoleRoutes.routes)
        self.webhooks = webhooks
        self.readiness = readiness
        self.tenantLimits = tenantLimits
        self.changeWaiters = changeWaiters
        self.storeFaults = storeFaults
        self.cors = CORSPolicy(origins: configuration.corsOrigins)
        self.metrics = metrics
        self.problems = problems
    }

    /// 429 with `Retry-After` and the draft IETF `RateLimit`/`RateLimit-Policy` fields (quota =
    /// the burst, window = the seconds a burst takes to refill; no tokens remain).
    private func rateLimited(_ refusal: RateLimitRefusal, tenant: String, request: HTTPRequest) -> HTTPResponse {
        let policy = refusal.policy
        let rate = JSONNumber(policy.requestsPerSecond)?.text ?? "\(policy.requestsPerSecond)"
        var response = HTTPResponse.problem(
            CartographError(.tooManyRequests, "Tenant '\(tenant)' is over its rate limit of \(rate) requests per second "
                            + "(burst \(policy.burst)); retry after \(refusal.retryAfterSeconds) s.",
                            retryAfterSeconds: refusal.retryAfterSeconds),
            instance: request.path)
        let window = max(1, Int((Double(policy.burst) / policy.requestsPerSecond).rounded(.up)))
        response.headers.append(("RateLimit-Policy", "\"tenant\";q=\(policy.burst);w=\(window)"))
        response.headers.append(("RateLimit", "\"tenant\";r=0;t=\(refusal.retryAfterSeconds)"))
        return response
    }

    /// Every route the server serves.
    public var routes: [Route] { router.routes }

    public var serviceState: ServiceState { readiness.state }
    public func setServiceState(_ newState: ServiceState) { readiness.set(newState) }

    /// Why a request arriving now is refused before it is read (503 while draining), or nil.
    /// The transport asks once, when a request starts, so requests already admitted finish (R-S5).
    public func admissionError() -> CartographError? {
        serviceState == .draining ? Readiness.shuttingDown : nil
    }

    /// Answers one request. Never throws: every failure becomes a problem response.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        finish(request) { (requestID, labels) throws(CartographError) -> HTTPResponse in
            try self.route(request, requestID: requestID, labels: &labels)
        }
    }

    /// Parks a response that waits for its store to change (`response.pending`): `resolve` is called once,
    /// on another thread, with the answer, as `respond` would have given it.
    public func park(_ response: HTTPResponse, for request: HTTPRequest, resolve: @escaping @Sendable (HTTPResponse) -> Void) {
        guard let pending = response.pending else { return resolve(response) }
        changeWaiters.park(pending, admission: { [self] in refusal(of: request, access: pending.access, tenant: pending.labels.tenant) }) {
            [self] answer in
            var answer = answer.compressed(accepting: request.headers["Accept-Encoding"])
            answer.headers.append(("X-Request-Id", pending.requestID))
            cors.decorate(&answer, for: request)
            record(request: request, response: answer, labels: pending.labels,
                   requestID: pending.requestID, duration: ContinuousClock.now - pending.started)
            resolve(answer)
        }
    }

    /// The problem a parked request is answered with instead once it would no longer be let in, as it
    /// would be answered if it came now: 404 when its tenant was deleted, 401 or 403 when its token no
    /// longer opens the route (a revoked key); nil while it may have its answer.
    private func refusal(of request: HTTPRequest, access: Access, tenant: String?) -> HTTPResponse? {
        do throws(CartographError) {
            if let tenant, control.tenant(tenant) == nil { throw ControlPlaneRoutes.unknownTenant(tenant) }
            _ = try authenticate(request, access: access, tenant: tenant)
            return nil
        } catch {
            return .problem(error, instance: request.path)
        }
    }

    /// Starts delivering webhooks (`cartograph serve`).
    public func startWebhookDeliveries() { webhooks.start() }

    /// Stops delivering webhooks; a delivery under way is ended, and sent again at the next start.
    public func stopWebhookDeliveries() { webhooks.stop() }

    /// Answers every parked long poll now (the server is draining).
    public func answerParkedRequests() { changeWaiters.answerAll() }

    /// Answers a request that the transport refused before it was complete (e.g. a body over the limit).
    public func reject(_ request: HTTPRequest, with error: CartographError) -> HTTPResponse {
        finish(request) { (_, _) throws(CartographError) -> HTTPResponse in throw error }
    }

    /// What the request log and metrics say about a request.
    struct Labels: Sendable {
        var route = "unmatched"
        /// The tenant the path names.
        var tenant: String?
        /// The tenant, once the request's token was accepted for it: only such requests count per
        /// tenant in the metrics, so that requests naming made-up tenants add no series.
        var authenticatedTenant: String?
    }

    /// Runs `body`, turns its error into a problem, adds the request id, records metrics and the log line.
    private func finish(
        _ request: HTTPRequest, _ body: (String, inout Labels) throws(CartographError) -> HTTPResponse
    ) -> HTTPResponse {
        let started = ContinuousClock.now
        let requestID = Self.requestID(from: request.headers)
        var labels = Labels()
        var response: HTTPResponse
        let deadline = RequestDeadline(limit: .seconds(configuration.requestTimeLimitSeconds), from: request.arrival)
        let outcome = RequestDeadline.$current.withValue(deadline) { () -> Result<HTTPResponse, CartographError> in
            do throws(CartographError) { return .success(try body(requestID, &labels)) } catch {
                // Work the deadline stopped inside SQLite surfaces as a store error (an interrupted
                // statement): past the deadline, the deadline is its cause.
                return .failure(error.code == .internalError && RequestDeadline.hasPassed ? deadline.error : error)
            }
        }
        switch outcome {
        case .success(var answer):
            if answer.pending != nil {
                // Logged and counted when it is answered (`park`).
                answer.pending?.requestID = requestID
                answer.pending?.started = started
                answer.pending?.labels = labels
                return answer
            }
            response = answer
        case .failure(let error):
            response = problems.response(for: error, to: request, requestID: requestID, route: labels.route)
        }
        response = response.compressed(accepting: request.headers["Accept-Encoding"])
        response.headers.append(("X-Request-Id", requestID))
        cors.decorate(&response, for: request)
        record(request: request, response: response, labels: labels, requestID: requestID, duration: ContinuousClock.now - started)
        return response
    }

    private func route(_ request: HTTPRequest, requestID: String, labels: inout Labels) throws(CartographError) -> HTTPResponse {
        switch try router.match(method: request.method, path: request.path) {
        case .notFound:
            throw CartographError(.notFound, "No route for \(request.method) \(request.path).").quotingRequestValues()
        case .methodNotAllowed(let allowed, let template):
            labels.route = template
            // R-S8: OPTIONS describes the path (and answers a browser's preflight) before any token is asked for.
            if request.method == "OPTIONS" { return try cors.options(request, methods: allowed) }
            throw CartographError(.methodNotAllowed, "\(request.method) is not allowed here; use \(allowed.joined(separator: ", ")).",
                                  allowedMethods: allowed)
        case .matched(let route, let parameters):
            labels.route = route.template
            labels.tenant = parameters["tenant"]
            if route.body != .none { metrics.requestBody(route: route.template, bytes: request.body.count) }
            let principal = try authenticate(request, access: route.access, tenant: parameters["tenant"])
            labels.authenticatedTenant = principal == .anonymous ? nil : parameters["tenant"]
            // R-S2: every request a tenant key authenticates takes from its tenant's bucket, before any
            // body is parsed or store touched. The admin token is exempt.
            if case .key(let key) = principal, tenantLimits.rateLimiter.isEnabled,
               let refusal = tenantLimits.rateLimiter.admit(tenant: key.tenantID, policy: { tenantLimits.effective(tenant: key.tenantID).rate }) {
                return rateLimited(refusal, tenant: key.tenantID, request: request)
            }
            if !route.takesMappingQuery {
                let unknown = route.unknownQueryParameters(in: request)
                guard unknown.isEmpty else { throw route.refusal(ofQueryParameters: unknown, method: request.method) }
            }
            switch route.body {
            case .none: break
            case .json: try Self.requireContentType(request, accepting: ["application/json"])
            case .payload: try Self.requireContentType(request, accepting: ["application/json", "application/x-ndjson"])
            case .modelDocument: try Self.requireContentType(request, accepting: ["application/json", "application/xml", "text/xml"])
            }
            let context = RequestContext(request: request, parameters: parameters, principal: principal, requestID: requestID, route: route)
            let store = parameters["tenant"].flatMap { tenant in parameters["model"].map { (tenant: tenant, model: $0) } }
            if let store, let refusal = storeFaults.refusal(tenant: store.tenant, model: store.model) { throw refusal }
            let writes = route.access != .tenant(.read) && request.method != "GET"
            do {
                var response = try route.handler(context)
                response.pending?.access = route.access
                // A route that may write a model's store (its scope is above read) wakes the long polls of its change feed.
                if writes, response.status < 300, let store {
                    changeWaiters.notify("\(store.tenant)/\(store.model)")
                    webhooks.storeChanged(tenant: store.tenant, model: store.model)
                    storeFaults.cleared(tenant: store.tenant, model: store.model)
                }
                return response
            } catch let error as CartographError {
                if error.code.isStorageFault, let store { storeFaults.note(error, tenant: store.tenant, model: store.model, requestID: requestID) }
                throw error
            } catch {
                // A handler's error of another type is a bug: logged with it as the cause (`finish`).
                throw CartographError(.internalError, "The handler of \(request.method) \(route.template) failed.", underlying: error)
            }
        }
    }

    // MARK: Authentication

    /// Checks the bearer token against the route's access rule (docs/api.md#authentication): 401 for a missing or
    /// unknown token, 403 for a valid token of another tenant or too small a scope.
    func authenticate(_ request: HTTPRequest, access: Access, tenant: String?) throws(CartographError) -> Principal {
        if access == .anyone {
            if request.headers["authorization"] != nil, let principal = try? principal(for: request) { return principal }
            return .anonymous
        }
        let principal = try principal(for: request)
        switch (access, principal) {
        case (_, .admin), (.anyToken, .key):
            return principal
        case (.admin, .key):
            throw CartographError(.forbidden, "This route needs the admin token; a tenant key cannot use it.")
        case (.tenant(let needed), .key(let key)):
            guard key.tenantID == tenant else {
                throw CartographError(.forbidden, "This key belongs to another tenant.")
            }
            guard key.scope >= needed else {
                throw CartographError(.forbidden, "This key has scope '\(key.scope.rawValue)'; the route needs '\(needed.rawValue)'.")
            }
            return principal
        default:
            throw CartographError(.unauthorized, "Send 'Authorization: Bearer <token>'.")
        }
    }

    private func principal(for request: HTTPRequest) throws(CartographError) -> Principal {
        guard let header = request.headers["authorization"] else {
            throw CartographError(.unauthorized, "Missing bearer token: send 'Authorization: Bearer <token>'.")
        }
        guard let token = Self.bearerToken(header) else {
            throw CartographError(.unauthorized, "The Authorization header must be 'Bearer <token>'.")
        }
        // A key first: tenant requests outnumber admin ones and then need no second SHA-256. Keys are
        // random, so a token is both only if an operator copied a key into the admin token.
        if let presented = PresentedAPIKey(token), let key = control.authenticate(presented) { return .key(key) }
        if SecretHash.constantTimeMatches(Array(token.utf8), secret: adminToken) { return .admin }
        throw CartographError(.unauthorized, "The bearer token is not valid (unknown, revoked or malformed).")
    }

    /// The token of `Bearer <token>` (the scheme in any case, spaces and tabs around the token dropped), or nil.
    /// Read on the bytes: splitting by Character, lowercasing and Foundation's `trimmingCharacters` (through
    /// NSString and UTF-16) were each a noticeable part of an authenticated get's CPU.
    static func bearerToken(_ header: String) -> String? {
        let bytes = header.utf8
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        guard let schemeStart = bytes.firstIndex(where: { $0 != 0x20 }),
              let schemeEnd = bytes[schemeStart...].firstIndex(of: 0x20),
              // Letters only: a byte ORed with 0x20 is a lowercase letter only if it was that letter in either case.
              bytes[schemeStart..<schemeEnd].elementsEqual("bearer".utf8, by: { $0 | 0x20 == $1 }),
              let tokenStart = bytes[schemeEnd...].firstIndex(where: { !isBlank($0) }),
              let tokenLast = bytes[tokenStart...].lastIndex(where: { !isBlank($0) }) else { return nil }
        return String(Substring(bytes[tokenStart...tokenLast]))
    }

    // MARK: Helpers

    /// The request's media type, lowercased, without parameters ("" when absent).
    static func mediaType(of request: HTTPRequest) -> String {
        request.headers["content-type"]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
    }

    /// 415 unless the body's media type is one of `accepted` (a `+json` suffix counts as JSON).
    static func requireContentType(_ request: HTTPRequest, accepting accepted: [String]) throws(CartographError) {
        let mediaType = mediaType(of: request)
        let isJSONSuffix = mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json") && accepted.contains("application/json")
        guard accepted.contains(mediaType) || isJSONSuffix else {
            let sent = mediaType.isEmpty ? "no Content-Type" : "'\(mediaType)'"
            throw CartographError(.unsupportedMediaType,
                                  "This route takes 'Content-Type: \(accepted.joined(separator: "' or '"))'; the request sent \(sent).")
        }
    }

    /// The client's `X-Request-Id` when it is short printable ASCII, else a fresh one: a random
    /// per-process prefix and a counter (unique without a getrandom syscall per request).
    static func requestID(from headers: HTTPHeaders) -> String {
        if let sent = headers["x-request-id"], (1...128).contains(sent.utf8.count),
           sent.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) {
            return sent
        }
        return requestIDPrefix + String(requestCounter.add(1, ordering: .relaxed).newValue, radix: 16)
    }

    private static let requestIDPrefix = String(UInt32.random(in: .min ... .max), radix: 16) + "-"
    private static let requestCounter = Atomic<UInt64>(0)

    /// Counts the request (and its problem, if it answered one) and writes its log line: a problem's
    /// type, and its detail unless that quotes what the request sent (R-S10).
    private func record(request: HTTPRequest, response: HTTPResponse, labels: Labels, requestID: String, duration: Duration) {
        let nanoseconds = duration.nanoseconds
        metrics.request(method: request.method, route: labels.route, status: response.status, tenant: labels.authenticatedTenant,
                        nanoseconds: nanoseconds)
        if let problem = response.problem { metrics.problem(type: problem.type, tenant: labels.authenticatedTenant) }
        guard logger.logLevel <= .info else { return }
        var metadata: Logger.Metadata = [
            "request.id": "\(requestID)", "http.method": "\(request.method)", "http.route": "\(labels.route)",
            "http.status": "\(response.status)", "duration_ms": "\(Double(nanoseconds / 1000) / 1000)",
        ]
        if let tenant = labels.tenant { metadata["tenant.id"] = "\(tenant)" }
        if let problem = response.problem {
            metadata["problem.type"] = "\(problem.type)"
            if let detail = problem.loggableDetail { metadata["problem.detail"] = "\(detail)" }
        }
        logger.info("request", metadata: metadata)
    }
}
