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

    /// Connections by handle, in shards each with its own lock: every request marks its connection twice
    /// (head received, request completed), and with one lock the daemon threads queued on it (4% of a
    /// get's CPU went to spinning for it). A lock also orders a shutdown against MHD's close
    /// notification: MHD notifies before it closes the socket, so a socket shut down here is never one it
    /// reused.
    private final class Shard: Sendable {
        let connections = Mutex<[UInt: Waiting]>([:])
    }

    private static let shardCount = 16
    private let shards = (0..<HeadDeadlines.shardCount).map { _ in Shard() }

    /// The shard of a connection handle (a pointer: its low bits are alignment, so they are mixed in).
    private func shard(_ connection: UInt) -> Shard {
        shards[Int(truncatingIfNeeded: (UInt64(connection) &* 0x9E37_79B9_7F4A_7C15) >> 60) % Self.shardCount]
    }

    func opened(_ connection: UInt, socket: Int32) {
        guard socket >= 0 else { return }
        shard(connection).connections.withLock { $0[connection] = Waiting(socket: socket, since: .now) }
    }

    func headReceived(_ connection: UInt) { shard(connection).connections.withLock { $0[connection]?.since = nil } }

    func requestCompleted(_ connection: UInt) { shard(connection).connections.withLock { $0[connection]?.since = .now } }

    func closed(_ connection: UInt) { shard(connection).connections.withLock { _ = $0.removeValue(forKey: connection) } }

    /// Shuts down every connection that has waited for a head longer than `timeout`; returns how many.
    @discardableResult
    func closeExpired(timeout: Duration, now: ContinuousClock.Instant = .now) -> Int {
        shards.reduce(0) { closed, shard in
            closed + shard.connections.withLock { connections in
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
}
