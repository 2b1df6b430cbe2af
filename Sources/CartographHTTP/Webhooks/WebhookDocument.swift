// R-W1: the webhook document a tenant PUTs, checked whole (every problem at its JSON Pointer in one 422,
// as model and mapping documents are), and the webhook as GET answers it (its secret never: only whether
// one is set).
import Foundation
import CartographCore
import CartographStore

/// A checked `PUT …/webhooks/{webhook}` body.
struct WebhookDocument: Sendable {
    let url: String
    let subscriptions: [WebhookSubscription]
    /// Nil: keep the secret the webhook has.
    let secret: String?

    static let members: Set<String> = ["url", "secret", "models"]
    /// Models one webhook may follow.
    static let maxModels = 100

    /// Reads `body`; `model` answers a model of the tenant by name (nil when there is none). A new webhook
    /// (`isNew`) needs a secret; a replaced one keeps its own when the document has none.
    static func read(_ body: JSONValue, isNew: Bool, policy: WebhookAddressPolicy, model: (String) throws(CartographError) -> Model?) throws(CartographError) -> WebhookDocument {
        var problems = DocumentProblems()
        let root = JSONPointer.root
        guard let document = body.objectValue else {
            problems.report(root, "expected an object like {\"url\": \"https://…\", \"secret\": \"whsec_…\", \"models\": [{\"name\": \"…\"}]}, found \(body.kindName)")
            throw problems.error(summary: "The webhook document is not valid")
        }
        for (key, _) in document where !members.contains(key) {
            problems.report(root.appending(key), "unknown member; a webhook has \(members.sorted().joined(separator: ", "))")
        }
        var url = ""
        var urlRefusal: String?
        switch document["url"] {
        case .string(let text)?:
            switch policy.check(text) {
            case .allowed: url = text
            case .refused(let why):
                urlRefusal = why
                problems.report(root.appending("url"), why)
            }
        case let other?: problems.report(root.appending("url"), "expected a URL string, found \(other.kindName)")
        case nil: problems.report(root.appending("url"), "required: the https URL deliveries are POSTed to")
        }
        var secret: String?
        switch document["secret"] {
        case .string(let text)?:
            if WebhookSigner(secret: text) == nil {
                problems.report(root.appending("secret"), "expected \"whsec_\" followed by the base64 of \(WebhookSigner.secretBytes.lowerBound) to \(WebhookSigner.secretBytes.upperBound) random bytes")
            } else {
                secret = text
            }
        case let other?: problems.report(root.appending("secret"), "expected a string \"whsec_…\", found \(other.kindName)")
        case nil:
            if isNew { problems.report(root.appending("secret"), "required for a new webhook: \"whsec_\" followed by the base64 of 24 to 64 random bytes") }
        }
        var subscriptions: [WebhookSubscription] = []
        switch document["models"] {
        case .array(let items)?:
            if items.isEmpty { problems.report(root.appending("models"), "expected at least one model") }
            if items.count > maxModels { problems.report(root.appending("models"), "at most \(maxModels) models") }
            for (index, item) in items.prefix(maxModels).enumerated() {
                if let subscription = try readSubscription(item, at: root.appending("models").appending(index), problems: &problems, model: model) {
                    if subscriptions.contains(where: { $0.model == subscription.model }) {
                        problems.report(root.appending("models").appending(index).appending("name"), "model \(DocumentProblems.quote(subscription.model)) is listed twice")
                    } else {
                        subscriptions.append(subscription)
                    }
                }
            }
        case let other?: problems.report(root.appending("models"), "expected an array of {\"name\", \"entities\"}, found \(other.kindName)")
        case nil: problems.report(root.appending("models"), "required: the models whose change feeds are delivered")
        }
        if !problems.isEmpty {
            // A refused URL alone is answered with its reason as the detail (R-W4).
            if problems.count == 1, let urlRefusal {
                throw CartographError(.unprocessable, "The webhook's URL is not allowed: \(urlRefusal)", errors: problems.details)
            }
            throw problems.error(summary: "The webhook document is not valid")
        }
        return WebhookDocument(url: url, subscriptions: subscriptions, secret: secret)
    }

    private static func readSubscription(_ item: JSONValue, at pointer: JSONPointer, problems: inout DocumentProblems,
                                         model: (String) throws(CartographError) -> Model?) throws(CartographError) -> WebhookSubscription? {
        guard let object = item.objectValue else {
            problems.report(pointer, "expected an object {\"name\": \"<model>\", \"entities\": [\"<Entity>\", …]}, found \(item.kindName)")
            return nil
        }
        for (key, _) in object where key != "name" && key != "entities" {
            problems.report(pointer.appending(key), "unknown member; a model of a webhook has entities, name")
        }
        guard let name = object["name"]?.stringValue else {
            problems.report(pointer.appending("name"), "required: the name of one of the tenant's models")
            return nil
        }
        guard Names.isResourceName(name), let registered = try model(name) else {
            problems.report(pointer.appending("name"), "the tenant has no model named \(DocumentProblems.quote(name))")
            return nil
        }
        var entities: [String] = []
        switch object["entities"] {
        case .array(let items)?:
            for (index, item) in items.enumerated() {
                guard let entity = item.stringValue else {
                    problems.report(pointer.appending("entities").appending(index), "expected an entity name, found \(item.kindName)")
                    continue
                }
                guard registered.entity(named: entity) != nil else {
                    problems.report(pointer.appending("entities").appending(index),
                                    "model \(DocumentProblems.quote(name)) has no entity named \(DocumentProblems.quote(entity))")
                    continue
                }
                if !entities.contains(entity) { entities.append(entity) }
            }
        case let other?: problems.report(pointer.appending("entities"), "expected an array of entity names, found \(other.kindName)")
        case nil: break
        }
        return WebhookSubscription(model: name, entities: entities)
    }
}

extension Webhook {
    /// The webhook as its routes answer it: never its secret.
    func json(positions: [WebhookPosition]? = nil, deliveries: [WebhookDelivery]? = nil) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("name", .string(name)), ("url", .string(url)),
            ("models", .array(subscriptions.map { ["name": .string($0.model), "entities": .array($0.entities.map(JSONValue.string))] })),
            ("secretSet", .bool(!secret.isEmpty)),
            ("state", .string(enabled ? "enabled" : "disabled")),
            ("consecutiveFailures", .number(JSONNumber(consecutiveFailures))),
        ]
        if let disabledReason { members.append(("disabledReason", .string(disabledReason))) }
        members += [("createdAt", .string(Timestamp.render(createdAt))), ("updatedAt", .string(Timestamp.render(updatedAt)))]
        if let positions {
            members.append(("positions", .array(positions.map {
                ["model": .string($0.model), "epoch": .string($0.epoch), "since": .number(JSONNumber($0.seq))]
            })))
        }
        if let deliveries { members.append(("deliveries", .array(deliveries.map(\.json)))) }
        return .object(JSONObject(members))
    }
}

extension WebhookDelivery {
    var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("at", .string(Timestamp.render(at))), ("model", .string(model)), ("webhookId", .string(messageID)),
            ("outcome", .string(delivered ? "delivered" : "failed")), ("entries", .number(JSONNumber(entries))),
            ("since", .number(JSONNumber(since))), ("next", .number(JSONNumber(next))),
        ]
        if let status { members.append(("status", .number(JSONNumber(status)))) }
        if let error { members.append(("error", .string(error))) }
        members.append(("durationMs", .number(JSONNumber((durationMilliseconds * 1000).rounded() / 1000) ?? JSONNumber(0))))
        return .object(JSONObject(members))
    }
}
