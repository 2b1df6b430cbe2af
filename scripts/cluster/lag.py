"""Replication lag as the drill measures it: a probe tenant on each node posts a note, and the time
from the 200 to the moment the node's replica holds a newer transaction of that store (a new LTX file
in the replica directory) is one sample."""
import os
import random
import threading
import time

from client import Client
from workload import NOTES


def replica_txid(store_replica):
    """The highest transaction id in a store's replica (LTX files are named `<min>-<max>.ltx`, in hex)."""
    highest = 0
    ltx = os.path.join(store_replica, "ltx")
    for level in os.listdir(ltx) if os.path.isdir(ltx) else []:
        for name in os.listdir(os.path.join(ltx, level)):
            if name.endswith(".ltx"):
                highest = max(highest, int(name[:-4].split("-")[1], 16))
    return highest


class LagProbe(threading.Thread):
    """Samples the lag of one node through its probe tenant until stopped; skips while the node is down."""

    def __init__(self, url, key, tenant, cluster, timeout=30.0):
        super().__init__(daemon=True)
        self.client = Client(url, key, timeout=5)
        self.tenant = tenant
        self.cluster = cluster
        self.timeout = timeout
        self.samples = []
        self.stopping = threading.Event()

    def store_replica(self):
        node = self.cluster.node_of(self.tenant)
        return os.path.join(node.replica_dir, "tenants", self.tenant, "notes.sqlite")

    def run(self):
        note = 0
        while not self.stopping.is_set():
            note += 1
            replica = self.store_replica()
            before = replica_txid(replica)
            try:
                answer = self.client.send("POST", NOTES.format(tenant=self.tenant) + "/mappings/notes/payloads",
                                          {"notes": [{"id": note, "text": "probe"}]})
            except OSError:
                answer = None
            if answer is None or answer.status != 200:
                time.sleep(0.2)
                continue
            acknowledged = time.monotonic()
            while not self.stopping.is_set() and time.monotonic() - acknowledged < self.timeout:
                if replica_txid(replica) > before:
                    self.samples.append(time.monotonic() - acknowledged)
                    break
                time.sleep(0.005)
            # Writes arrive at random moments relative to Litestream's sync ticks.
            time.sleep(random.uniform(0, 0.3))

    def stop(self):
        self.stopping.set()
        self.join(self.timeout + 5)


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]
