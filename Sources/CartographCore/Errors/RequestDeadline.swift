// R-S2's request time limit. The HTTP layer binds a deadline around each request; long-running
// work checks it cooperatively: the engine between objects, SQLite through its progress handler,
// regular expressions while they backtrack. Binding it as a task-local (which works on plain
// threads too) keeps the limit out of every signature between the route and those checks.

/// The moment the current request must stop working, and the limit it came from.
public struct RequestDeadline: Sendable {
    public let instant: ContinuousClock.Instant
    public let limit: Duration

    public init(limit: Duration, from start: ContinuousClock.Instant = .now) {
        self.instant = start + limit
        self.limit = limit
    }

    /// The deadline of the request running on this thread or task, if any.
    @TaskLocal public static var current: RequestDeadline?

    /// True when the current request has run past its deadline.
    public static var hasPassed: Bool {
        guard let deadline = current else { return false }
        return ContinuousClock.now >= deadline.instant
    }

    /// Throws the time-limit error once the current request has run past its deadline.
    public static func check() throws(CartographError) {
        if hasPassed, let deadline = current { throw deadline.error }
    }

    /// The problem a request that ran out of time answers with; nothing it did is kept.
    public var error: CartographError {
        let seconds = limit.components.seconds
        return CartographError(.timeLimitExceeded, "The request ran longer than the server's limit of \(seconds) s and was stopped; nothing it changed was stored. Send less per request (or ask the operator to raise --request-time-limit).")
    }
}
