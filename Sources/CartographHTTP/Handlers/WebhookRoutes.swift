// A tenant's webhooks (R-W1…R-W4, docs/webhooks.md): register or replace (and enable again), list, read
// with its positions and delivery log, delete. Tenant admin keys only: a webhook holds a secret and sends
// the tenant's data elsewhere.
import CartographCore
import CartographStore

struct WebhookRoutes: Sendable {
    static let collection = "/v1/tenants/{tenant}/webhooks"
    static let item = collection + "/{webhook}"

    let control: ControlStore
    let stores: StoreRegistry
    let policy: WebhookAddressPolicy
    let dispatcher: WebhookDispatcher
    let jsonReader: JSONReader

    var routes: [Route] { [
        Route("PUT", Self.item, access: .tenant(.admin), body: .json) { context in
            let tenant = try control.existingTenant(context.parameter("tenant"))
            let name = context.parameter("webhook")
            let isNew = try control.webhook(tenantID: tenant, name: name) == nil
            let document = try WebhookDocument.read(try context.jsonBody(jsonReader), isNew: isNew, policy: policy) { (model) throws(CartographError) -> Model? in
                try stores.store(tenant: tenant, model: model)?.model
            }
            let put = try control.putWebhook(tenantID: tenant, name: name, url: document.url, subscriptions: document.subscriptions,
                                             secret: document.secret)
            dispatcher.webhookChanged(tenant: tenant, name: name)
            return .json(put.webhook.json(positions: try control.webhookPositions(tenantID: tenant, name: name)), status: put.created ? 201 : 200)
        },
        Route("GET", Self.collection, access: .tenant(.admin)) { context in
            let tenant = try control.existingTenant(context.parameter("tenant"))
            return .json(["items": .array(try control.webhooks(tenantID: tenant).map { $0.json() })])
        },
        Route("GET", Self.item, access: .tenant(.admin)) { context in
            let tenant = try control.existingTenant(context.parameter("tenant"))
            let name = context.parameter("webhook")
            guard let webhook = try control.webhook(tenantID: tenant, name: name) else { throw Self.unknown(name, tenant: tenant) }
            return .json(webhook.json(positions: try control.webhookPositions(tenantID: tenant, name: name),
                                      deliveries: try control.webhookDeliveries(tenantID: tenant, name: name)))
        },
        Route("DELETE", Self.item, access: .tenant(.admin)) { context in
            let tenant = try control.existingTenant(context.parameter("tenant"))
            try control.deleteWebhook(tenantID: tenant, name: context.parameter("webhook"))
            dispatcher.webhookChanged(tenant: tenant, name: context.parameter("webhook"))
            return .noContent
        },
    ] }

    static func unknown(_ name: String, tenant: String) -> CartographError {
        CartographError(.notFound, "Tenant '\(tenant)' has no webhook named '\(name)'.")
    }
}
