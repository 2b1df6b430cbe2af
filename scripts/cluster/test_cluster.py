#!/usr/bin/env python3
"""The cluster's tests (docs/cluster.md), against real nodes, Litestream and nginx on loopback:
python3 scripts/cluster/test_cluster.py path/to/cartograph"""
import http.client
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
import unittest

from client import Client
from local_cluster import Cluster, free_port
from node import litestream_restore
from rebalance import add_node
from ring import Ring
from router import NODE_MAX_BODY_BYTES
from workload import create_tenant, stored_ids, Writer, NOTES

BINARY = ".build/debug/cartograph"


class ClusterTests(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="cartograph-cluster-test-")
        self.cluster = Cluster(BINARY, self.root, nodes=3)
        self.cluster.start()
        self.admin = Client(self.cluster.router.url, self.cluster.admin_token)

    def tearDown(self):
        self.cluster.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def node_tenants(self, node):
        answer = Client(node.url, self.cluster.admin_token).send("GET", "/v1/tenants")
        self.assertEqual(answer.status, 200)
        return {t["id"] for t in answer.json()["items"]}

    def test_R_N1_tenants_spread_over_the_nodes_and_each_routes_to_its_node(self):
        # Three tenants for each node (the ports, so the ring, are random: twelve names as they come
        # sometimes give a node none).
        tenants = [t for owned in self.cluster.spread_tenants(3, "tenant-").values() for t in owned]
        keys = {}
        for tenant in tenants:
            created = self.admin.send("PUT", f"/v1/tenants/{tenant}")
            self.assertEqual(created.status, 201, created.body)
            keys[tenant] = created.json()["apiKey"]
        # Each node holds exactly the tenants the ring gives it, and every node holds some.
        for node in self.cluster.nodes:
            expected = {t for t in tenants if self.cluster.ring.node(t) == node.address}
            self.assertEqual(self.node_tenants(node), expected)
        # A tenant's own key reaches its node through the router, for every route under the tenant.
        for tenant in tenants:
            client = Client(self.cluster.router.url, keys[tenant])
            answer = client.send("PUT", f"/v1/tenants/{tenant}/models/notes",
                                 {"entities": [{"name": "Note", "attributes": [{"name": "identifier", "type": "integer64"}]}]})
            self.assertEqual(answer.status, 201, answer.body)
            self.assertEqual(answer.header("x-cartograph-node"), self.cluster.ring.node(tenant))
            self.assertEqual(client.send("GET", f"/v1/tenants/{tenant}/keys").status, 200)
        self.assertEqual(self.admin.send("PUT", f"/v1/tenants/{tenants[0]}").status, 409)
        # Routes without a tenant have no node: the router says where to go instead.
        for method in ("GET", "POST"):
            refused = self.admin.send(method, "/v1/tenants", {"id": "x"} if method == "POST" else None)
            self.assertEqual(refused.status, 421)
            self.assertIn("PUT /v1/tenants/{tenant}", refused.json()["detail"])

    def test_R_N2_a_store_created_while_running_is_replicated_and_restored_on_an_empty_volume(self):
        key = create_tenant(self.cluster.router.url, self.cluster.admin_token, "acme")
        node = self.cluster.node_of("acme")
        client = Client(self.cluster.router.url, key)
        for note in range(1, 21):
            answer = client.send("POST", NOTES.format(tenant="acme") + "/mappings/notes/payloads",
                                 {"notes": [{"id": note, "text": f"note {note}"}]})
            self.assertEqual(answer.status, 200, answer.body)
        # Litestream's directory watch picked the new store up without a restart and ships it: wait until
        # a copy restored from the replica has every note (its table is named after the entity).
        store_replica = os.path.join(node.replica_dir, "tenants", "acme", "notes.sqlite")
        copy = os.path.join(self.root, "copy.sqlite")
        deadline, shipped = time.monotonic() + 30, 0
        while shipped < 20 and time.monotonic() < deadline:
            time.sleep(0.2)
            for leftover in (copy, copy + "-wal", copy + "-shm"):
                if os.path.exists(leftover):
                    os.remove(leftover)
            if litestream_restore(store_replica, copy):
                with sqlite3.connect(copy) as connection:
                    shipped = connection.execute('SELECT count(*) FROM "Note"').fetchone()[0]
        self.assertEqual(shipped, 20)
        epoch = client.send("GET", NOTES.format(tenant="acme") + "/changes").json()["epoch"]
        index = self.cluster.nodes.index(node)
        replacement = self.cluster.replace(index, wipe=True)
        self.assertFalse(os.path.exists(replacement.data_dir))
        replacement.start()
        self.assertGreaterEqual(replacement.restored, 2)  # the control database and the store
        self.assertEqual(stored_ids(self.cluster.router.url, key, "acme"), set(range(1, 21)))
        # R-D7: a store restored from the replica may lack its last writes: it has a new epoch.
        self.assertNotEqual(client.send("GET", NOTES.format(tenant="acme") + "/changes").json()["epoch"], epoch)
        # The restored node writes on, and its key (restored with the control database) still works.
        answer = client.send("POST", NOTES.format(tenant="acme") + "/mappings/notes/payloads", {"notes": [{"id": 21}]})
        self.assertEqual(answer.status, 200, answer.body)
        self.assertEqual(len(stored_ids(self.cluster.router.url, key, "acme")), 21)

    def test_R_N1_while_a_node_is_down_a_keep_alive_connection_shared_by_tenants_gets_an_answer_to_every_request(self):
        """A client posting for several tenants on one keep-alive connection: the dead node's tenant gets 502
        from the router, the others their 200s, every request an answer, on the same connection throughout.
        (With request bodies passed on unbuffered, nginx closed the connection after a 502 to a POST whose
        body it had not read yet, though it had answered keep-alive: the next request got no answer.)"""
        owners = [tenants[0] for tenants in self.cluster.spread_tenants(1, "shared-").values()]
        keys = {tenant: create_tenant(self.cluster.router.url, self.cluster.admin_token, tenant) for tenant in owners}
        dead = self.cluster.node_of(owners[0])
        dead.kill()
        host, port = self.cluster.router.listen.split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        answers, dropped, local_ports = [], [], set()
        for note in range(1, 31):
            # The dead node's tenant, then a live node's, in turn.
            for tenant in (owners[0], owners[1 + note % 2]):
                body = json.dumps({"notes": [{"id": note, "text": f"note {note}"}]})
                try:
                    connection.request("POST", NOTES.format(tenant=tenant) + "/mappings/notes/payloads", body=body,
                                       headers={"Authorization": f"Bearer {keys[tenant]}", "Content-Type": "application/json"})
                    answer = connection.getresponse()
                    answer.read()
                    answers.append((tenant == owners[0], answer.status))
                    local_ports.add(connection.sock.getsockname()[1] if connection.sock else None)
                except (OSError, http.client.HTTPException) as error:
                    dropped.append(f"note {note} for {tenant}: {type(error).__name__}")
                    connection.close()
        connection.close()
        self.assertEqual(dropped, [], f"{len(dropped)} of 60 requests got no answer")
        self.assertEqual(len(local_ports), 1, f"the router closed the shared connection: local ports {local_ports}")
        self.assertEqual({status for to_dead, status in answers if to_dead}, {502})
        self.assertEqual({status for to_dead, status in answers if not to_dead}, {200})

    def test_R_N1_the_router_takes_the_bodies_a_node_takes_and_refuses_larger_ones_as_a_node_does(self):
        key = create_tenant(self.cluster.router.url, self.cluster.admin_token, "acme")
        path = NOTES.format(tenant="acme") + "/mappings/notes/payloads"
        # A payload of a few MiB: more than the router holds in memory, so it goes through its temporary file.
        notes = [{"id": n, "text": "x" * 1000} for n in range(1, 3001)]
        answer = Client(self.cluster.router.url, key).send("POST", path, {"notes": notes})
        self.assertEqual((answer.status, answer.json()["inserted"]), (200, 3000), answer.body[:200])
        # One byte over the limit, from Content-Length alone: the router answers for the node, as the node would.
        refusals = []
        for url in (self.cluster.router.url, self.cluster.node_of("acme").url):
            host, port = url.split("://")[1].split(":")
            connection = http.client.HTTPConnection(host, int(port), timeout=10)
            connection.putrequest("POST", path)
            for name, value in (("Authorization", f"Bearer {key}"), ("Content-Type", "application/json"),
                                ("Content-Length", str(NODE_MAX_BODY_BYTES + 1))):
                connection.putheader(name, value)
            connection.endheaders()
            answer = connection.getresponse()
            refusals.append((answer.status, answer.getheader("Content-Type"), json.loads(answer.read())["type"]))
            connection.close()
        self.assertEqual(refusals[0], (413, "application/problem+json", "urn:cartograph:problem:payload-too-large"))
        self.assertEqual(refusals[0], refusals[1])

    def test_R_N4_adding_a_node_moves_its_tenants_through_the_replica_pausing_only_their_writes(self):
        port = free_port()
        new_ring = Ring(self.cluster.router.servers + [f"127.0.0.1:{port}"])
        # Nine tenants as they come, and three more that the new ring gives the new node (the port is
        # random: nine alone may give it none).
        names = (f"tenant-{i}" for i in range(1000))
        goes_to_new = lambda t: new_ring.node(t) == f"127.0.0.1:{port}"
        tenants = [next(names) for _ in range(9)]
        tenants += [t for t in names if goes_to_new(t)][:3]
        moving = {t for t in tenants if goes_to_new(t)}
        self.assertTrue(3 <= len(moving) < len(tenants), moving)
        writers = [Writer(self.cluster.router.url, create_tenant(self.cluster.router.url, self.cluster.admin_token, t), t, pause=0.02)
                   for t in tenants]
        # A tenant's limits (its row in its node's control database) move with it.
        limited = sorted(moving)[0]
        self.assertEqual(self.admin.send("PATCH", f"/v1/tenants/{limited}", {"limits": {"maxModels": 7}}).status, 200)
        for writer in writers:
            writer.start()
        time.sleep(2)
        moved = add_node(self.cluster, port)
        time.sleep(2)
        for writer in writers:
            writer.stop()
        self.assertEqual(set(moved["moved"]), moving)
        new = self.cluster.nodes[-1]
        self.assertEqual(self.node_tenants(new), moving)
        for node in self.cluster.nodes[:-1]:
            self.assertFalse(self.node_tenants(node) & moving, node.address)
        shown = Client(new.url, self.cluster.admin_token).send("GET", f"/v1/tenants/{limited}")
        self.assertEqual(shown.json()["limits"]["maxModels"], 7, shown.body)
        for writer in writers:
            # Every acknowledged write is on the tenant's node now, through the router.
            acknowledged = set(writer.acknowledged)
            self.assertTrue(acknowledged, writer.tenant)
            self.assertEqual(acknowledged - stored_ids(self.cluster.router.url, writer.key, writer.tenant), set(), writer.tenant)
            self.assertEqual(writer.failures, [], writer.tenant)
            if writer.tenant in moving:
                self.assertGreater(writer.retried, 0, f"{writer.tenant}'s writes were never paused")
            else:
                self.assertEqual(writer.retried, 0, f"{writer.tenant} does not move but was paused")
        print(f"\nadding a node: {moved}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        BINARY = sys.argv.pop(1)
    unittest.main(verbosity=2)
