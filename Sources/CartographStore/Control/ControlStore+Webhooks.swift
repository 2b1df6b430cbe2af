// A tenant's webhooks (R-W1…R-W4, docs/webhooks.md): their definitions, each one's position in the
// change feed of every model it follows, and its last deliveries, kept in the control database so that
// a restarted server resumes where the last one stopped. The delivery itself is CartographHTTP's.
public import Foundation
import Synchronization
public import CartographCore

/// What a webhook follows of one model: its feed's entries of `entities` (empty: every entity).
public struct WebhookSubscription: Sendable, Equatable {
    public var model: String
    public var entities: [String]

    public init(model: String, entities: [String]) {
        self.model = model
        self.entities = entities
    }
}

/// A webhook as registered, with its delivery state.
public struct Webhook: Sendable, Equatable {
    public let tenantID: String
    public let name: String
    public var url: String
    public var subscriptions: [WebhookSubscription]
    /// `whsec_<base64>`: the signing secret, which only the delivery reads (never answered).
    public var secret: String
    /// False once `consecutiveFailures` reached the server's limit; a PUT enables it again.
    public var enabled: Bool
    public var consecutiveFailures: Int
    /// Why it was disabled, while it is.
    public var disabledReason: String?
    public let createdAt: Date
    public var updatedAt: Date
}

/// Where a webhook is in one model's feed: the entries after `seq` of the feed whose epoch is `epoch` are
/// still to deliver (R-D7: in another epoch it starts again from 0).
public struct WebhookPosition: Sendable, Equatable {
    public let model: String
    public let epoch: String
    public let seq: Int64

    public init(model: String, epoch: String, seq: Int64) {
        self.model = model
        self.epoch = epoch
        self.seq = seq
    }
}

/// One attempt to deliver a batch, as the delivery log shows it.
public struct WebhookDelivery: Sendable, Equatable {
    public let at: Date
    public let model: String
    /// The message id sent as `webhook-id`.
    public let messageID: String
    /// The entries sent, and the feed range they came from (`since` exclusive, `next` inclusive).
    public let entries: Int
    public let since: Int64
    public let next: Int64
    /// The receiver's status when it answered.
    public let status: Int?
    /// Why the attempt failed (nil when it was delivered).
    public let error: String?
    public let durationMilliseconds: Double

    public var delivered: Bool { error == nil }

    public init(at: Date, model: String, messageID: String, entries: Int, since: Int64, next: Int64, status: Int?, error: String?,
                durationMilliseconds: Double) {
        self.at = at
        self.model = model
        self.messageID = messageID
        self.entries = entries
        self.since = since
        self.next = next
        self.status = status
        self.error = error
        self.durationMilliseconds = durationMilliseconds
    }
}

extension ControlStore {
    /// Attempts each webhook's log keeps (the oldest go first).
    public static let webhookLogLength = 50

    /// In tables of their own, created on open (no migration: an older control database gains them). Every
    /// row goes with its tenant and its webhook (foreign keys are on).
    static let webhooksSchema = """
        CREATE TABLE IF NOT EXISTS webhooks (
            tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            url TEXT NOT NULL,
            subscriptions TEXT NOT NULL,
            secret TEXT NOT NULL,
            enabled INTEGER NOT NULL,
            consecutive_failures INTEGER NOT NULL,
            disabled_reason TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (tenant_id, name)
        );
        CREATE TABLE IF NOT EXISTS webhook_positions (
            tenant_id TEXT NOT NULL,
            name TEXT NOT NULL,
            model TEXT NOT NULL,
            epoch TEXT NOT NULL,
            seq INTEGER NOT NULL,
            PRIMARY KEY (tenant_id, name, model),
            FOREIGN KEY (tenant_id, name) REFERENCES webhooks(tenant_id, name) ON DELETE CASCADE
        );
        CREATE TABLE IF NOT EXISTS webhook_deliveries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant_id TEXT NOT NULL,
            name TEXT NOT NULL,
            at REAL NOT NULL,
            model TEXT NOT NULL,
            message_id TEXT NOT NULL,
            entries INTEGER NOT NULL,
            since INTEGER NOT NULL,
            next INTEGER NOT NULL,
            status INTEGER,
            error TEXT,
            duration_ms REAL NOT NULL,
            FOREIGN KEY (tenant_id, name) REFERENCES webhooks(tenant_id, name) ON DELETE CASCADE
        );
        CREATE INDEX IF NOT EXISTS webhook_deliveries_by_webhook ON webhook_deliveries (tenant_id, name, id);
        """

    private static let webhookColumns =
        "tenant_id, name, url, subscriptions, secret, enabled, consecutive_failures, disabled_reason, created_at, updated_at"

    /// Registers or replaces a webhook and enables it (its failures forgotten); `secret` nil keeps the one it
    /// has. Positions are kept: a replaced webhook goes on from where it was. Answers the webhook and whether
    /// it is new. 404 for an unknown tenant, 422 for a new webhook without a secret.
    public func putWebhook(tenantID: String, name: String, url: String, subscriptions: [WebhookSubscription],
                           secret: String?) throws(CartographError) -> (webhook: Webhook, created: Bool) {
        let now = clock.now()
        return try state.withLock { (state) throws(CartographError) -> (webhook: Webhook, created: Bool) in
            guard state.tenants[tenantID] != nil else { throw CartographError(.notFound, "No tenant named '\(tenantID)'.") }
            let existing: Webhook?
            do { existing = try Self.webhook(tenantID: tenantID, name: name, state.connection) } catch {
                throw CartographError.store(error, "Cannot read webhook '\(name)'")
            }
            guard let secret = secret ?? existing?.secret else {
                throw CartographError(.unprocessable, "A new webhook needs a secret.",
                                      errors: [.init(pointer: "/secret", message: "required: a secret such as \"whsec_…\" (24 to 64 random bytes in base64)")])
            }
            let webhook = Webhook(tenantID: tenantID, name: name, url: url, subscriptions: subscriptions, secret: secret, enabled: true,
                                  consecutiveFailures: 0, disabledReason: nil, createdAt: existing?.createdAt ?? now, updatedAt: now)
            do {
                // An upsert, not INSERT OR REPLACE: replacing the row would delete it first, and its positions and
                // log with it (ON DELETE CASCADE).
                try state.connection.run(
                    """
                    INSERT INTO webhooks (\(Self.webhookColumns)) VALUES (?, ?, ?, ?, ?, 1, 0, NULL, ?, ?)
                    ON CONFLICT (tenant_id, name) DO UPDATE SET url = excluded.url, subscriptions = excluded.subscriptions,
                        secret = excluded.secret, enabled = 1, consecutive_failures = 0, disabled_reason = NULL, updated_at = excluded.updated_at
                    """,
                    [.text(tenantID), .text(name), .text(url), .text(Self.encode(subscriptions)), .text(secret),
                     .real(webhook.createdAt.timeIntervalSince1970), .real(now.timeIntervalSince1970)])
            } catch {
                throw CartographError.store(error, "Cannot store webhook '\(name)' of tenant '\(tenantID)'")
            }
            return (webhook, existing == nil)
        }
    }

    /// One webhook, or nil.
    public func webhook(tenantID: String, name: String) throws(CartographError) -> Webhook? {
        try state.withLock { (state) throws(CartographError) -> Webhook? in
            do { return try Self.webhook(tenantID: tenantID, name: name, state.connection) } catch {
                throw CartographError.store(error, "Cannot read webhook '\(name)'")
            }
        }
    }

    /// A tenant's webhooks by name, or every tenant's (`tenantID` nil).
    public func webhooks(tenantID: String? = nil) throws(CartographError) -> [Webhook] {
        try state.withLock { (state) throws(CartographError) -> [Webhook] in
            do {
                let rows = if let tenantID {
                    try state.connection.rows("SELECT \(Self.webhookColumns) FROM webhooks WHERE tenant_id = ? ORDER BY name", [.text(tenantID)])
                } else {
                    try state.connection.rows("SELECT \(Self.webhookColumns) FROM webhooks ORDER BY tenant_id, name")
                }
                return rows.map(Self.webhook(row:))
            } catch {
                throw CartographError.store(error, "Cannot list webhooks")
            }
        }
    }

    /// Deletes a webhook with its positions and log. 404 if there is none.
    public func deleteWebhook(tenantID: String, name: String) throws(CartographError) {
        try state.withLock { (state) throws(CartographError) in
            let existing: Webhook?
            do { existing = try Self.webhook(tenantID: tenantID, name: name, state.connection) } catch {
                throw CartographError.store(error, "Cannot read webhook '\(name)'")
            }
            guard existing != nil else { throw CartographError(.notFound, "Tenant '\(tenantID)' has no webhook named '\(name)'.") }
            do {
                try state.connection.run("DELETE FROM webhooks WHERE tenant_id = ? AND name = ?", [.text(tenantID), .text(name)])
            } catch {
                throw CartographError.store(error, "Cannot delete webhook '\(name)'")
            }
        }
    }

    /// A webhook's positions, by model.
    public func webhookPositions(tenantID: String, name: String) throws(CartographError) -> [WebhookPosition] {
        try state.withLock { (state) throws(CartographError) -> [WebhookPosition] in
            do {
                return try state.connection.rows("SELECT model, epoch, seq FROM webhook_positions WHERE tenant_id = ? AND name = ? ORDER BY model",
                                                 [.text(tenantID), .text(name)])
                    .map { WebhookPosition(model: $0[0].textValue ?? "", epoch: $0[1].textValue ?? "", seq: $0[2].integerValue ?? 0) }
            } catch {
                throw CartographError.store(error, "Cannot read the positions of webhook '\(name)'")
            }
        }
    }

    /// Moves a webhook's position without a delivery (entries of other entities skipped, a new epoch), unless
    /// the webhook was deleted meanwhile.
    public func setWebhookPosition(tenantID: String, name: String, _ position: WebhookPosition) throws(CartographError) {
        try state.withLock { (state) throws(CartographError) in
            do {
                try Self.savePosition(tenantID: tenantID, name: name, position, state.connection)
            } catch {
                throw CartographError.store(error, "Cannot store the position of webhook '\(name)'")
            }
        }
    }

    /// Records an attempt in one transaction: its log entry (the log trimmed to `webhookLogLength`), the
    /// position it reached when delivered, and the run of failures, which `maxFailures` of them in a row end by
    /// disabling the webhook. Answers the webhook as it is now, nil if it was deleted meanwhile.
    public func recordWebhookDelivery(tenantID: String, name: String, _ delivery: WebhookDelivery, reached position: WebhookPosition?,
                                      maxFailures: Int) throws(CartographError) -> Webhook? {
        try state.withLock { (state) throws(CartographError) -> Webhook? in
            let connection = state.connection
            do {
                return try connection.transaction { () throws(SQLiteError) -> Webhook? in
                    guard var webhook = try Self.webhook(tenantID: tenantID, name: name, connection) else { return nil }
                    try connection.run(
                        """
                        INSERT INTO webhook_deliveries (tenant_id, name, at, model, message_id, entries, since, next, status, error, duration_ms)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                        [.text(tenantID), .text(name), .real(delivery.at.timeIntervalSince1970), .text(delivery.model), .text(delivery.messageID),
                         .integer(Int64(delivery.entries)), .integer(delivery.since), .integer(delivery.next),
                         delivery.status.map { .integer(Int64($0)) } ?? .null, delivery.error.map { .text($0) } ?? .null,
                         .real(delivery.durationMilliseconds)])
                    try connection.run(
                        """
                        DELETE FROM webhook_deliveries WHERE tenant_id = ? AND name = ? AND id NOT IN
                            (SELECT id FROM webhook_deliveries WHERE tenant_id = ? AND name = ? ORDER BY id DESC LIMIT ?)
                        """,
                        [.text(tenantID), .text(name), .text(tenantID), .text(name), .integer(Int64(Self.webhookLogLength))])
                    if let position { try Self.savePosition(tenantID: tenantID, name: name, position, connection) }
                    if delivery.delivered {
                        webhook.consecutiveFailures = 0
                    } else {
                        webhook.consecutiveFailures += 1
                        if webhook.enabled, webhook.consecutiveFailures >= maxFailures {
                            webhook.enabled = false
                            webhook.disabledReason = "\(webhook.consecutiveFailures) deliveries failed in a row; the last: \(delivery.error ?? "")"
                        }
                    }
                    try connection.run(
                        "UPDATE webhooks SET consecutive_failures = ?, enabled = ?, disabled_reason = ? WHERE tenant_id = ? AND name = ?",
                        [.integer(Int64(webhook.consecutiveFailures)), .integer(webhook.enabled ? 1 : 0),
                         webhook.disabledReason.map { .text($0) } ?? .null, .text(tenantID), .text(name)])
                    return webhook
                }
            } catch {
                throw CartographError.store(error, "Cannot record a delivery of webhook '\(name)'")
            }
        }
    }

    /// A webhook's last attempts, newest first.
    public func webhookDeliveries(tenantID: String, name: String) throws(CartographError) -> [WebhookDelivery] {
        try state.withLock { (state) throws(CartographError) -> [WebhookDelivery] in
            do {
                return try state.connection.rows(
                    """
                    SELECT at, model, message_id, entries, since, next, status, error, duration_ms FROM webhook_deliveries
                    WHERE tenant_id = ? AND name = ? ORDER BY id DESC
                    """, [.text(tenantID), .text(name)]).map { row in
                        WebhookDelivery(at: Date(timeIntervalSince1970: row[0].realValue ?? 0), model: row[1].textValue ?? "",
                                        messageID: row[2].textValue ?? "", entries: Int(row[3].integerValue ?? 0), since: row[4].integerValue ?? 0,
                                        next: row[5].integerValue ?? 0, status: row[6].integerValue.map(Int.init), error: row[7].textValue,
                                        durationMilliseconds: row[8].realValue ?? 0)
                    }
            } catch {
                throw CartographError.store(error, "Cannot read the deliveries of webhook '\(name)'")
            }
        }
    }

    // MARK: Rows

    private static func webhook(tenantID: String, name: String, _ connection: SQLiteConnection) throws(SQLiteError) -> Webhook? {
        try connection.rows("SELECT \(webhookColumns) FROM webhooks WHERE tenant_id = ? AND name = ?", [.text(tenantID), .text(name)])
            .first.map(webhook(row:))
    }

    private static func webhook(row: [SQLiteValue]) -> Webhook {
        Webhook(tenantID: row[0].textValue ?? "", name: row[1].textValue ?? "", url: row[2].textValue ?? "",
                subscriptions: decode(row[3].textValue ?? "[]"), secret: row[4].textValue ?? "", enabled: row[5].integerValue == 1,
                consecutiveFailures: Int(row[6].integerValue ?? 0), disabledReason: row[7].textValue,
                createdAt: Date(timeIntervalSince1970: row[8].realValue ?? 0), updatedAt: Date(timeIntervalSince1970: row[9].realValue ?? 0))
    }

    private static func savePosition(tenantID: String, name: String, _ position: WebhookPosition, _ connection: SQLiteConnection) throws(SQLiteError) {
        // The webhook may have been deleted while its batch was out: then there is nothing to save.
        try connection.run(
            """
            INSERT OR REPLACE INTO webhook_positions (tenant_id, name, model, epoch, seq)
            SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM webhooks WHERE tenant_id = ? AND name = ?)
            """,
            [.text(tenantID), .text(name), .text(position.model), .text(position.epoch), .integer(position.seq), .text(tenantID), .text(name)])
    }

    /// Subscriptions as stored: `[{"model": …, "entities": […]}]`.
    private static func encode(_ subscriptions: [WebhookSubscription]) -> String {
        var out: [UInt8] = []
        JSONWriter.write(.array(subscriptions.map { ["model": .string($0.model), "entities": .array($0.entities.map(JSONValue.string))] }), into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func decode(_ text: String) -> [WebhookSubscription] {
        guard let value = try? JSONReader().parse(Array(text.utf8)), let items = value.arrayValue else { return [] }
        return items.compactMap { item in
            guard let model = item["model"]?.stringValue else { return nil }
            return WebhookSubscription(model: model, entities: (item["entities"]?.arrayValue ?? []).compactMap(\.stringValue))
        }
    }
}
