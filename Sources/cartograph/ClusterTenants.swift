// `cartograph cluster-tenants`: every node's tenants. In a cluster each node's control database holds
// only its own tenants, so `GET /v1/tenants` answers for one node; this asks each (docs/cluster.md).
import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CartographCore

struct ClusterTenants: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster-tenants",
        abstract: "List the tenants of every node of a cluster, one 'tenant<TAB>node' line each, by tenant.",
        discussion: "Asks each node's GET /v1/tenants with the cluster's admin token (CARTOGRAPH_ADMIN_TOKEN, or "
            + "--admin-token-file). A tenant found on more than one node is reported on stderr (a move in progress, "
            + "or a copy left behind). Exits 1 when a node did not answer."
    )

    @Option(name: .customLong("node"), help: "A node's base URL, e.g. http://10.0.0.5:8080; repeat for each node.")
    var nodes: [String]
    @Option(name: .customLong("admin-token-file"), help: "A file holding the admin token. [env: CARTOGRAPH_ADMIN_TOKEN]")
    var adminTokenFile: String?

    func run() async throws {
        let token = try adminToken()
        var owners: [String: [String]] = [:]
        var unreachable = false
        for node in nodes {
            do {
                for tenant in try await tenants(of: node, token: token) { owners[tenant, default: []].append(node) }
            } catch {
                unreachable = true
                FileHandle.standardError.write(Data("\(node): \(error)\n".utf8))
            }
        }
        for tenant in owners.keys.sorted() {
            let found = owners[tenant] ?? []
            for node in found { print("\(tenant)\t\(node)") }
            if found.count > 1 {
                FileHandle.standardError.write(Data("tenant \(tenant) is on \(found.count) nodes: \(found.joined(separator: ", "))\n".utf8))
            }
        }
        if unreachable { throw ExitCode(1) }
    }

    private func adminToken() throws -> String {
        if let path = adminTokenFile {
            guard let data = FileManager.default.contents(atPath: path),
                  let token = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !token.isEmpty else {
                throw ValidationError("Cannot read an admin token from \(path).")
            }
            return token
        }
        guard let token = ProcessInfo.processInfo.environment["CARTOGRAPH_ADMIN_TOKEN"], !token.isEmpty else {
            throw ValidationError("Give the admin token in CARTOGRAPH_ADMIN_TOKEN or --admin-token-file.")
        }
        return token
    }

    /// The ids `GET /v1/tenants` lists on one node.
    private func tenants(of node: String, token: String) async throws -> [String] {
        guard let url = URL(string: node.hasSuffix("/") ? node + "v1/tenants" : node + "/v1/tenants"), url.host != nil else {
            throw ValidationError("'\(node)' is not a URL like http://host:port.")
        }
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { throw NodeAnswer(description: "GET /v1/tenants answered \(status)") }
        let body = try JSONReader().parse(Array(data))
        return body["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
    }

    struct NodeAnswer: Error, CustomStringConvertible {
        let description: String
    }
}
