"""Adding a node (docs/cluster.md): the ring with one more node gives it some tenants, each taken from
one of the old nodes (consistent hashing moves no other tenant). Each moving tenant goes through the
replica with its writes paused at the router for the time of the move, its reads still served:

1. the router answers the moving tenants' writes 503 with Retry-After (reloaded, no restart);
2. once their nodes' replicas hold their last writes (a few sync intervals), the new node's data
   directory is filled from those replicas: the tenants' rows of each old node's control database
   (tenant, keys, limits) and their stores, which keep their epochs (nothing was lost: step 3 checks);
3. the new node starts, and each moved store is checked against the old node through the API (same
   epoch, change-feed head, model and mappings); a store behind is restored again;
4. the router gets the new ring, without the pause; the old nodes delete their copies."""
import os
import shutil
import sqlite3
import tempfile
import time

from client import Client
from node import SYNC_INTERVAL, keep_epoch, litestream_restore, replica_databases, restore_stores
from ring import Ring

SYNC_SECONDS = float(SYNC_INTERVAL.rstrip("s"))
MAX_ATTEMPTS = 5


def tenants_of(node, token):
    answer = Client(node.url, token).send("GET", "/v1/tenants")
    if answer.status != 200:
        raise RuntimeError(f"GET {node.url}/v1/tenants: {answer.status}")
    return [t["id"] for t in answer.json()["items"]]


def store_state(node, token, tenant, model):
    """What must match on both sides of a move: the store's epoch and change-feed head, its model
    and its mappings."""
    client = Client(node.url, token)
    base = f"/v1/tenants/{tenant}/models/{model}"
    since, epoch = 0, None
    while True:
        page = client.send("GET", f"{base}/changes?since={since}&limit=1000")
        if page.status != 200:
            return None
        body = page.json()
        epoch = body["epoch"]
        if body["next"] == since:
            break
        since = body["next"]
    return (epoch, since, client.send("GET", base).body, client.send("GET", f"{base}/mappings").body)


def copy_control_rows(sources, destination, tenants):
    """Builds `destination` (a control database) holding exactly `tenants`' rows, from restored copies of
    the old nodes' control databases (`sources`): the first copy's file keeps the schema the server
    wrote, rows of other tenants are deleted, the others' rows are inserted."""
    shutil.copyfile(sources[0], destination)
    wanted = sorted(tenants)
    marks = ",".join("?" * len(wanted))
    with sqlite3.connect(destination) as connection:
        connection.execute("PRAGMA foreign_keys=ON")
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        keys = {table: "id" if table == "tenants" else "tenant_id" for table in tables}
        for table in tables:
            connection.execute(f'DELETE FROM "{table}" WHERE "{keys[table]}" NOT IN ({marks})', wanted)
        for source in sources[1:]:
            connection.execute("ATTACH DATABASE ? AS source", (source,))
            for table in ["tenants"] + [t for t in tables if t != "tenants"]:
                connection.execute(f'INSERT INTO main."{table}" SELECT * FROM source."{table}" WHERE "{keys[table]}" IN ({marks})',
                                   wanted)
            connection.commit()
            connection.execute("DETACH DATABASE source")


def fill(new, moves, nodes):
    """Restores the moving tenants (tenant -> old node) into `new`'s empty data directory."""
    shutil.rmtree(new.data_dir, ignore_errors=True)
    os.makedirs(new.data_dir, mode=0o700)
    scratch = tempfile.mkdtemp(dir=new.root)
    try:
        controls = []
        for index, node in enumerate(nodes):
            if node in moves.values():
                copy = os.path.join(scratch, f"control-{index}.sqlite")
                litestream_restore(os.path.join(node.replica_dir, "control.sqlite"), copy)
                controls.append(copy)
        copy_control_rows(controls, os.path.join(new.data_dir, "control.sqlite"), moves)
    finally:
        shutil.rmtree(scratch)
    for node in set(moves.values()):
        for store in restore_stores(new.data_dir, node.replica_dir, {t for t, n in moves.items() if n is node}):
            keep_epoch(store)


def behind(new, moves, token):
    """The moved stores whose copy on `new` differs from the old node's."""
    differing = []
    for tenant, node in moves.items():
        for replica_tenant, model in replica_databases(node.replica_dir):
            if replica_tenant == tenant and store_state(node, token, tenant, model) != store_state(new, token, tenant, model):
                differing.append(f"{tenant}/{model}")
    return differing


def add_node(cluster, port):
    """Adds a node on `port` to a running `Cluster` and moves the tenants the new ring gives it. Returns
    {"node": address, "moved": {tenant: old address}, "pausedSeconds": s, "attempts": n}."""
    new = cluster.new_node(port)
    ring = Ring(cluster.router.servers + [new.address])
    moves = {tenant: node for node in cluster.nodes for tenant in tenants_of(node, cluster.admin_token)
             if ring.node(tenant) == new.address}
    os.makedirs(new.root, exist_ok=True)
    paused_at = time.monotonic()
    cluster.router.reconfigure(paused=moves)
    attempts = 0
    while True:
        attempts += 1
        # Litestream ships a store's transactions every sync interval: wait a few.
        time.sleep(3 * SYNC_SECONDS * attempts)
        fill(new, moves, cluster.nodes)
        new.start()
        differing = behind(new, moves, cluster.admin_token)
        if not differing:
            break
        new.stop()
        # The next attempt's Litestream starts the new node's replica afresh.
        shutil.rmtree(new.replica_dir, ignore_errors=True)
        if attempts == MAX_ATTEMPTS:
            cluster.router.reconfigure(paused=())
            raise RuntimeError(f"the replicas of {', '.join(differing)} did not catch up; nothing was moved")
    cluster.nodes.append(new)
    cluster.router.reconfigure(servers=ring.servers, paused=())
    paused = time.monotonic() - paused_at
    for tenant, node in moves.items():
        answer = Client(node.url, cluster.admin_token).send("DELETE", f"/v1/tenants/{tenant}")
        if answer.status != 204:
            raise RuntimeError(f"DELETE {node.url}/v1/tenants/{tenant}: {answer.status}")
    return {"node": new.address, "moved": {t: n.address for t, n in moves.items()}, "pausedSeconds": round(paused, 3),
            "attempts": attempts}
