// R-W2: a delivery is signed as the Standard Webhooks specification says
// (https://www.standardwebhooks.com), so that a receiver can check it with any of its verifiers:
// `webhook-signature: v1,<base64(HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>"))>`, where
// the key is the base64 after the secret's `whsec_` prefix.
import Foundation
import Crypto

/// A webhook's signing key, read from its `whsec_<base64>` secret.
struct WebhookSigner {
    static let secretPrefix = "whsec_"
    /// The Standard Webhooks specification asks for secrets of 24 to 64 random bytes.
    static let secretBytes = 24...64

    private let key: SymmetricKey

    /// Nil when `secret` is not `whsec_` followed by the base64 of 24 to 64 bytes.
    init?(secret: String) {
        guard secret.hasPrefix(Self.secretPrefix), let bytes = Data(base64Encoded: String(secret.dropFirst(Self.secretPrefix.count))),
              Self.secretBytes.contains(bytes.count) else { return nil }
        key = SymmetricKey(data: bytes)
    }

    /// The `webhook-signature` header's value for a message.
    func signature(messageID: String, timestamp: Int64, body: [UInt8]) -> String {
        var signed = Array("\(messageID).\(timestamp).".utf8)
        signed.append(contentsOf: body)
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: key)
        return "v1," + Data(mac).base64EncodedString()
    }

    /// The three headers of a signed delivery.
    func headers(messageID: String, timestamp: Int64, body: [UInt8]) -> [(String, String)] {
        [("webhook-id", messageID), ("webhook-timestamp", String(timestamp)),
         ("webhook-signature", signature(messageID: messageID, timestamp: timestamp, body: body))]
    }
}
