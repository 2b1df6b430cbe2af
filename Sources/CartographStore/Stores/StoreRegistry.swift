// Opens model stores lazily and closes them when idle, so a server with thousands of tenants does
// not hold thousands of open files. One `ModelStore` per (tenant, model) at a time: registration and
// writes to a store are therefore serialized by that store (R-S3).
import Foundation
import Synchronization
public import CartographCore

/// The open stores of every tenant.
public final class StoreRegistry: Sendable {
    private let directory: DataDirectory
    private let synchronous: SQLiteSynchronous
    private let maxOpenStores: Int
    private let readersPerStore: Int
    /// The time of day every store it opens reads.
    private let clock: WallClock
    private let open = Mutex<[String: ModelStore]>([:])
    /// Bytes in use per model store of each tenant that has had a quota check (R-S2), for the stores
    /// that are not open: the value a store had when it closed, or for one not opened since start-up
    /// its file sizes. An open store's own `usedBytes` wins over the entry. Lock order: `open`, then this.
    private let closedSizes = Mutex<[String: [String: Int64]]>([:])
    /// Told of each store that opened as a restored older copy, with a new epoch (R-D7).
    private let restoredCopyOpened: @Sendable (ModelStore) -> Void

    /// - Parameters:
    ///   - readersPerStore: read connections each open store keeps idle: the server's thread count.
    ///   - clock: the time of day of every store it opens (their writes, registrations and snapshot sessions).
    ///   - restoredCopyOpened: called with each store that opened as a restored older copy (the server logs
    ///     it for the operator), under the registry's lock.
    public init(directory: DataDirectory, synchronous: SQLiteSynchronous = .normal, maxOpenStores: Int = 256, readersPerStore: Int = 8,
                clock: WallClock = .system, restoredCopyOpened: @escaping @Sendable (ModelStore) -> Void = { _ in }) {
        self.directory = directory
        self.clock = clock
        self.synchronous = synchronous
        self.maxOpenStores = maxOpenStores
        self.readersPerStore = readersPerStore
        self.restoredCopyOpened = restoredCopyOpened
    }

    private func file(tenant: String, model: String) -> URL {
        precondition(Names.isResourceName(model), "model names must be validated before they become paths")
        return directory.tenantDirectory(tenant).appendingPathComponent("\(model).sqlite")
    }

    /// The store of an existing model, opened if needed; nil when the tenant has no such model.
    public func store(tenant: String, model: String) throws(CartographError) -> ModelStore? {
        try store(tenant: tenant, model: model, create: false)
    }

    /// The store for registering `model` (created when missing). With `maxModels`, creating the
    /// tenant's model number `maxModels + 1` is refused with a quota error (R-S2); the count and the
    /// creation happen under one lock, so concurrent registrations cannot both slip past it.
    public func storeForRegistration(tenant: String, model: String, maxModels: Int? = nil) throws(CartographError) -> ModelStore {
        guard let store = try store(tenant: tenant, model: model, create: true, maxModels: maxModels) else {
            throw CartographError(.internalError, "Cannot create the store of model '\(model)'.")
        }
        return store
    }

    private func store(tenant: String, model: String, create: Bool, maxModels: Int? = nil) throws(CartographError) -> ModelStore? {
        let key = "\(tenant)/\(model)"
        if let store = open.withLock({ $0[key] }) { return store }  // the common case: no path, no file system
        let path = file(tenant: tenant, model: model).path
        return try open.withLock { (open) throws(CartographError) -> ModelStore? in
            if let store = open[key] { return store }
            let exists = FileManager.default.fileExists(atPath: path)
            guard create || exists else { return nil }
            if !exists, let maxModels {
                let count = modelNames(tenant: tenant).count
                guard count < maxModels else {
                    throw CartographError(.quotaExceeded, "Tenant '\(tenant)' may have at most \(maxModels) models and has \(count): "
                                          + "delete a model, or ask the operator to raise the tenant's maxModels.")
                }
            }
            if create {
                // The tenant's directory is made after its row commits (ControlStore.createTenant); a crash
                // in between leaves a tenant without one, which its first model registration repairs (R-S4).
                try directory.prepareTenantDirectory(tenant)
            }
            if open.count >= maxOpenStores, let coldest = open.min(by: { $0.value.lastUsedSeconds < $1.value.lastUsedSeconds }) {
                open[coldest.key] = nil
                rememberSize(of: coldest.key, coldest.value.usedBytes)
            }
            let store = try ModelStore(name: model, path: path, synchronous: synchronous, checkpointsInBackground: true,
                                       idleReaders: readersPerStore, detectsRestoredCopies: true, clock: clock)
            if store.replacedEpoch != nil { restoredCopyOpened(store) }
            open[key] = store
            if !exists { rememberSize(of: key, store.usedBytes) }
            return store
        }
    }

    /// Records a store's bytes for its tenant's quota checks, if that tenant's sizes are being kept.
    private func rememberSize(of key: String, _ bytes: Int64) {
        let parts = key.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return }
        closedSizes.withLock { sizes in
            if sizes[parts[0]] != nil { sizes[parts[0]]?[parts[1]] = bytes }
        }
    }

    /// The bytes in use in each of a tenant's model stores (R-S2 quotas, `usage` of the tenant): an
    /// open store's `usedBytes`, else the last known value. The first call for a tenant reads the sizes
    /// of its store files (database and WAL) once; afterwards this costs two dictionary walks.
    public func storeBytes(tenant: String) -> [String: Int64] {
        var sizes = closedSizes.withLock { sizes in
            if let known = sizes[tenant] { return known }
            var scanned: [String: Int64] = [:]
            for model in modelNames(tenant: tenant) {
                scanned[model] = bytesOnDisk(tenant: tenant, model: model)
            }
            sizes[tenant] = scanned
            return scanned
        }
        open.withLock { open in
            for model in sizes.keys { if let store = open["\(tenant)/\(model)"] { sizes[model] = store.usedBytes } }
        }
        return sizes
    }

    /// The names of a tenant's models (those with a registered schema), sorted.
    public func modelNames(tenant: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.tenantDirectory(tenant).path)) ?? []
        return names.filter { $0.hasSuffix(".sqlite") }.map { String($0.dropLast(7)) }.filter(Names.isResourceName).sorted()
    }

    /// `No model 'blgo' in tenant 'acme'; did you mean 'blog'? (models: blog, shop)`.
    public func unknownModel(_ name: String, tenant: String) -> CartographError {
        CartographError(.notFound, "No model '\(name)' in tenant '\(tenant)'"
            + NameSuggestion.hint(for: name, among: modelNames(tenant: tenant), kind: "models") + ".")
    }

    /// Closes and deletes a model's store files. 404 when it does not exist.
    public func deleteModel(tenant: String, model: String) throws(CartographError) {
        let url = file(tenant: tenant, model: model)
        try open.withLock { (open) throws(CartographError) in
            guard open["\(tenant)/\(model)"] != nil || FileManager.default.fileExists(atPath: url.path) else {
                throw unknownModel(model, tenant: tenant)
            }
            open["\(tenant)/\(model)"] = nil
            for suffix in ["", "-wal", "-shm", StoreInstance.sidecarSuffix] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
            closedSizes.withLock { _ = $0[tenant]?.removeValue(forKey: model) }
        }
    }

    /// Closes one store: the next request opens its file again.
    public func closeStore(tenant: String, model: String) {
        _ = open.withLock { $0.removeValue(forKey: "\(tenant)/\(model)") }
    }

    /// The file of a model's store.
    public func path(tenant: String, model: String) -> String { file(tenant: tenant, model: model).path }

    /// Closes every open store of a tenant (before its directory is removed).
    public func closeStores(tenant: String) {
        open.withLock { open in open = open.filter { !$0.key.hasPrefix("\(tenant)/") } }
        closedSizes.withLock { $0[tenant] = nil }
    }

    /// Closes stores unused for `seconds`; returns how many were closed.
    @discardableResult
    public func closeIdleStores(olderThan seconds: Int64) -> Int {
        let cutoff = ModelStore.monotonicSeconds() - seconds
        return open.withLock { open in
            let before = open.count
            for (key, store) in open where store.lastUsedSeconds < cutoff { rememberSize(of: key, store.usedBytes) }
            open = open.filter { $0.value.lastUsedSeconds >= cutoff }
            return before - open.count
        }
    }

    /// The size on disk (database and WAL) of every model store of `tenants`, open or not, for the
    /// `cartograph_store_bytes` metric: a directory listing per tenant and two `stat`s per store.
    public func storeSizesOnDisk(tenants: [String]) -> [(tenant: String, model: String, bytes: Int64)] {
        tenants.flatMap { tenant in
            modelNames(tenant: tenant).map { model in (tenant, model, bytesOnDisk(tenant: tenant, model: model)) }
        }
    }

    /// The sizes of a store's database and WAL files.
    private func bytesOnDisk(tenant: String, model: String) -> Int64 {
        let path = file(tenant: tenant, model: model).path
        return ["", "-wal"].reduce(Int64(0)) { total, suffix in
            total + ((try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? NSNumber)?.int64Value ?? 0)
        }
    }

    /// How many stores are open.
    public var openStoreCount: Int { open.withLock { $0.count } }
}
