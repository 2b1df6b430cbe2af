// API keys and the admin token: generation, parsing, hashing and constant-time comparison.
// Only SHA-256 hashes of secrets are stored; the plain key is shown once, at creation.
import Crypto
import CartographCore

/// A random secret rendered as lowercase hex.
enum RandomToken {
    static func hex(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return HexText.lowercase((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}

/// SHA-256 over UTF-8 text, and comparison that takes the same time wherever the bytes differ.
public enum SecretHash {
    public static func sha256(_ text: String) -> [UInt8] { sha256(bytes: Array(text.utf8)) }

    public static func sha256(bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

    /// Whether `presented` is `secret`, in a time set by `secret`'s length alone: it shows neither how
    /// long a prefix matched nor how long the presented bytes were (as comparing their digests would not).
    public static func constantTimeMatches(_ presented: [UInt8], secret: [UInt8]) -> Bool {
        var difference = presented.count == secret.count ? UInt8(0) : 1
        for i in secret.indices { difference |= secret[i] ^ (i < presented.count ? presented[i] : 0) }
        return difference == 0
    }
}

/// A tenant API key as presented by a client: `cg_<keyId>_<secret>`. The key id is public (it is
/// listed and used to revoke); only the secret's hash is stored.
public struct PresentedAPIKey: Sendable, Equatable {
    public let keyID: String
    public let secret: String

    static let prefix = "cg_"

    /// Parses a bearer token; nil when it is not shaped like a Cartograph key.
    public init?(_ token: String) {
        // On the bytes: every character of a key is ASCII (checked on a get, this was 1% of its CPU by
        // Character).
        let bytes = token.utf8
        guard bytes.starts(with: Self.prefix.utf8) else { return nil }
        let rest = bytes.dropFirst(Self.prefix.utf8.count)
        guard let separator = rest.firstIndex(of: UInt8(ascii: "_")) else { return nil }
        let id = rest[..<separator], secret = rest[rest.index(after: separator)...]
        guard !id.isEmpty, id.count <= 32, secret.count == 64, id.allSatisfy(Self.isHex), secret.allSatisfy(Self.isHex) else { return nil }
        self.keyID = String(decoding: id, as: UTF8.self)
        self.secret = String(decoding: secret, as: UTF8.self)
    }

    init(keyID: String, secret: String) {
        self.keyID = keyID
        self.secret = secret
    }

    /// A fresh key: 8 random bytes of id, 32 of secret.
    static func generate() -> PresentedAPIKey {
        PresentedAPIKey(keyID: RandomToken.hex(bytes: 8), secret: RandomToken.hex(bytes: 32))
    }

    public var token: String { Self.prefix + keyID + "_" + secret }

    private static func isHex(_ b: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(b)
    }
}
