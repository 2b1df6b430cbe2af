// Tenants and their API keys, kept in `control.sqlite` and mirrored in memory so that
// authenticating a request costs a dictionary lookup, not a query.
public import Foundation
import Synchronization
public import CartographCore

/// What a tenant API key may do; each scope includes the ones below it (admin ⊇ write ⊇ read).
public enum KeyScope: String, Sendable, Comparable, CaseIterable {
    case read, write, admin

    private var rank: Int { switch self { case .read: 0; case .write: 1; case .admin: 2 } }
    public static func < (a: KeyScope, b: KeyScope) -> Bool { a.rank < b.rank }
}

/// A tenant as listed by the control plane.
public struct Tenant: Sendable, Equatable {
    public let id: String
    public let createdAt: Date
    /// The admin's overrides of the server's limits (R-S2).
    public var limits = TenantLimits()
}

/// Per-tenant overrides of the server's default limits (R-S2), set by the admin. Each nil means
/// "the server's default"; a 0 in `requestsPerSecond`, `maxStoreBytes` or `maxModels` means "no limit
/// for this tenant" (as 0 does in the server's flags).
public struct TenantLimits: Sendable, Equatable {
    /// Requests per second the tenant's keys may make (token bucket refill rate).
    public var requestsPerSecond: Double?
    /// Requests the tenant may make at once (token bucket size).
    public var burst: Int?
    /// Bytes the tenant's stores may hold together.
    public var maxStoreBytes: Int64?
    /// Models the tenant may register.
    public var maxModels: Int?

    public init(requestsPerSecond: Double? = nil, burst: Int? = nil, maxStoreBytes: Int64? = nil, maxModels: Int? = nil) {
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
        self.maxStoreBytes = maxStoreBytes
        self.maxModels = maxModels
    }

    /// True when every limit is the server's default.
    public var isDefault: Bool { self == TenantLimits() }
}

/// An API key's public description (never its secret).
public struct APIKeyInfo: Sendable, Equatable {
    public let id: String
    public let tenantID: String
    public let scope: KeyScope
    public let createdAt: Date
}

/// A newly created key, with the token shown to the client exactly once.
public struct CreatedAPIKey: Sendable {
    public let info: APIKeyInfo
    public let token: String
}

/// The control database. Thread-safe: every access holds one lock.
public final class ControlStore: Sendable {
    struct KeyRecord {
        var info: APIKeyInfo
        var secretHash: [UInt8]
        /// The secret last presented that matched `secretHash`: a client sends the same token on every
        /// request, and comparing with it (in constant time) spares hashing it each time. Kept in memory
        /// only, and gone with the record when the key is revoked.
        var verifiedSecret: [UInt8]?
    }

    /// Internal, not private: the webhooks' tables (ControlStore+Webhooks) live in the same database.
    struct State: ~Copyable {
        let connection: SQLiteConnection
        var tenants: [String: Tenant]
        var keys: [String: KeyRecord]
    }

    let state: Mutex<State>
    private let directory: DataDirectory
    /// The time of day tenants, keys and webhooks are created at.
    let clock: WallClock

    /// Opens (creating if needed) the control database in `directory`.
    public init(directory: DataDirectory, synchronous: SQLiteSynchronous = .normal, clock: WallClock = .system) throws(CartographError) {
        self.directory = directory
        self.clock = clock
        try directory.prepare()
        do {
            let connection = try SQLiteConnection(path: directory.controlDatabase.path, synchronous: synchronous)
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS tenants (
                    id TEXT PRIMARY KEY NOT NULL,
                    created_at REAL NOT NULL
                );
                CREATE TABLE IF NOT EXISTS api_keys (
                    id TEXT PRIMARY KEY NOT NULL,
                    tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                    scope TEXT NOT NULL,
                    secret_sha256 BLOB NOT NULL,
                    created_at REAL NOT NULL
                );
                \(Self.limitsSchema)
                \(Self.webhooksSchema)
                """)
            var tenants: [String: Tenant] = [:]
            for row in try connection.rows("SELECT id, created_at FROM tenants") {
                let id = row[0].textValue ?? ""
                tenants[id] = Tenant(id: id, createdAt: Date(timeIntervalSince1970: row[1].realValue ?? 0))
            }
            for row in try connection.rows(
                "SELECT tenant_id, requests_per_second, burst, max_store_bytes, max_models FROM tenant_limits") {
                guard let id = row[0].textValue, tenants[id] != nil else { continue }
                tenants[id]?.limits = TenantLimits(
                    requestsPerSecond: row[1].realValue, burst: row[2].integerValue.map(Int.init),
                    maxStoreBytes: row[3].integerValue, maxModels: row[4].integerValue.map(Int.init))
            }
            var keys: [String: KeyRecord] = [:]
            for row in try connection.rows("SELECT id, tenant_id, scope, secret_sha256, created_at FROM api_keys") {
                let info = APIKeyInfo(
                    id: row[0].textValue ?? "", tenantID: row[1].textValue ?? "",
                    scope: KeyScope(rawValue: row[2].textValue ?? "") ?? .read,
                    createdAt: Date(timeIntervalSince1970: row[4].realValue ?? 0))
                keys[info.id] = KeyRecord(info: info, secretHash: row[3].blobValue ?? [])
            }
            state = Mutex(State(connection: connection, tenants: tenants, keys: keys))
        } catch {
            throw CartographError.store(error, "Cannot open the control database")
        }
    }

    // MARK: Tenants

    /// Creates a tenant and its first admin-scope key. 409 if the id is taken.
    public func createTenant(id: String) throws(CartographError) -> CreatedAPIKey {
        let now = clock.now()
        let created = try state.withLock { (state) throws(CartographError) -> CreatedAPIKey in
            guard state.tenants[id] == nil else {
                throw CartographError(.conflict, "A tenant named '\(id)' already exists.")
            }
            // A directory of a tenant that does not exist is left over from a deletion interrupted after
            // its row was deleted (R-S4): a new tenant of the same name must not inherit its stores (R-S1).
            let leftover = directory.tenantDirectory(id)
            if FileManager.default.fileExists(atPath: leftover.path) {
                do { try FileManager.default.removeItem(at: leftover) } catch {
                    throw CartographError(.internalError, "Cannot remove the leftover directory of a deleted tenant '\(id)'.", underlying: error)
                }
            }
            let key = PresentedAPIKey.generate()
            let info = APIKeyInfo(id: key.keyID, tenantID: id, scope: .admin, createdAt: now)
            do {
                _ = try state.connection.transaction { () throws(SQLiteError) in
                    try state.connection.run("INSERT INTO tenants (id, created_at) VALUES (?, ?)",
                                             [.text(id), .real(now.timeIntervalSince1970)])
                    try Self.insert(info, secretHash: SecretHash.sha256(key.secret), into: state.connection)
                }
            } catch {
                throw CartographError.store(error, "Cannot create tenant '\(id)'")
            }
            state.tenants[id] = Tenant(id: id, createdAt: now)
            state.keys[info.id] = KeyRecord(info: info, secretHash: SecretHash.sha256(key.secret))
            return CreatedAPIKey(info: info, token: key.token)
        }
        try directory.prepareTenantDirectory(id)
        return created
    }

    /// All tenants, ordered by id.
    public func tenants() -> [Tenant] {
        state.withLock { $0.tenants.values.sorted { $0.id < $1.id } }
    }

    /// One tenant, or nil.
    public func tenant(_ id: String) -> Tenant? { state.withLock { $0.tenants[id] } }

    /// Replaces a tenant's limits (R-S2) and returns the tenant. 404 if unknown. Limits that are all
    /// the server's defaults leave no row behind.
    public func setLimits(_ limits: TenantLimits, tenantID: String) throws(CartographError) -> Tenant {
        try state.withLock { (state) throws(CartographError) -> Tenant in
            guard var tenant = state.tenants[tenantID] else { throw CartographError(.notFound, "No tenant named '\(tenantID)'.") }
            do {
                if limits.isDefault {
                    try state.connection.run("DELETE FROM tenant_limits WHERE tenant_id = ?", [.text(tenantID)])
                } else {
                    try state.connection.run(
                        """
                        INSERT OR REPLACE INTO tenant_limits (tenant_id, requests_per_second, burst, max_store_bytes, max_models)
                        VALUES (?, ?, ?, ?, ?)
                        """,
                        [.text(tenantID), limits.requestsPerSecond.map { .real($0) } ?? .null, limits.burst.map { .integer(Int64($0)) } ?? .null,
                         limits.maxStoreBytes.map { .integer($0) } ?? .null, limits.maxModels.map { .integer(Int64($0)) } ?? .null])
                }
            } catch {
                throw CartographError.store(error, "Cannot store the limits of tenant '\(tenantID)'")
            }
            tenant.limits = limits
            state.tenants[tenantID] = tenant
            return tenant
        }
    }

    /// Deletes a tenant, its keys and its directory of stores. 404 if unknown.
    public func deleteTenant(_ id: String) throws(CartographError) {
        try state.withLock { (state) throws(CartographError) in
            guard state.tenants[id] != nil else { throw CartographError(.notFound, "No tenant named '\(id)'.") }
            do {
                try state.connection.run("DELETE FROM tenants WHERE id = ?", [.text(id)])
            } catch {
                throw CartographError.store(error, "Cannot delete tenant '\(id)'")
            }
            state.tenants[id] = nil
            state.keys = state.keys.filter { $0.value.info.tenantID != id }
        }
        try? FileManager.default.removeItem(at: directory.tenantDirectory(id))
    }

    // MARK: Keys

    /// Creates a key of `scope` for an existing tenant.
    public func createKey(tenantID: String, scope: KeyScope) throws(CartographError) -> CreatedAPIKey {
        let now = clock.now()
        return try state.withLock { (state) throws(CartographError) -> CreatedAPIKey in
            guard state.tenants[tenantID] != nil else { throw CartographError(.notFound, "No tenant named '\(tenantID)'.") }
            let key = PresentedAPIKey.generate()
            let info = APIKeyInfo(id: key.keyID, tenantID: tenantID, scope: scope, createdAt: now)
            let hash = SecretHash.sha256(key.secret)
            do {
                try Self.insert(info, secretHash: hash, into: state.connection)
            } catch {
                throw CartographError.store(error, "Cannot create a key for '\(tenantID)'")
            }
            state.keys[info.id] = KeyRecord(info: info, secretHash: hash)
            return CreatedAPIKey(info: info, token: key.token)
        }
    }

    /// A tenant's keys, oldest first.
    public func keys(tenantID: String) -> [APIKeyInfo] {
        state.withLock { state in
            state.keys.values.map(\.info).filter { $0.tenantID == tenantID }
                .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    /// Revokes (deletes) a key of a tenant. 404 if the tenant has no such key.
    public func revokeKey(tenantID: String, keyID: String) throws(CartographError) {
        try state.withLock { (state) throws(CartographError) in
            guard let record = state.keys[keyID], record.info.tenantID == tenantID else {
                throw CartographError(.notFound, "Tenant '\(tenantID)' has no key '\(keyID)'.")
            }
            do {
                try state.connection.run("DELETE FROM api_keys WHERE id = ?", [.text(keyID)])
            } catch {
                throw CartographError.store(error, "Cannot revoke key '\(keyID)'")
            }
            state.keys[keyID] = nil
        }
    }

    /// The key a bearer token stands for, if the token is a live key with the right secret.
    public func authenticate(_ key: PresentedAPIKey) -> APIKeyInfo? {
        let presented = Array(key.secret.utf8)
        let verified = state.withLock { state -> APIKeyInfo? in
            guard let record = state.keys[key.keyID], let secret = record.verifiedSecret,
                  SecretHash.constantTimeMatches(presented, secret: secret) else { return nil }
            return record.info
        }
        if let verified { return verified }
        let presentedHash = SecretHash.sha256(bytes: presented)
        return state.withLock { state in
            guard let record = state.keys[key.keyID],
                  SecretHash.constantTimeMatches(presentedHash, secret: record.secretHash) else { return nil }
            state.keys[key.keyID]?.verifiedSecret = presented
            return record.info
        }
    }

    /// Limits live in their own table, so a control database from before limits existed gains it on
    /// open (CREATE … IF NOT EXISTS: no ALTER, nothing to migrate) and an older server ignores it.
    /// The row goes with its tenant (foreign keys are on).
    static let limitsSchema = """
        CREATE TABLE IF NOT EXISTS tenant_limits (
            tenant_id TEXT PRIMARY KEY NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            requests_per_second REAL,
            burst INTEGER,
            max_store_bytes INTEGER,
            max_models INTEGER
        );
        """

    private static func insert(_ info: APIKeyInfo, secretHash: [UInt8], into connection: SQLiteConnection) throws(SQLiteError) {
        try connection.run(
            "INSERT INTO api_keys (id, tenant_id, scope, secret_sha256, created_at) VALUES (?, ?, ?, ?, ?)",
            [.text(info.id), .text(info.tenantID), .text(info.scope.rawValue), .blob(secretHash),
             .real(info.createdAt.timeIntervalSince1970)])
    }
}
