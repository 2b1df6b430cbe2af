// `cartograph cluster-tenants` against real nodes: each node lists only its own tenants, the command
// lists every node's (docs/cluster.md).
import Foundation
import Testing
import CartographTesting

@Suite(.serialized) struct ClusterTenantsCommandTests {
    /// Runs `cartograph cluster-tenants` with the admin token in the environment; (status, stdout, stderr).
    func clusterTenants(_ arguments: [String], token: String) throws -> (Int32, String, String) {
        try LiveServer.runCommand(["cluster-tenants"] + arguments, environment: ["CARTOGRAPH_ADMIN_TOKEN": token])
    }

    @Test func R_N1_listsEveryNodesTenantsAndFlagsOneOnTwoNodes() throws {
        try withLiveServer { first in
            try withLiveServer { second in
                for (server, tenants) in [(first, ["acme", "initech"]), (second, ["globex", "acme"])] {
                    for tenant in tenants {
                        #expect(try server.client.send("PUT", "/v1/tenants/\(tenant)", token: server.adminToken).status == 201)
                    }
                }
                let nodes = ["--node", "http://127.0.0.1:\(first.port)", "--node", "http://127.0.0.1:\(second.port)/"]
                let (status, stdout, stderr) = try clusterTenants(nodes, token: first.adminToken)
                #expect(status == 0, "\(stderr)")
                #expect(stdout == """
                    acme\thttp://127.0.0.1:\(first.port)
                    acme\thttp://127.0.0.1:\(second.port)/
                    globex\thttp://127.0.0.1:\(second.port)/
                    initech\thttp://127.0.0.1:\(first.port)

                    """)
                #expect(stderr.contains("tenant acme is on 2 nodes"))

                // A wrong token and a node that does not answer each fail the command, naming the node.
                let (refused, _, refusal) = try clusterTenants(nodes, token: "not-the-token")
                #expect(refused == 1)
                #expect(refusal.contains("answered 401"))
                let (partial, listed, missing) = try clusterTenants(nodes + ["--node", "http://127.0.0.1:1"], token: first.adminToken)
                #expect(partial == 1)
                #expect(listed.contains("globex\t"))
                #expect(missing.contains("http://127.0.0.1:1:"))
            }
        }
    }
}
