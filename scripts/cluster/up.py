"""`cluster.py up`: a cluster that stays up until Ctrl-C, in a directory kept for the next start; SIGUSR1
adds a node (rebalance.py)."""
import os
import signal
import sys
import time

from local_cluster import Cluster
from rebalance import add_node


def run(arguments):
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


def add_command(commands):
    command = commands.add_parser("up", help="start a cluster and wait for Ctrl-C")
    command.add_argument("--nodes", type=int, default=3)
    command.add_argument("--dir", default=".cluster")
    command.add_argument("--port", type=int, default=8090, help="the router's port; node i listens on port+1+i")
    command.set_defaults(run=run)
