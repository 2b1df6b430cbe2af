// Tenants and keys in the control database: hashing, persistence, revocation, isolation.
import Foundation
import Testing
import CartographCore
@testable import CartographStore

struct ControlStoreTests {
    let directory: DataDirectory

    init() {
        directory = DataDirectory(path: FileManager.default.temporaryDirectory
            .appendingPathComponent("cartograph-control-\(UUID().uuidString)").path)
    }

    @Test func createdKeyAuthenticatesWithItsScopeAndTenant() throws {
        let store = try ControlStore(directory: directory)
        let created = try store.createTenant(id: "acme")
        let presented = try #require(PresentedAPIKey(created.token))
        let info = try #require(store.authenticate(presented))
        #expect(info.tenantID == "acme")
        #expect(info.scope == .admin)
        #expect(FileManager.default.fileExists(atPath: directory.tenantDirectory("acme").path))
    }

    @Test func keysAreStoredOnlyAsHashes() throws {
        let store = try ControlStore(directory: directory)
        let created = try store.createTenant(id: "acme")
        let secret = try #require(PresentedAPIKey(created.token)).secret
        let connection = try SQLiteConnection(path: directory.controlDatabase.path)
        let rows = try connection.rows("SELECT secret_sha256 FROM api_keys")
        #expect(rows.count == 1)
        #expect(rows[0][0] == .blob(SecretHash.sha256(secret)))
        // The secret appears nowhere in the database file or its WAL.
        for suffix in ["", "-wal"] {
            let bytes = FileManager.default.contents(atPath: directory.controlDatabase.path + suffix) ?? Data()
            #expect(bytes.range(of: Data(secret.utf8)) == nil)
        }
    }

    @Test func wrongSecretOrUnknownKeyDoesNotAuthenticate() throws {
        let store = try ControlStore(directory: directory)
        let created = try store.createTenant(id: "acme")
        let presented = try #require(PresentedAPIKey(created.token))
        let wrongSecret = PresentedAPIKey(keyID: presented.keyID, secret: String(repeating: "0", count: 64))
        #expect(store.authenticate(wrongSecret) == nil)
        let unknownID = PresentedAPIKey(keyID: "00000000", secret: presented.secret)
        #expect(store.authenticate(unknownID) == nil)
    }

    /// A key's secret, once verified, is compared with the secret presented instead of hashing it
    /// again: any other secret for the key is still refused, and revoking it still ends it.
    @Test func aKeyAuthenticatedBeforeStillRefusesOtherSecretsAndStopsWorkingWhenRevoked() throws {
        let store = try ControlStore(directory: directory)
        _ = try store.createTenant(id: "acme")
        let created = try store.createKey(tenantID: "acme", scope: .read)
        let presented = try #require(PresentedAPIKey(created.token))
        for _ in 0..<3 { #expect(store.authenticate(presented)?.id == created.info.id) }
        var near = Array(presented.secret.utf8)
        near[63] = near[63] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        #expect(store.authenticate(PresentedAPIKey(keyID: presented.keyID, secret: String(decoding: near, as: UTF8.self))) == nil)
        #expect(store.authenticate(presented)?.id == created.info.id, "a refused secret leaves the verified one alone")
        try store.revokeKey(tenantID: "acme", keyID: created.info.id)
        #expect(store.authenticate(presented) == nil)
    }

    @Test func revokedKeyStopsWorkingAndSurvivesRestart() throws {
        let store = try ControlStore(directory: directory)
        _ = try store.createTenant(id: "acme")
        let reader = try store.createKey(tenantID: "acme", scope: .read)
        let writer = try store.createKey(tenantID: "acme", scope: .write)
        try store.revokeKey(tenantID: "acme", keyID: reader.info.id)
        #expect(store.authenticate(try #require(PresentedAPIKey(reader.token))) == nil)
        #expect(store.keys(tenantID: "acme").map { $0.scope } == [.admin, .write])

        let reopened = try ControlStore(directory: directory)
        #expect(reopened.tenants().map { $0.id } == ["acme"])
        #expect(reopened.authenticate(try #require(PresentedAPIKey(reader.token))) == nil)
        #expect(reopened.authenticate(try #require(PresentedAPIKey(writer.token)))?.scope == .write)
    }

    @Test func revokingAnotherTenantsKeyIsNotFound() throws {
        let store = try ControlStore(directory: directory)
        let acme = try store.createTenant(id: "acme")
        _ = try store.createTenant(id: "globex")
        #expect(throws: CartographError.self) { try store.revokeKey(tenantID: "globex", keyID: acme.info.id) }
        #expect(store.authenticate(try #require(PresentedAPIKey(acme.token))) != nil)
    }

    @Test func duplicateTenantIsAConflict() throws {
        let store = try ControlStore(directory: directory)
        _ = try store.createTenant(id: "acme")
        #expect {
            _ = try store.createTenant(id: "acme")
        } throws: { error in
            (error as? CartographError)?.code == .conflict
        }
        #expect(store.tenants().count == 1)
    }

    @Test func deletingATenantRemovesItsKeysAndDirectory() throws {
        let store = try ControlStore(directory: directory)
        let created = try store.createTenant(id: "acme")
        _ = FileManager.default.createFile(atPath: directory.tenantDirectory("acme").appendingPathComponent("x.sqlite").path, contents: Data([1]))
        try store.deleteTenant("acme")
        #expect(store.tenant("acme") == nil)
        #expect(store.authenticate(try #require(PresentedAPIKey(created.token))) == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.tenantDirectory("acme").path))
        let reopened = try ControlStore(directory: directory)
        #expect(reopened.tenants().isEmpty)
    }

    @Test func generatedAdminTokenIsPrivateAndStable() throws {
        try directory.prepare()
        let first = try directory.adminToken(configured: nil)
        #expect(first.generated)
        #expect(first.token.count > 40)
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.adminTokenFile.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let second = try directory.adminToken(configured: nil)
        #expect(second.token == first.token)
        #expect(!second.generated)
        #expect(try directory.adminToken(configured: "flag-token").token == "flag-token")
    }

    @Test(arguments: ["", "cg_", "cg_abc", "cg_abc_short", "xx_0011_" + String(repeating: "a", count: 64),
                      "cg_ABCD_" + String(repeating: "a", count: 64), "cg_ab_cd_" + String(repeating: "a", count: 64)])
    func malformedTokensAreNotKeys(token: String) {
        #expect(PresentedAPIKey(token) == nil)
    }

    @Test func constantTimeEqualityIsEquality() {
        #expect(SecretHash.constantTimeMatches([1, 2, 3], secret: [1, 2, 3]))
        #expect(!SecretHash.constantTimeMatches([1, 2, 3], secret: [1, 2, 4]))
        #expect(!SecretHash.constantTimeMatches([1, 2], secret: [1, 2, 3]), "a prefix of the secret")
        #expect(!SecretHash.constantTimeMatches([1, 2, 3, 0], secret: [1, 2, 3]), "the secret and more")
        #expect(!SecretHash.constantTimeMatches([], secret: [1]))
    }

    @Test func constantTimeMatchingIsEqualityWhateverThePresentedLength() {
        let secret = Array("cga_0123".utf8)
        #expect(SecretHash.constantTimeMatches(Array("cga_0123".utf8), secret: secret))
        #expect(!SecretHash.constantTimeMatches(Array("cga_0124".utf8), secret: secret))
        #expect(!SecretHash.constantTimeMatches(Array("cga_012".utf8), secret: secret))
        #expect(!SecretHash.constantTimeMatches(Array("cga_01234".utf8), secret: secret))
        #expect(!SecretHash.constantTimeMatches([], secret: secret))
        // Bytes past the secret's length that are all zero still make a longer token differ.
        #expect(!SecretHash.constantTimeMatches(secret + [0], secret: secret))
        #expect(SecretHash.constantTimeMatches([], secret: []))
    }
}

struct SQLiteConnectionTests {
    @Test func transactionRollsBackWhenTheBodyThrows() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t (x INTEGER)")
        struct Boom: Error {}
        #expect(throws: TransactionError<Boom>.self) {
            try connection.transaction { () throws(Boom) in
                try? connection.run("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(try connection.rows("SELECT count(*) FROM t") == [[.integer(0)]])
    }

    @Test func valuesRoundTripThroughEveryStorageClass() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t (a, b, c, d, e)")
        let values: [SQLiteValue] = [.null, .integer(Int64.min), .real(1.5), .text("é'; DROP TABLE t; --"), .blob([0, 255])]
        try connection.run("INSERT INTO t VALUES (?, ?, ?, ?, ?)", values)
        #expect(try connection.rows("SELECT * FROM t") == [values])
    }

    /// Found by the hostile-input sweep: text was bound up to its first NUL, so "a\0b" was stored as
    /// "a", and two identities "a\0b" and "a\0c" became one.
    @Test func R_Q2_textWithNULsIsBoundWhole() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("CREATE TABLE t (v TEXT)")
        for text in ["a\u{0}b", "a\u{0}c", "\u{0}", ""] { try connection.run("INSERT INTO t VALUES (?)", [.text(text)]) }
        let stored = try connection.rows("SELECT v, length(CAST(v AS BLOB)) FROM t ORDER BY rowid")
        #expect(stored.map { $0[0].textValue.map { Array($0.utf8) } } == [[0x61, 0, 0x62], [0x61, 0, 0x63], [0], []])
        #expect(stored.map { $0[1] } == [.integer(3), .integer(3), .integer(1), .integer(0)])
        #expect(try connection.rows("SELECT count(*) FROM t WHERE v = ?", [.text("a")]) == [[.integer(0)]])
        #expect(try connection.rows("SELECT count(*) FROM t WHERE v = ?", [.text("a\u{0}b")]) == [[.integer(1)]])
    }

    @Test func errorsCarryCodeMessageAndSQL() throws {
        let connection = try SQLiteConnection(path: ":memory:")
        #expect {
            try connection.run("SELECT * FROM missing")
        } throws: { error in
            guard let error = error as? SQLiteError else { return false }
            return error.code.primary == .error && error.message.contains("no such table") && error.sql == "SELECT * FROM missing"
        }
    }
}

extension ControlStoreTests {
    @Test func R_S2_tenantLimitsPersistAndGoWithTheirTenant() throws {
        let store = try ControlStore(directory: directory)
        _ = try store.createTenant(id: "acme")
        _ = try store.createTenant(id: "globex")
        let limits = TenantLimits(requestsPerSecond: 0.5, burst: 2, maxStoreBytes: 1 << 30, maxModels: 0)
        #expect(try store.setLimits(limits, tenantID: "acme").limits == limits)
        #expect(throws: CartographError.self) { try store.setLimits(limits, tenantID: "ghost") }

        let reopened = try ControlStore(directory: directory)
        #expect(reopened.tenant("acme")?.limits == limits)
        #expect(reopened.tenant("globex")?.limits == TenantLimits())
        // Back to every default: no row is left.
        _ = try reopened.setLimits(TenantLimits(), tenantID: "acme")
        _ = try reopened.setLimits(limits, tenantID: "globex")
        try reopened.deleteTenant("globex")
        let connection = try SQLiteConnection(path: directory.controlDatabase.path)
        #expect(try connection.rows("SELECT count(*) FROM tenant_limits") == [[.integer(0)]])
        #expect(try ControlStore(directory: directory).tenant("acme")?.limits == TenantLimits())
    }

    @Test func R_S2_aControlDatabaseFromBeforeLimitsOpensAndGainsTheTable() throws {
        try directory.prepare()
        let old = try SQLiteConnection(path: directory.controlDatabase.path)
        try old.execute("""
            CREATE TABLE tenants (id TEXT PRIMARY KEY NOT NULL, created_at REAL NOT NULL);
            CREATE TABLE api_keys (id TEXT PRIMARY KEY NOT NULL, tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
                                   scope TEXT NOT NULL, secret_sha256 BLOB NOT NULL, created_at REAL NOT NULL);
            INSERT INTO tenants VALUES ('acme', 0);
            """)
        let store = try ControlStore(directory: directory)
        #expect(store.tenant("acme")?.limits == TenantLimits())
        #expect(try store.setLimits(TenantLimits(maxModels: 3), tenantID: "acme").limits.maxModels == 3)
        #expect(try ControlStore(directory: directory).tenant("acme")?.limits.maxModels == 3)
    }
}
