"""A local Cartograph cluster on loopback (docs/cluster.md): N nodes, each replicated by Litestream to its
own replica directory, behind an nginx router that sends each tenant to its node. The commands that run
one (cluster.py up, drill, throughput) and test_cluster.py build on `Cluster`."""
import os
import secrets
import shutil
import socket

from node import Node
from ring import Ring
from router import Router


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def admin_token(root):
    """The cluster's admin token, shared by every node (each node's control database is its own)."""
    path = os.path.join(root, "admin.token")
    if not os.path.exists(path):
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as f:
            f.write("cga_" + secrets.token_hex(32) + "\n")
    with open(path) as f:
        return f.read().strip()


class Cluster:
    """`nodes` Cartograph nodes and the router, under `root`:
    admin.token, router/ (nginx.conf and logs), node-<i>/ (data/, logs, litestream.yml) and
    replica/node-<i>/ (the directory standing for the node's replica bucket)."""

    def __init__(self, binary, root, nodes=3, router_port=None, node_ports=None):
        self.binary = os.path.abspath(binary)
        self.root = os.path.abspath(root)
        os.makedirs(self.root, mode=0o700, exist_ok=True)
        self.admin_token = admin_token(self.root)
        ports = node_ports or [free_port() for _ in range(nodes)]
        self.nodes = []
        for port in ports:
            self.nodes.append(self.new_node(port))
        self.router = Router(os.path.join(self.root, "router"), f"127.0.0.1:{router_port or free_port()}",
                             [n.address for n in self.nodes])

    def new_node(self, port, index=None):
        """Node `index` (by default the next one) on `port`; not started, not yet in the ring."""
        index = len(self.nodes) if index is None else index
        return Node(self.binary, os.path.join(self.root, f"node-{index}"), port,
                    os.path.join(self.root, "replica", f"node-{index}"), self.admin_token)

    @property
    def ring(self):
        return Ring(self.router.servers)

    def node_of(self, tenant):
        address = self.ring.node(tenant)
        return next(n for n in self.nodes if n.address == address)

    def spread_tenants(self, per_node, prefix):
        """Tenant ids chosen so that each node owns `per_node` of them (the ring decides)."""
        chosen = {node.address: [] for node in self.nodes}
        i = 0
        while any(len(t) < per_node for t in chosen.values()):
            tenant = f"{prefix}{i:03d}"
            owner = self.ring.node(tenant)
            if len(chosen[owner]) < per_node:
                chosen[owner].append(tenant)
            i += 1
        return chosen

    def start(self):
        for node in self.nodes:
            node.start()
        self.router.start()

    def stop(self):
        self.router.stop()
        for node in self.nodes:
            node.stop()

    def replace(self, index, wipe):
        """Kills node `index` (SIGKILL, Litestream too), deletes its data directory when `wipe`, and
        starts a replacement on the same address (the same place in the ring). Returns the new node."""
        old = self.nodes[index]
        old.kill()
        if wipe:
            shutil.rmtree(old.data_dir)
        new = self.new_node(old.port, index)
        self.nodes[index] = new
        return new
