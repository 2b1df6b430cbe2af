#!/usr/bin/env python3
"""A local Cartograph cluster on loopback: N nodes, each replicated by Litestream to its own replica
directory, behind an nginx router that sends each tenant to its node (docs/cluster.md).

  cluster.py up [--nodes 3] [--dir .cluster] [--port 8090]   start it and wait for Ctrl-C
  cluster.py drill [--failovers N] [--seconds S]             the failover drill, then its report
  cluster.py throughput [--writers 6] [--seconds 10]         ingest: one node beside three through the router
  kill -USR1 $(cat .cluster/up.pid)                          a running `up` adds a node (rebalance.py)
"""
import argparse
import os
import secrets
import shutil
import signal
import socket
import sys
import time

from node import Node
from rebalance import add_node
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


def up(arguments):
    # A node added before (node-3, …) keeps its place: the ring is every node the directory has.
    existing = [d for d in os.listdir(arguments.dir) if d.startswith("node-")] if os.path.isdir(arguments.dir) else []
    nodes = max(arguments.nodes, len(existing))
    cluster = Cluster(arguments.binary, arguments.dir, nodes, arguments.port, [arguments.port + 1 + i for i in range(nodes)])
    stop, grow = [], []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGUSR1, lambda *_: grow.append(1))
    pid_file = os.path.join(cluster.root, "up.pid")
    cluster.start()
    with open(pid_file, "w") as f:
        f.write(f"{os.getpid()}\n")
    print(f"Cartograph cluster: {len(cluster.nodes)} nodes behind the router at {cluster.router.url}")
    print(f"  admin token: {os.path.join(cluster.root, 'admin.token')}")
    for i, node in enumerate(cluster.nodes):
        print(f"  node-{i}: {node.url}  data {node.data_dir}  replica {node.replica_dir}")
    print("  create a tenant: curl -X PUT -H \"Authorization: Bearer $(cat "
          f"{os.path.join(cluster.root, 'admin.token')})\" {cluster.router.url}/v1/tenants/acme")
    print(f"  add a node: kill -USR1 $(cat {pid_file})")
    print("Ctrl-C stops it (the data stays for the next `make cluster`).", flush=True)
    try:
        while not stop:
            if grow:
                grow.clear()
                print(f"added a node: {add_node(cluster, arguments.port + 1 + len(cluster.nodes))}", flush=True)
            for i, node in enumerate(cluster.nodes):
                if node.process.poll() is not None:
                    print(f"node-{i} exited: see {node.root}/node.log", file=sys.stderr)
                    stop.append(1)
            time.sleep(0.2)
    finally:
        cluster.stop()
        os.remove(pid_file)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=".build/release/cartograph")
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("up", help="start a cluster and wait for Ctrl-C")
    start.add_argument("--nodes", type=int, default=3)
    start.add_argument("--dir", default=".cluster")
    start.add_argument("--port", type=int, default=8090, help="the router's port; node i listens on port+1+i")
    start.set_defaults(run=up)
    # These build on Cluster: imported here, once this module is loaded.
    import drill
    import throughput
    drill.add_command(commands)
    throughput.add_command(commands)
    arguments = parser.parse_args()
    arguments.run(arguments)


if __name__ == "__main__":
    main()
