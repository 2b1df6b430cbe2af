// The layout of the data directory. Paths are built only from validated names (R-S1).
public import Foundation
public import CartographCore

/// Where Cartograph keeps its files:
/// `control.sqlite` (tenants and keys), `admin.token`, and `tenants/<tenant>/` (that tenant's stores).
public struct DataDirectory: Sendable {
    public let root: URL

    public init(path: String) { self.root = URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL }

    public var controlDatabase: URL { root.appendingPathComponent("control.sqlite") }
    public var adminTokenFile: URL { root.appendingPathComponent("admin.token") }
    public var tenantsRoot: URL { root.appendingPathComponent("tenants", isDirectory: true) }

    /// The directory of one tenant's stores; the id must already satisfy `Names.isResourceName`.
    public func tenantDirectory(_ tenantID: String) -> URL {
        precondition(Names.isResourceName(tenantID), "tenant id must be validated before it becomes a path")
        return tenantsRoot.appendingPathComponent(tenantID, isDirectory: true)
    }

    /// Creates the directory tree if it is missing (mode 0700: tenant data is private).
    public func prepare() throws(CartographError) {
        do {
            try FileManager.default.createDirectory(at: tenantsRoot, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw CartographError(.internalError, "Cannot create the data directory \(root.path): \(error.localizedDescription)",
                                  underlying: error)
        }
    }

    /// Creates one tenant's directory if it is missing (mode 0700), for its first store.
    public func prepareTenantDirectory(_ tenantID: String) throws(CartographError) {
        do {
            try FileManager.default.createDirectory(at: tenantDirectory(tenantID), withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw CartographError(.internalError, "Cannot create the directory of tenant '\(tenantID)'.", underlying: error)
        }
    }

    /// The admin token: `configured` when given; else the one in `admin.token`; else a new one written
    /// there with mode 0600. `generated` says whether this call created the file.
    public func adminToken(configured: String?) throws(CartographError) -> (token: String, generated: Bool) {
        if let configured, !configured.isEmpty { return (configured, false) }
        let path = adminTokenFile.path
        if let data = FileManager.default.contents(atPath: path),
           let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty {
            return (text, false)
        }
        let token = "cga_" + RandomToken.hex(bytes: 32)
        // Create with 0600 from the start so the token is never readable by others, even briefly.
        guard FileManager.default.createFile(atPath: path, contents: Data((token + "\n").utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw CartographError(.internalError, "Cannot write the admin token to \(path).")
        }
        return (token, true)
    }
}
