// A response body written as the client reads it (R-Q7, docs/queries.md#formats): the transport asks for
// the next piece when it has sent the last, so a CSV or NDJSON answer of any length holds one piece (a
// chunk of at most 1,000 objects) in memory at a time. The status and headers are sent before the first
// piece is asked for: a piece that fails cannot become a problem any more, and the transport ends the
// connection without the body's last chunk instead, so the client sees a truncated answer, not a short one.
public import Synchronization
public import CartographCore

/// A body produced piece by piece (`HTTPResponse.stream`).
public final class ResponseStream: Sendable {
    /// The producer, called by one thread at a time (the connection's), kept behind a mutex because the
    /// response crosses threads (a parked answer) before it is read.
    private let produce: Mutex<() throws(CartographError) -> [UInt8]?>

    /// - Parameter produce: the next piece, nil at the end; called until it returns nil or throws.
    public init(_ produce: sending @escaping () throws(CartographError) -> [UInt8]?) {
        self.produce = Mutex(produce)
    }

    /// The next piece of the body, nil once it is complete.
    public func next() throws(CartographError) -> [UInt8]? {
        try produce.withLock { (produce) throws(CartographError) -> [UInt8]? in try produce() }
    }

    /// The same pieces, with `report` told of the failure that ends the stream early (the request's log line
    /// was written with its status when the headers went).
    func reportingFailure(_ report: @escaping @Sendable (CartographError) -> Void) -> ResponseStream {
        ResponseStream { () throws(CartographError) -> [UInt8]? in
            do throws(CartographError) { return try self.next() } catch {
                report(error)
                throw error
            }
        }
    }
}
