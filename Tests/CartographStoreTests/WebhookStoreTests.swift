// R-W1, R-W3: webhooks in the control database — kept across a reopen (a restarted server resumes), the
// log bounded, a run of failures disabling, a PUT enabling again, and everything going with its tenant.
import Foundation
import Testing
import CartographCore
@testable import CartographStore

struct WebhookStoreTests {
    let directory = DataDirectory(path: FileManager.default.temporaryDirectory.appendingPathComponent("cartograph-webhooks-\(UUID().uuidString)").path)
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    func delivery(_ index: Int, failed: Bool) -> WebhookDelivery {
        WebhookDelivery(at: Date(), model: "comics", messageID: "msg_\(index)", entries: 1, since: Int64(index), next: Int64(index + 1),
                        status: failed ? 500 : 204, error: failed ? "answered 500" : nil, durationMilliseconds: 1)
    }

    @Test func R_W3_positionsAndTheLogSurviveAReopenAndTheLogKeepsTheLastFifty() throws {
        do {
            let control = try ControlStore(directory: directory)
            _ = try control.createTenant(id: "acme")
            let put = try control.putWebhook(tenantID: "acme", name: "mirror", url: "https://hooks.example.com/x",
                                              subscriptions: [WebhookSubscription(model: "comics", entities: ["Character"])], secret: secret)
            #expect(put.created)
            for index in 0..<60 {
                _ = try control.recordWebhookDelivery(tenantID: "acme", name: "mirror", delivery(index, failed: false),
                                                      reached: WebhookPosition(model: "comics", epoch: "e1", seq: Int64(index + 1)), maxFailures: 10)
            }
        }
        let reopened = try ControlStore(directory: directory)
        #expect(try reopened.webhookPositions(tenantID: "acme", name: "mirror") == [WebhookPosition(model: "comics", epoch: "e1", seq: 60)])
        let log = try reopened.webhookDeliveries(tenantID: "acme", name: "mirror")
        #expect(log.count == ControlStore.webhookLogLength)
        #expect(log.first?.messageID == "msg_59", "newest first")
        #expect(log.last?.messageID == "msg_10")
        let webhook = try #require(try reopened.webhook(tenantID: "acme", name: "mirror"))
        #expect(webhook.subscriptions == [WebhookSubscription(model: "comics", entities: ["Character"])])
        #expect(webhook.secret == secret)
    }

    @Test func R_W3_aRunOfFailuresDisablesAndAPutEnablesAgainKeepingPositionAndSecret() throws {
        let control = try ControlStore(directory: directory)
        _ = try control.createTenant(id: "acme")
        _ = try control.putWebhook(tenantID: "acme", name: "mirror", url: "https://hooks.example.com/x",
                                   subscriptions: [WebhookSubscription(model: "comics", entities: [])], secret: secret)
        _ = try control.recordWebhookDelivery(tenantID: "acme", name: "mirror", delivery(0, failed: false),
                                              reached: WebhookPosition(model: "comics", epoch: "e1", seq: 1), maxFailures: 3)
        var state: Webhook?
        for index in 1...3 {
            state = try control.recordWebhookDelivery(tenantID: "acme", name: "mirror", delivery(index, failed: true), reached: nil, maxFailures: 3)
            #expect(state?.consecutiveFailures == index)
            #expect(state?.enabled == (index < 3))
        }
        #expect(state?.disabledReason?.contains("3 deliveries failed in a row") == true)
        #expect(try control.webhookPositions(tenantID: "acme", name: "mirror").first?.seq == 1, "a failure moves nothing")

        let again = try control.putWebhook(tenantID: "acme", name: "mirror", url: "https://hooks.example.com/y",
                                           subscriptions: [WebhookSubscription(model: "comics", entities: [])], secret: nil)
        #expect(!again.created)
        #expect(again.webhook.enabled && again.webhook.consecutiveFailures == 0 && again.webhook.disabledReason == nil)
        #expect(try control.webhook(tenantID: "acme", name: "mirror")?.secret == secret, "kept")
        #expect(try control.webhookPositions(tenantID: "acme", name: "mirror").first?.seq == 1, "kept")
    }

    @Test func R_W1_aNewWebhookNeedsASecretAndEverythingGoesWithItsTenant() throws {
        let control = try ControlStore(directory: directory)
        _ = try control.createTenant(id: "acme")
        #expect(throws: CartographError.self) {
            try control.putWebhook(tenantID: "acme", name: "mirror", url: "https://hooks.example.com/x", subscriptions: [], secret: nil)
        }
        _ = try control.putWebhook(tenantID: "acme", name: "mirror", url: "https://hooks.example.com/x", subscriptions: [], secret: secret)
        _ = try control.recordWebhookDelivery(tenantID: "acme", name: "mirror", delivery(0, failed: false),
                                              reached: WebhookPosition(model: "comics", epoch: "e1", seq: 1), maxFailures: 3)
        try control.deleteTenant("acme")
        _ = try control.createTenant(id: "acme")
        #expect(try control.webhooks(tenantID: "acme").isEmpty)
        #expect(try control.webhookPositions(tenantID: "acme", name: "mirror").isEmpty)
        #expect(try control.webhookDeliveries(tenantID: "acme", name: "mirror").isEmpty)
        // A position for a webhook deleted meanwhile is not saved.
        try control.setWebhookPosition(tenantID: "acme", name: "mirror", WebhookPosition(model: "comics", epoch: "e1", seq: 5))
        #expect(try control.webhookPositions(tenantID: "acme", name: "mirror").isEmpty)
    }
}
