// Slow request heads (R-S2, docs/configuration.md): libmicrohttpd's connection timeout counts idle time only, so a
// client sending one header byte every few seconds keeps its connection, and enough such clients hold
// every slot. A request head must arrive whole within the connection timeout: this tracks when each
// connection began waiting for a head (opened, or its last request completed) and shuts down the socket
// of one that is still waiting past the timeout. MHD then sees the connection end and closes it as it
// closes any other (the fd is never closed here).
import Foundation
import Synchronization

final class HeadDeadlines: Sendable {
    /// A connection's socket, and since when it has been waiting for a request head (nil while a request
    /// is read or answered, long polls included).
    private struct Waiting {
        let socket: Int32
        var since: ContinuousClock.Instant?
    }

    /// By connection handle. The lock also orders a shutdown against MHD's close notification: MHD
    /// notifies before it closes the socket, so a socket shut down here is never one it reused.
    private let connections = Mutex<[UInt: Waiting]>([:])

    func opened(_ connection: UInt, socket: Int32) {
        guard socket >= 0 else { return }
        connections.withLock { $0[connection] = Waiting(socket: socket, since: .now) }
    }

    func headReceived(_ connection: UInt) { connections.withLock { $0[connection]?.since = nil } }

    func requestCompleted(_ connection: UInt) { connections.withLock { $0[connection]?.since = .now } }

    func closed(_ connection: UInt) { connections.withLock { _ = $0.removeValue(forKey: connection) } }

    /// Shuts down every connection that has waited for a head longer than `timeout`; returns how many.
    @discardableResult
    func closeExpired(timeout: Duration, now: ContinuousClock.Instant = .now) -> Int {
        connections.withLock { connections in
            var closed = 0
            for (key, waiting) in connections {
                guard let since = waiting.since, now - since > timeout else { continue }
                shutdown(waiting.socket, Int32(SHUT_RDWR))
                connections[key]?.since = nil  // once: MHD's close notification removes it
                closed += 1
            }
            return closed
        }
    }
}
