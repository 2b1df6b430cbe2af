// The body of a webhook delivery (R-W2, docs/webhooks.md): one batch of one model's change feed, its
// entries written exactly as `GET …/changes` writes them (ChangeFeedDocument), with what the receiver
// needs to know where they come from: `{"type", "tenant", "webhook", "model", "epoch", "since", "changes", "next"}`.
import CartographCore
import CartographStore

enum WebhookDeliveryDocument {
    static let type = "cartograph.changes"

    static func bytes(tenant: String, webhook: String, model: String, epoch: String, since: Int64,
                      entries: [ChangeFeedEntry], next: Int64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + entries.count * 512)
        out.append(contentsOf: #"{"type":"#.utf8)
        JSONWriter.writeString(type, into: &out)
        out.append(contentsOf: #","tenant":"#.utf8)
        JSONWriter.writeString(tenant, into: &out)
        out.append(contentsOf: #","webhook":"#.utf8)
        JSONWriter.writeString(webhook, into: &out)
        out.append(contentsOf: #","model":"#.utf8)
        JSONWriter.writeString(model, into: &out)
        out.append(contentsOf: #","epoch":"#.utf8)
        JSONWriter.writeString(epoch, into: &out)
        out.append(contentsOf: #","since":"#.utf8)
        JSONWriter.writeInteger(since, into: &out)
        ChangeFeedEntry.writeChanges(entries, next: next, into: &out)
        return out
    }
}
