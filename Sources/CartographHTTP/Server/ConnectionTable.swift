// The server's open connections, for the connection limit and the per-address limit (R-S2): the server
// runs one libmicrohttpd daemon per request thread, and a daemon's own limits would count only its share.
import Synchronization

/// Open connections, in total and by client IPv4 address.
final class ConnectionTable: Sendable {
    private struct Counts {
        var byAddress: [UInt32: Int] = [:]
        var addressOf: [UInt: UInt32] = [:]
    }
    private let counts = Mutex(Counts())

    /// Whether another connection from `address` fits: fewer than `limit` open, and fewer than
    /// `perAddressLimit` from that address (0: no such limit). Connections the daemons are accepting at
    /// this moment are not counted yet, so a burst may pass a limit by one per daemon.
    func admits(_ address: UInt32, limit: Int, perAddressLimit: Int) -> Bool {
        counts.withLock { counts in
            counts.addressOf.count < limit && (perAddressLimit == 0 || counts.byAddress[address, default: 0] < perAddressLimit)
        }
    }

    /// A daemon opened connection `key` from `address`.
    func opened(_ key: UInt, address: UInt32) {
        counts.withLock { counts in
            counts.addressOf[key] = address
            counts.byAddress[address, default: 0] += 1
        }
    }

    /// Connection `key` closed.
    func closed(_ key: UInt) {
        counts.withLock { counts in
            guard let address = counts.addressOf.removeValue(forKey: key) else { return }
            let left = counts.byAddress[address, default: 1] - 1
            counts.byAddress[address] = left > 0 ? left : nil
        }
    }
}
