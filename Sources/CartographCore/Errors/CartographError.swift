// The one error type that crosses module boundaries. The HTTP layer turns it into an
// RFC 9457 problem and chooses the status from `code` in a single place.

/// A problem with a request, a document or the service, with what a user needs to fix it.
public struct CartographError: Error, Sendable, CustomStringConvertible {
    /// The kind of problem; the HTTP layer maps each code to a status.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let badRequest = Code(rawValue: "bad-request")
        public static let unauthorized = Code(rawValue: "unauthorized")
        public static let forbidden = Code(rawValue: "forbidden")
        public static let notFound = Code(rawValue: "not-found")
        public static let methodNotAllowed = Code(rawValue: "method-not-allowed")
        public static let conflict = Code(rawValue: "conflict")
        public static let payloadTooLarge = Code(rawValue: "payload-too-large")
        public static let unsupportedMediaType = Code(rawValue: "unsupported-media-type")
        /// The route cannot answer in any media type the request's `Accept` takes (R-Q7).
        public static let notAcceptable = Code(rawValue: "not-acceptable")
        public static let unprocessable = Code(rawValue: "unprocessable")
        public static let tooManyRequests = Code(rawValue: "too-many-requests")
        /// A tenant quota (models, store bytes) would be exceeded (R-S2).
        public static let quotaExceeded = Code(rawValue: "quota-exceeded")
        public static let unavailable = Code(rawValue: "unavailable")
        /// The request ran past the server's time limit and was stopped (R-S2).
        public static let timeLimitExceeded = Code(rawValue: "time-limit-exceeded")
        public static let internalError = Code(rawValue: "internal")
        /// The disk holding a store is full: nothing was written, and writes work again once there is room.
        public static let insufficientStorage = Code(rawValue: "insufficient-storage")
        /// A store cannot be written (permissions, a read-only file system): it is opened again on a later request.
        public static let storeUnavailable = Code(rawValue: "store-unavailable")
        /// SQLite found a store's file damaged: no more writes to it until an operator restores it.
        public static let storeCorrupt = Code(rawValue: "store-corrupt")
        /// A browser's CORS preflight from an origin the server does not allow (`--cors-origin`).
        public static let originNotAllowed = Code(rawValue: "origin-not-allowed")

        /// A fault of a store's file or disk rather than of the request (docs/errors.md#storage-faults).
        public var isStorageFault: Bool { self == .insufficientStorage || self == .storeUnavailable || self == .storeCorrupt }
    }

    /// One located problem inside a document or request.
    public struct Detail: Sendable, Equatable {
        public var pointer: String
        public var message: String
        public var offset: Int?

        public init(pointer: String, message: String, offset: Int? = nil) {
            self.pointer = pointer
            self.message = message
            self.offset = offset
        }
    }

    public var code: Code
    /// A sentence a user can act on.
    public var detail: String
    public var errors: [Detail]
    /// Character offset for predicate and JSON syntax errors.
    public var offset: Int?
    /// Methods the resource supports (405 only).
    public var allowedMethods: [String]
    /// Seconds to wait before retrying (429 and 503).
    public var retryAfterSeconds: Int?
    /// True when `detail` repeats what the request sent (an object key, a predicate's text, a query
    /// value, a path): the request log leaves such a detail out, as it never logs what a client sent.
    public var detailQuotesRequestValues = false
    /// The error this one was made from (an `SQLiteError` with its result code, a `JSONSyntaxError`, a file
    /// system error), kept whole: code that classifies the problem reads it, and the server's log shows it
    /// for a fault of the server or of a store. Never part of a problem document.
    public var underlying: (any Error)?
    /// Where `detail` speaks of an option of the operation, in words that name no transport.
    public var optionPhrase: OptionPhrase?

    /// The words in which an error's detail (and its details' messages) speak of an option of the
    /// operation that failed (`allowDestructive`, an idempotency key): the store and the engine name the
    /// option, and each edge says it as its callers set it (a query parameter, a header, a command-line
    /// flag) with `phrasingOption(_:as:)`.
    public struct OptionPhrase: Sendable, Equatable {
        /// The operation's option, as the operation names it.
        public let option: String
        /// The words that speak of it ("apply it with allowDestructive to proceed").
        public let words: String

        public init(option: String, words: String) {
            self.option = option
            self.words = words
        }
    }

    public init(
        _ code: Code, _ detail: String, errors: [Detail] = [], offset: Int? = nil,
        allowedMethods: [String] = [], retryAfterSeconds: Int? = nil, optionPhrase: OptionPhrase? = nil,
        underlying: (any Error)? = nil
    ) {
        self.code = code
        self.detail = detail
        self.errors = errors
        self.offset = offset
        self.allowedMethods = allowedMethods
        self.retryAfterSeconds = retryAfterSeconds
        self.underlying = underlying
        self.optionPhrase = optionPhrase
    }

    public var description: String { "\(code.rawValue): \(detail)" }

    /// This error with the words that speak of `option` (`optionPhrase`) replaced by `words`; unchanged
    /// when its detail speaks of no such option.
    public func phrasingOption(_ option: String, as words: String) -> CartographError {
        guard let phrase = optionPhrase, phrase.option == option else { return self }
        var phrased = self
        phrased.detail = detail.replacing(phrase.words, with: words)
        phrased.errors = errors.map { Detail(pointer: $0.pointer, message: $0.message.replacing(phrase.words, with: words),
                                             offset: $0.offset) }
        phrased.optionPhrase = OptionPhrase(option: option, words: words)
        return phrased
    }

    /// This error, marked as quoting the request's values in its detail (`detailQuotesRequestValues`).
    public func quotingRequestValues() -> CartographError {
        var marked = self
        marked.detailQuotesRequestValues = true
        return marked
    }
}

extension CartographError {
    /// A request body that is not JSON.
    public init(_ error: JSONSyntaxError) {
        self.init(
            .badRequest, "The request body is not valid JSON: \(error.message) at byte \(error.offset).",
            errors: [Detail(pointer: "", message: error.message, offset: error.offset)], offset: error.offset, underlying: error
        )
    }
}
