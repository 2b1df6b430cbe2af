// R-W4: where a webhook may send. A tenant's URL must not turn the server into a way into the networks it
// sits on: only `https`, and no loopback, private, link-local, shared (CGNAT), multicast or unspecified
// address — checked when the webhook is registered (the host as written) and again before every delivery
// (every address the name resolves to). Hosts the operator names (`--webhook-allow-host`) are exempt from
// both, and may be sent plain `http`. Redirects are never followed (WebhookSender), so a receiver cannot
// point a delivery elsewhere. A name that resolves differently between the check and the connection (DNS
// rebinding) is not caught: that would need connecting to the checked address itself.
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct WebhookAddressPolicy: Sendable {
    /// Host names (lowercased) exempt from the address rules, to which plain `http` is allowed too.
    let allowedHosts: Set<String>

    init(allowedHosts: [String]) {
        self.allowedHosts = Set(allowedHosts.map { Self.bare($0).lowercased() })
    }

    /// A URL a webhook may be registered with: its host, or why not (a sentence for the 422).
    enum Verdict: Equatable {
        case allowed(URL, host: String)
        case refused(String)
    }

    /// Checks a URL as written: scheme, host, no credentials, and a literal address's range.
    func check(_ text: String) -> Verdict {
        guard let components = URLComponents(string: text), let url = components.url, let scheme = components.scheme?.lowercased() else {
            return .refused("'\(text)' is not an absolute URL.")
        }
        guard scheme == "https" || scheme == "http" else { return .refused("The URL's scheme must be https, not '\(scheme)'.") }
        guard let rawHost = components.host, !rawHost.isEmpty else { return .refused("The URL has no host.") }
        guard components.user == nil, components.password == nil else {
            return .refused("The URL must not carry credentials; the receiver checks the signature instead.")
        }
        let host = Self.bare(rawHost).lowercased()
        if allowedHosts.contains(host) { return .allowed(url, host: host) }
        guard scheme == "https" else {
            return .refused("The URL must be https; plain http is allowed only to a host the operator allows (--webhook-allow-host), and '\(host)' is not one.")
        }
        if host == "localhost" || host.hasSuffix(".localhost") {
            return .refused("'\(host)' is a loopback host, which the operator does not allow (--webhook-allow-host).")
        }
        if let address = IPAddress(host), let range = address.forbiddenRange {
            return .refused("'\(host)' is \(range) address, which the operator does not allow (--webhook-allow-host).")
        }
        return .allowed(url, host: host)
    }

    /// Why `host` may not be delivered to now, after resolving it, or nil: every address it resolves to must be
    /// a public one (unless the operator allows the host by name).
    func refusalAfterResolving(_ host: String, port: Int?) -> String? {
        if allowedHosts.contains(host) { return nil }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, port.map(String.init) ?? "443", &hints, &list)
        guard status == 0, let first = list else {
            return "cannot resolve '\(host)': \(String(cString: gai_strerror(status)))"
        }
        defer { freeaddrinfo(first) }
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let entry = next {
            if let address = IPAddress(entry.pointee), let range = address.forbiddenRange {
                return "'\(host)' resolves to \(address), \(range) address, which the operator does not allow (--webhook-allow-host)"
            }
            next = entry.pointee.ai_next
        }
        return nil
    }

    /// A host without the brackets of an IPv6 literal.
    static func bare(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }
}

/// An IPv4 or IPv6 address, for its range.
struct IPAddress: CustomStringConvertible, Sendable {
    /// 4 or 16 bytes.
    let bytes: [UInt8]

    init?(_ text: String) {
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
    }

    init?(_ entry: addrinfo) {
        guard let address = entry.ai_addr else { return nil }
        switch entry.ai_family {
        case AF_INET:
            bytes = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                var value = pointer.pointee.sin_addr
                return withUnsafeBytes(of: &value) { Array($0) }
            }
        case AF_INET6:
            bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                var value = pointer.pointee.sin6_addr
                return withUnsafeBytes(of: &value) { Array($0) }
            }
        default:
            return nil
        }
    }

    var description: String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var value = in6_addr()
        withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: bytes) }
        _ = inet_ntop(AF_INET6, &value, &text, socklen_t(text.count))
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// "a loopback", "a private", … for an address a webhook may not reach; nil for a public one.
    var forbiddenRange: String? {
        if bytes.count == 4 { return Self.forbiddenRange(v4: bytes) }
        let zeroPrefix = bytes[0..<10].allSatisfy { $0 == 0 }
        // IPv4-mapped (::ffff:a.b.c.d): the IPv4 address's range.
        if zeroPrefix, bytes[10] == 0xFF, bytes[11] == 0xFF { return Self.forbiddenRange(v4: Array(bytes[12...])) }
        if bytes.allSatisfy({ $0 == 0 }) { return "an unspecified" }
        if bytes[0..<15].allSatisfy({ $0 == 0 }), bytes[15] == 1 { return "a loopback" }
        if bytes[0] & 0xFE == 0xFC { return "a private (unique local)" }
        if bytes[0] == 0xFE, bytes[1] & 0xC0 == 0x80 { return "a link-local" }
        if bytes[0] == 0xFF { return "a multicast" }
        return nil
    }

    private static func forbiddenRange(v4 b: [UInt8]) -> String? {
        switch (b[0], b[1]) {
        case (0, _): return "an unspecified"
        case (127, _): return "a loopback"
        case (10, _), (172, 16...31), (192, 168): return "a private"
        case (169, 254): return "a link-local"
        case (100, 64...127): return "a shared (carrier-grade NAT)"
        case (224...255, _): return "a multicast or reserved"
        case (_, _): return nil
        }
    }
}
