// Storage faults per store (docs/errors.md#storage-faults): which stores last failed with a full disk, a file that cannot be
// written, or a damaged file. `/readyz` lists them; a damaged store answers no more requests until the
// server restarts (after an operator restored its file, R-S12); the others clear on the store's next write.
import Foundation
import Synchronization
import Logging
import CartographCore
import CartographStore

final class StoreFaults: Sendable {
    struct Fault: Sendable {
        let error: CartographError
        let since: Date
    }

    /// By "tenant/model".
    private let faults = Mutex<[String: Fault]>([:])
    private let stores: StoreRegistry
    private let logger: Logger
    /// The time of day a fault is listed `since`.
    private let clock: WallClock

    init(stores: StoreRegistry, logger: Logger, clock: WallClock) {
        self.stores = stores
        self.logger = logger
        self.clock = clock
    }

    /// Records a store's fault for `/readyz` and logs it with the store's file and the fault's cause; a store
    /// that could not be written is closed, so that a later request opens it again (SQLite opens a file it
    /// cannot write read-only, and stays so).
    func note(_ error: CartographError, tenant: String, model: String, requestID: String) {
        faults.withLock { faults in
            // A damaged file stays damaged: a later, milder fault does not hide it.
            if faults["\(tenant)/\(model)"]?.error.code == .storeCorrupt { return }
            faults["\(tenant)/\(model)"] = Fault(error: error, since: clock.now())
        }
        logger.error("storage fault", metadata: error.faultLogMetadata(requestID: requestID)
            .merging(["store": "\(stores.path(tenant: tenant, model: model))"]) { $1 })
        if error.code == .storeUnavailable { stores.closeStore(tenant: tenant, model: model) }
    }

    /// A write succeeded: the disk has room and the file can be written again.
    func cleared(tenant: String, model: String) {
        faults.withLock { faults in
            guard let fault = faults["\(tenant)/\(model)"], fault.error.code != .storeCorrupt else { return }
            faults["\(tenant)/\(model)"] = nil
        }
    }

    /// The error every request to a damaged store answers without touching it: what it would read may be
    /// damaged too, and what it would write would land in a damaged file.
    func refusal(tenant: String, model: String) -> CartographError? {
        faults.withLock { faults in
            guard let fault = faults["\(tenant)/\(model)"], fault.error.code == .storeCorrupt else { return nil }
            return fault.error
        }
    }

    /// `[{"tenant", "model", "problem", "detail", "since"}]`, for `/readyz`.
    var report: [JSONValue] {
        faults.withLock { faults in
            faults.sorted { $0.key < $1.key }.map { key, fault in
                let parts = key.split(separator: "/", maxSplits: 1).map(String.init)
                return .object(JSONObject([
                    ("tenant", .string(parts[0])), ("model", .string(parts.count > 1 ? parts[1] : "")),
                    ("problem", .string(fault.error.code.problemType)), ("detail", .string(fault.error.detail)),
                    ("since", .string(ISO8601DateFormatter().string(from: fault.since))),
                ]))
            }
        }
    }
}
