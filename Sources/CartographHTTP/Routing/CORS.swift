// Cross-origin requests from browser apps (R-S8, docs/operations.md#cors-r-s8). Only the origins the server
// was started with (`--cors-origin`) get CORS headers, matched exactly. OPTIONS on any route's path is
// answered here, before authentication (a browser's preflight never carries the token): 204 with
// `Allow`, and for a preflight from a listed origin the methods and headers it may use; a preflight
// from any other origin is a 403 problem that says why, without CORS headers, so the browser stops.
import Foundation
import CartographCore

/// The origins allowed to call the API from a browser, and the headers that go with them.
struct CORSPolicy: Sendable {
    /// `scheme://host[:port]`, lowercased, as browsers send `Origin`.
    let origins: Set<String>

    /// Request headers the API reads, beyond those browsers may always send.
    static let allowedHeaders = "Authorization, Content-Type, Idempotency-Key, X-Request-Id"
    /// Response headers a script may read, beyond the safelisted ones (`Content-Type`, …).
    /// (The `Cartograph-…` headers and `Link` carry a CSV or NDJSON page's position, R-Q7.)
    static let exposedHeaders = "Allow, Cartograph-Epoch, Cartograph-Next-Cursor, Cartograph-Next-Since, Cartograph-Total, Link, Location, "
        + "RateLimit, RateLimit-Policy, Retry-After, WWW-Authenticate, X-Request-Id"
    /// How long a browser may reuse a preflight's answer: short, so that a changed origin list takes effect soon.
    static let preflightMaxAgeSeconds = 600

    init(origins: [String]) { self.origins = Set(origins) }

    /// The answer to `OPTIONS` on a path whose routes take `methods`.
    func options(_ request: HTTPRequest, methods: [String]) throws(CartographError) -> HTTPResponse {
        let allowed = methods + ["OPTIONS"]
        var response = HTTPResponse(status: 204, headers: [("Allow", allowed.joined(separator: ", "))])
        guard let origin = request.headers["origin"], request.headers["access-control-request-method"] != nil else { return response }
        guard origins.contains(origin) else {
            throw CartographError(.originNotAllowed, origins.isEmpty
                ? "Origin '\(origin)' may not call this server from a browser: the server allows no cross-origin requests (see --cors-origin)."
                : "Origin '\(origin)' may not call this server from a browser: it is not one of the origins the server allows (--cors-origin).")
        }
        response.headers.append(("Access-Control-Allow-Methods", allowed.joined(separator: ", ")))
        response.headers.append(("Access-Control-Allow-Headers", Self.allowedHeaders))
        response.headers.append(("Access-Control-Max-Age", String(Self.preflightMaxAgeSeconds)))
        return response
    }

    /// Adds the CORS headers to any answer for a listed origin, and `Vary: Origin` whenever origins are
    /// listed (the answer then depends on it, which a cache must know).
    func decorate(_ response: inout HTTPResponse, for request: HTTPRequest) {
        guard !origins.isEmpty else { return }  // before the header lookup: most servers list none
        response.headers.append(("Vary", "Origin"))
        guard let origin = request.headers["origin"], origins.contains(origin) else { return }
        response.headers.append(("Access-Control-Allow-Origin", origin))
        response.headers.append(("Access-Control-Expose-Headers", Self.exposedHeaders))
    }

}

/// The origins `--cors-origin` takes.
public enum CORSOrigin {
    /// `value` as an origin a policy can match: `scheme://host[:port]` with an http(s) scheme, no path,
    /// lowercased as browsers send it; nil when it is not one (a wildcard included: each origin is listed).
    public static func parse(_ value: String) -> String? {
        let lowered = value.lowercased()
        guard let separator = lowered.range(of: "://") else { return nil }
        let scheme = lowered[..<separator.lowerBound], authority = lowered[separator.upperBound...]
        guard scheme == "http" || scheme == "https", !authority.isEmpty,
              authority.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.:[]".contains($0)) }) else { return nil }
        return lowered
    }
}
