// RFC 9457 problem documents. HTTP statuses for error codes are assigned here and nowhere else.
import Logging
import CartographCore

extension CartographError.Code {
    /// The problem document's `type` for this kind of problem.
    var problemType: String { "urn:cartograph:problem:\(rawValue)" }

    /// The HTTP status for this kind of problem.
    var httpStatus: Int {
        switch self {
        case .badRequest: 400
        case .unauthorized: 401
        case .forbidden: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .notAcceptable: 406
        case .conflict: 409
        // A quota is a conflict with the tenant's current state that the client can resolve (delete
        // objects or models) or the operator can lift — RFC 9110's 409. Not 403 (that means the token
        // here), not 413 (it tells a client to shrink the body, yet a one-object payload fails as well
        // when the store is full), not 507 (a 5xx: a server fault that clients and proxies retry).
        // The problem type `urn:cartograph:problem:quota-exceeded` tells it from other conflicts.
        case .quotaExceeded: 409
        case .payloadTooLarge: 413
        case .unsupportedMediaType: 415
        case .unprocessable: 422
        case .tooManyRequests: 429
        case .unavailable: 503
        // Like a platform's request timeout (Heroku answers 503 too): the server gave up on work it
        // accepted. No Retry-After: the same request would run as long again.
        case .timeLimitExceeded: 503
        // Storage faults: the disk is full (RFC 4918's 507), the file cannot be written or is damaged (503).
        case .insufficientStorage: 507
        case .storeUnavailable, .storeCorrupt: 503
        // Not 401/403's usual meaning (the token): the browser's page is on an origin this server does not serve.
        case .originNotAllowed: 403
        default: 500
        }
    }
}

/// The standard reason phrase for a status.
func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 201: "Created"
    case 204: "No Content"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 406: "Not Acceptable"
    case 409: "Conflict"
    case 413: "Content Too Large"
    case 415: "Unsupported Media Type"
    case 422: "Unprocessable Content"
    case 429: "Too Many Requests"
    case 503: "Service Unavailable"
    case 507: "Insufficient Storage"
    default: "Internal Server Error"
    }
}

extension HTTPResponse {
    /// The problem+json response for `error`.
    static func problem(_ error: CartographError, instance: String? = nil) -> HTTPResponse {
        let status = error.code.httpStatus
        var document = JSONObject()
        document.append("type", .string(error.code.problemType))
        document.append("title", .string(reasonPhrase(status)))
        document.append("status", .number(JSONNumber(status)))
        document.append("detail", .string(error.detail))
        if let instance { document.append("instance", .string(instance)) }
        if let offset = error.offset { document.append("offset", .number(JSONNumber(offset))) }
        if !error.errors.isEmpty {
            document.append("errors", .array(error.errors.map(\.json)))
        }
        var response = HTTPResponse.json(.object(document), status: status, contentType: "application/problem+json")
        response.problem = ProblemSummary(type: error.code.problemType,
                                          loggableDetail: error.detailQuotesRequestValues ? nil : error.detail)
        if !error.allowedMethods.isEmpty { response.headers.append(("Allow", error.allowedMethods.joined(separator: ", "))) }
        if let seconds = error.retryAfterSeconds { response.headers.append(("Retry-After", String(seconds))) }
        if error.code == .unauthorized { response.headers.append(("WWW-Authenticate", "Bearer")) }
        return response
    }
}

extension CartographError {
    /// A fault's log line (`request failed`, `storage fault`): the request id, the problem's type, its
    /// detail unless that quotes what the request sent (R-S10), and the error it was made from (an SQLite
    /// error with its code, message and statement), which no answer carries.
    func faultLogMetadata(requestID: String) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["request.id": "\(requestID)", "problem.type": "\(code.problemType)"]
        if !detailQuotesRequestValues { metadata["problem.detail"] = "\(detail)" }
        if let underlying { metadata["cause"] = "\(underlying)" }
        return metadata
    }
}

/// Turns the error a request ended with into its answer, the same for a request answered at once and a
/// long poll answered later: a fault of the server or of a store is logged with its cause under the
/// request id (R-S6), and an internal error's own words (an SQLite message, a statement) stay out of the answer.
struct ProblemResponder: Sendable {
    let logger: Logger

    func response(for error: CartographError, to request: HTTPRequest, requestID: String, route: String) -> HTTPResponse {
        if error.code == .timeLimitExceeded {
            logger.warning("request stopped at the time limit", metadata: ["request.id": "\(requestID)", "route": "\(route)"])
        } else if error.code.httpStatus >= 500, error.code != .unavailable {
            logger.error("request failed", metadata: error.faultLogMetadata(requestID: requestID))
        }
        let answered = error.code == .internalError
            ? CartographError(.internalError, "An internal error occurred; it has been logged with request id \(requestID).")
            : error
        return .problem(answered, instance: request.path)
    }
}

extension CartographError.Detail {
    /// `{"pointer", "message", "offset"?}`: a problem's error, or a warning of an answer.
    var json: JSONValue {
        var entry = JSONObject()
        entry.append("pointer", .string(pointer))
        entry.append("message", .string(message))
        if let offset { entry.append("offset", .number(JSONNumber(offset))) }
        return .object(entry)
    }
}
