"""Aggregate ingest through the router beside one node, so that the router's cost is known: the same
writers (processes, one tenant each, one note per POST) post for a few seconds to
  1. one node directly, 2. the same node through the router, 3. three nodes through the router."""
import multiprocessing
import shutil
import tempfile
import time

from local_cluster import Cluster
from workload import NOTES, create_tenant
from client import Client


def _post_for(url, key, tenant, seconds, results):
    client = Client(url, key)
    path = NOTES.format(tenant=tenant) + "/mappings/notes/payloads"
    done, note, deadline = 0, 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        note += 1
        if client.send("POST", path, {"notes": [{"id": note, "text": f"note {note}"}]}).status == 200:
            done += 1
    results.put(done)


def rate(url, tenants, seconds):
    """Acknowledged POSTs per second of one writer process per (tenant, key)."""
    results = multiprocessing.Queue()
    processes = [multiprocessing.Process(target=_post_for, args=(url, key, tenant, seconds, results)) for tenant, key in tenants]
    for p in processes:
        p.start()
    total = sum(results.get() for _ in processes)
    for p in processes:
        p.join()
    return round(total / seconds)


def run(binary, writers, seconds):
    root = tempfile.mkdtemp(prefix="cartograph-throughput-")
    cluster = Cluster(binary, root, nodes=3)
    try:
        cluster.start()
        chosen = cluster.spread_tenants(writers, "w")
        first = cluster.nodes[0]
        keys = {t: create_tenant(cluster.router.url, cluster.admin_token, t) for ts in chosen.values() for t in ts}
        on_first = [(t, keys[t]) for t in chosen[first.address]]
        # The same number of writers, taken from the three nodes in turn.
        spread = [(t, keys[t]) for i in range(writers) for t in (ts[i] for ts in chosen.values())][:writers]
        rate(first.url, on_first, 2)  # warm-up: stores opened, first pages cached
        report = {
            "writers": writers, "seconds": seconds,
            "oneNodeDirect": rate(first.url, on_first, seconds),
            "oneNodeThroughRouter": rate(cluster.router.url, on_first, seconds),
            "threeNodesThroughRouter": rate(cluster.router.url, spread, seconds),
        }
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
    print(f"ingest, {writers} writers for {seconds} s each (acknowledged POSTs/s): one node directly {report['oneNodeDirect']}, "
          f"the same node through the router {report['oneNodeThroughRouter']}, "
          f"three nodes through the router {report['threeNodesThroughRouter']}")
    return report


def add_command(commands):
    command = commands.add_parser("throughput", help="aggregate ingest: one node, beside three through the router")
    command.add_argument("--writers", type=int, default=6)
    command.add_argument("--seconds", type=float, default=10)
    command.set_defaults(run=lambda a: run(a.binary, a.writers, a.seconds))
