// Delivers the tenants' webhooks (R-W1…R-W4, docs/webhooks.md). One scheduler thread wakes after each
// write to a model (the application tells it where it tells the long polls' `ChangeWaiters`) and at
// least once a second, and hands each enabled webhook that has something to do — a model it follows
// was written since it last looked, a retry is due, a backlog remains, or it has not looked yet in
// this process — and no delivery under way to a delivery worker, at most `webhookConcurrency` at once.
// Every `fullSweepInterval` each webhook looks anyway (a write this process was not told of); in
// between, a webhook whose models are quiet opens no store, so idle stores still close. A worker takes the webhook's models one after another;
// for each it reads the feed after the stored position through the read path (never under the write
// lock), POSTs up to `webhookBatchSize` entries signed, and moves the stored position only once the
// receiver answered 2xx: at least once, in feed order per model, and a restarted server goes on from the
// stored position. A failure retries after a delay doubling from `webhookRetryBase`, and
// `webhookMaxFailures` of them in a row disable the webhook until it is PUT again.
import Foundation
import Synchronization
import Logging
import Crypto
import CartographCore
import CartographStore

final class WebhookDispatcher: Sendable {
    private let control: ControlStore
    private let stores: StoreRegistry
    private let policy: WebhookAddressPolicy
    private let maxFailures: Int
    private let retryBase: Duration
    private let concurrency: Int
    private let batchSize: Int
    private let timeout: Duration
    private let logger: Logger
    private let metrics: ServerMetrics
    private let clock: WallClock
    /// How long the scheduler sleeps without a write (retries that come due are seen by then at the latest).
    static let sweepInterval: Duration = .seconds(1)
    /// How often every enabled webhook looks at its feeds, written to or not.
    static let fullSweepInterval: Duration = .seconds(60)
    /// Batches one worker delivers of one model before it lets the scheduler hand out work again.
    static let batchesPerTurn = 10
    /// A retry waits at most this many times `retryBase`.
    static let retryCapFactor = 256

    private struct Schedule {
        var running = false
        var stopping = false
        /// Webhooks (`tenant/name`) with a delivery under way.
        var inFlight: Set<String> = []
        /// When a failed webhook may be tried again.
        var retryAt: [String: ContinuousClock.Instant] = [:]
        /// A wake is signalled and not yet taken: further writes need not signal again.
        var wakePending = false
        /// Writes to each model (`tenant/model`) this process was told of, counted.
        var generations: [String: UInt64] = [:]
        /// The generation of each of its models a webhook looked at last; none yet: it looks.
        var seen: [String: [String: UInt64]] = [:]
        /// Webhooks whose last turn ended with batches left.
        var backlog: Set<String> = []
        var lastFullSweep = ContinuousClock.now
        /// The enabled webhooks as last listed; nil: list them again. Kept so that a write's wake does not
        /// query the control store (whose lock every request's authentication takes); emptied when one is
        /// put or deleted, when a delivery finds one gone or disabled, and at each full sweep.
        var listed: [Webhook]?
    }

    private let schedule = Mutex(Schedule())
    private let wake = DispatchSemaphore(value: 0)
    private let workers = DispatchQueue(label: "cartograph.webhooks", attributes: .concurrent)
    private let sender: Mutex<WebhookSender?> = Mutex(nil)

    init(configuration: ServerConfiguration, control: ControlStore, stores: StoreRegistry, logger: Logger, metrics: ServerMetrics, clock: WallClock) {
        self.control = control
        self.stores = stores
        self.policy = WebhookAddressPolicy(allowedHosts: configuration.webhookAllowedHosts)
        self.maxFailures = max(1, configuration.webhookMaxFailures)
        self.retryBase = configuration.webhookRetryBase
        self.concurrency = max(1, configuration.webhookConcurrency)
        self.batchSize = max(1, configuration.webhookBatchSize)
        self.timeout = .seconds(max(1, configuration.webhookTimeoutSeconds))
        self.logger = logger
        self.metrics = metrics
        self.clock = clock
    }

    /// Starts delivering (`cartograph serve`; in-process tests never start it).
    func start() {
        let started = schedule.withLock { schedule -> Bool in
            guard !schedule.running else { return false }
            schedule.running = true
            return true
        }
        guard started else { return }
        sender.withLock { $0 = WebhookSender(timeout: timeout) }
        let thread = Thread { [self] in runScheduler() }
        thread.name = "cartograph-webhooks"
        thread.start()
    }

    /// Stops handing out deliveries, ends those under way (they are not recorded: they are sent again at the
    /// next start) and waits up to `timeout` for their workers.
    func stop(timeout: Duration = .seconds(5)) {
        schedule.withLock { $0.stopping = true; $0.running = false }
        wake.signal()
        sender.withLock { $0?.close() }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, !schedule.withLock({ $0.inFlight.isEmpty }) {
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// A write to a model committed: its followers may have entries to deliver.
    func storeChanged(tenant: String, model: String) {
        schedule.withLock { $0.generations["\(tenant)/\(model)", default: 0] &+= 1 }
        signal()
    }

    /// A webhook was put (enabled again, perhaps with another URL): it is tried at once.
    func webhookChanged(tenant: String, name: String) {
        schedule.withLock { schedule in
            schedule.retryAt["\(tenant)/\(name)"] = nil
            schedule.seen["\(tenant)/\(name)"] = nil
            schedule.listed = nil
        }
        signal()
    }

    private func signal() {
        let needed = schedule.withLock { schedule -> Bool in
            guard schedule.running, !schedule.wakePending else { return false }
            schedule.wakePending = true
            return true
        }
        if needed { wake.signal() }
    }

    // MARK: Scheduling

    private func runScheduler() {
        while true {
            let stopping = schedule.withLock { schedule -> Bool in
                schedule.wakePending = false
                return schedule.stopping
            }
            if stopping { return }
            handOut()
            // Sleep until a write, the next retry or the sweep, whichever comes first.
            let now = ContinuousClock.now
            let nextRetry = schedule.withLock { $0.retryAt.values.min() }
            var sleep = Self.sweepInterval
            if let nextRetry { sleep = max(.milliseconds(1), min(sleep, nextRetry - now)) }
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(sleep.nanoseconds)))
        }
    }

    /// Hands each webhook that is due to a worker, within the concurrency limit.
    private func handOut() {
        let now = ContinuousClock.now
        let (fullSweep, listed) = schedule.withLock { schedule -> (Bool, [Webhook]?) in
            guard now - schedule.lastFullSweep >= Self.fullSweepInterval else { return (false, schedule.listed) }
            schedule.lastFullSweep = now
            return (true, nil)
        }
        let webhooks: [Webhook]
        if let listed {
            webhooks = listed
        } else {
            do { webhooks = try control.webhooks().filter(\.enabled) } catch {
                logger.warning("webhooks: cannot list them", metadata: ["error": "\(error.detail)"])
                return
            }
            let keys = Set(webhooks.map { "\($0.tenantID)/\($0.name)" })
            schedule.withLock { schedule in
                schedule.listed = webhooks
                // Forget webhooks deleted or disabled meanwhile: a retry of one would wake the scheduler forever.
                schedule.retryAt = schedule.retryAt.filter { keys.contains($0.key) }
                schedule.backlog.formIntersection(keys)
                schedule.seen = schedule.seen.filter { keys.contains($0.key) }
            }
        }
        for webhook in webhooks {
            let key = "\(webhook.tenantID)/\(webhook.name)"
            let taken = schedule.withLock { schedule -> Bool in
                guard !schedule.stopping, !schedule.inFlight.contains(key), schedule.inFlight.count < concurrency else { return false }
                let current = webhook.subscriptions.map { ($0.model, schedule.generations["\(webhook.tenantID)/\($0.model)", default: 0]) }
                if let retryAt = schedule.retryAt[key] {
                    guard retryAt <= now else { return false }
                } else {
                    let seen = schedule.seen[key]
                    let written = seen.map { seen in current.contains { seen[$0.0] != $0.1 } } ?? true
                    guard fullSweep || written || schedule.backlog.contains(key) else { return false }
                }
                schedule.retryAt[key] = nil
                schedule.backlog.remove(key)
                // Taken before delivering: a write during the delivery makes it look again.
                schedule.seen[key] = Dictionary(current, uniquingKeysWith: { $1 })
                schedule.inFlight.insert(key)
                return true
            }
            guard taken else { continue }
            workers.async { [self] in
                let outcome = deliver(webhook)
                schedule.withLock { schedule in
                    schedule.inFlight.remove(key)
                    switch outcome {
                    case .failed(let failures): schedule.retryAt[key] = .now + retryDelay(afterFailures: failures)
                    case .more: schedule.backlog.insert(key)
                    case .stopped: schedule.listed = nil
                    case .caughtUp: break
                    }
                }
                // More may be waiting (a turn's batches ran out, or writes came while it worked), and a slot is free.
                signal()
            }
        }
    }

    /// The delay before the next attempt after `failures` failed deliveries in a row: the base, doubled
    /// for each failure after the first, at most `retryCapFactor` times the base.
    func retryDelay(afterFailures failures: Int) -> Duration {
        retryBase * min(Self.retryCapFactor, 1 << min(max(0, failures - 1), 30))
    }

    // MARK: Delivering

    private enum Outcome {
        case caughtUp
        /// Batches remain (the turn ended).
        case more
        /// The last attempt failed: the webhook's failures in a row.
        case failed(Int)
        /// The webhook was deleted or disabled, or the server stops.
        case stopped
    }

    private func deliver(_ webhook: Webhook) -> Outcome {
        var result = Outcome.caughtUp
        for subscription in webhook.subscriptions {
            switch deliver(webhook, subscription) {
            case .caughtUp: continue
            case .more: result = .more
            case .failed(let failures): return .failed(failures)
            case .stopped: return .stopped
            }
        }
        return result
    }

    /// Delivers up to `batchesPerTurn` batches of one model's feed.
    private func deliver(_ webhook: Webhook, _ subscription: WebhookSubscription) -> Outcome {
        let tenant = webhook.tenantID, name = webhook.name
        var metadata: Logger.Metadata = ["tenant.id": "\(tenant)", "webhook": "\(name)", "model": "\(subscription.model)"]
        for _ in 0..<Self.batchesPerTurn {
            if schedule.withLock({ $0.stopping }) { return .stopped }
            let store: ModelStore
            let stored: WebhookPosition?
            do {
                // A model deleted since the webhook was put has nothing to deliver.
                guard let found = try stores.store(tenant: tenant, model: subscription.model), found.hasModel else { return .caughtUp }
                store = found
                stored = try control.webhookPositions(tenantID: tenant, name: name).first { $0.model == subscription.model }
            } catch {
                logger.warning("webhooks: cannot open the model's store", metadata: metadata.merging(["error": "\(error.detail)"]) { $1 })
                return .caughtUp
            }
            // R-D7: a position in another epoch (the model registered again, the store restored) starts again from 0.
            let since = stored?.epoch == store.epoch ? stored?.seq ?? 0 : 0
            let page: ChangeFeedPage
            do {
                page = try store.read { (reader) throws(CartographError) in try reader.changes(since: since, limit: batchSize) }
            } catch where error.code == .badRequest {
                // Beyond the head: only a feed that lost entries without a new epoch; start it again.
                logger.warning("webhooks: the stored position is beyond the feed's head; starting the model again from 0", metadata: metadata)
                try? control.setWebhookPosition(tenantID: tenant, name: name, WebhookPosition(model: subscription.model, epoch: store.epoch, seq: 0))
                continue
            } catch {
                logger.warning("webhooks: cannot read the change feed", metadata: metadata.merging(["error": "\(error.detail)"]) { $1 })
                return .caughtUp
            }
            let reached = WebhookPosition(model: subscription.model, epoch: store.epoch, seq: page.next)
            if page.entries.isEmpty {
                if stored != reached { try? control.setWebhookPosition(tenantID: tenant, name: name, reached) }
                return .caughtUp
            }
            let wanted = wantedEntities(subscription, model: store.model)
            let entries = wanted.map { wanted in page.entries.filter { wanted.contains($0.entity) } } ?? page.entries
            guard !entries.isEmpty else {
                // Nothing this webhook follows: skipped without a request.
                try? control.setWebhookPosition(tenantID: tenant, name: name, reached)
                continue
            }
            let body = WebhookDeliveryDocument.bytes(tenant: tenant, webhook: name, model: subscription.model, epoch: store.epoch,
                                                     since: since, entries: entries, next: page.next)
            let messageID = Self.messageID(tenant: tenant, webhook: name, model: subscription.model, epoch: store.epoch, since: since, next: page.next)
            let started = ContinuousClock.now
            let sent = send(webhook, body: body, messageID: messageID)
            if schedule.withLock({ $0.stopping }) { return .stopped }
            let elapsed = ContinuousClock.now - started
            let delivered = sent.error == nil && sent.status.map { (200..<300).contains($0) } == true
            let error: String? = delivered ? nil : sent.error ?? sent.status.map { status in
                (300..<400).contains(status) ? "answered \(status): redirects are not followed" : "answered \(status)"
            } ?? "no answer"
            let delivery = WebhookDelivery(at: clock.now(), model: subscription.model, messageID: messageID, entries: entries.count, since: since,
                                           next: page.next, status: sent.status, error: error,
                                           durationMilliseconds: Double(elapsed.nanoseconds) / 1e6)
            metrics.webhookDelivery(outcome: delivered ? "delivered" : "failed")
            let now: Webhook?
            do {
                now = try control.recordWebhookDelivery(tenantID: tenant, name: name, delivery, reached: delivered ? reached : nil, maxFailures: maxFailures)
            } catch {
                logger.error("webhooks: cannot record a delivery", metadata: metadata.merging(["error": "\(error.detail)"]) { $1 })
                return .failed(1)
            }
            guard let now else { return .stopped }
            metadata["webhook.id"] = "\(messageID)"
            guard delivered else {
                metadata["error"] = "\(error ?? "")"
                metadata["failures"] = "\(now.consecutiveFailures)"
                if now.enabled {
                    logger.warning("webhook delivery failed", metadata: metadata)
                    return .failed(now.consecutiveFailures)
                }
                logger.warning("webhook disabled after failed deliveries", metadata: metadata)
                return .stopped
            }
            if !now.enabled { return .stopped }
        }
        return .more
    }

    /// The entities whose entries the subscription delivers, sub-entities included (R-M3); nil for all.
    private func wantedEntities(_ subscription: WebhookSubscription, model: Model?) -> Set<String>? {
        guard !subscription.entities.isEmpty else { return nil }
        return Set(subscription.entities).union(subscription.entities.flatMap { model?.entityAndSubentities(of: $0) ?? [] })
    }

    /// Checks the URL against the policy again (an operator may have changed it; a name may now resolve
    /// elsewhere), signs and POSTs.
    private func send(_ webhook: Webhook, body: [UInt8], messageID: String) -> WebhookSendResult {
        let url: URL, host: String
        switch policy.check(webhook.url) {
        case .allowed(let allowedURL, let allowedHost): (url, host) = (allowedURL, allowedHost)
        case .refused(let why): return WebhookSendResult(status: nil, error: "refused: \(why)")
        }
        if let refusal = policy.refusalAfterResolving(host, port: url.port) {
            return WebhookSendResult(status: nil, error: "refused: \(refusal)")
        }
        guard let signer = WebhookSigner(secret: webhook.secret) else { return WebhookSendResult(status: nil, error: "the webhook's secret is not valid") }
        guard let sender = sender.withLock({ $0 }) else { return WebhookSendResult(status: nil, error: "the server is stopping") }
        let timestamp = Int64(clock.now().timeIntervalSince1970)
        return sender.post(url, body: body, headers: signer.headers(messageID: messageID, timestamp: timestamp, body: body))
    }

    /// The `webhook-id` of a batch: the same for every attempt at the same range of the same feed, so a
    /// receiver can recognize a batch it was sent before (its entries may be newer: the feed is compacted).
    static func messageID(tenant: String, webhook: String, model: String, epoch: String, since: Int64, next: Int64) -> String {
        let digest = SHA256.hash(data: Array("\(tenant)/\(webhook)/\(model)/\(epoch)/\(since)/\(next)".utf8))
        return "msg_" + HexText.lowercase(digest.prefix(16))
    }
}
