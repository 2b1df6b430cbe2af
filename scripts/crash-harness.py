#!/usr/bin/env python3
"""Crash-safety harness for R-S4: a committed POST survives `kill -9`, an interrupted one leaves no trace.

Runs the real `cartograph serve` on a scratch data directory, registers a tenant, a model
(Batch -> Items -> Parts) and a mapping, then repeats a cycle:

  start the server (same data directory) -> verify everything -> stream payload POSTs from a few
  client threads (and, in some cycles, a model migration) -> `kill -9` at a random moment ->
  `PRAGMA integrity_check` on a copy of every SQLite file and compare each store's tables with the
  model it records.

Each payload is one batch: a Batch, its Items and their Parts, every object carrying the batch id
(`bid`) and the batch's revision (`rev`). A POST either creates a batch or moves all of an existing
batch's objects to the next revision. After each restart the harness checks that:
- every acknowledged (200) POST is fully present: its batch has every object, all at that revision
  or at the revision of a later unacknowledged POST;
- no unacknowledged POST is partially present: a batch's objects exist all or none and share one
  revision (mixed revisions would be a half-applied update);
- the change feed has no gap in `seq` (1, 2, 3, …) and replaying it gives exactly the stored objects;
- the store keeps its epoch: a kill with the volume kept loses nothing, so no follower has to start over
  (R-D7: only a store restored from an older copy gets a new one, and a kill while the server opens the
  store must not look like that);
- after an interrupted migration the model is the old or the new version (never half): the store's
  tables have exactly the columns of the version the store records, and the store takes writes;
- re-sending an unacknowledged POST with its Idempotency-Key answers 200 and applies it once.

Usage: scripts/crash-harness.py path/to/cartograph [--kills 50] [--seed N] [--keep]
Exits non-zero on the first violation, printing it; prints the figures at the end.
Python 3 standard library only.
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

TENANT = "crash"
MAPPING = "batches"
BASE_ENTITIES = ("Batch", "Item", "Part")
TO_MANY = {"Batch": "items", "Item": "parts"}


class HarnessFailure(Exception):
    """A violated durability or consistency property."""


class Transport(Exception):
    """The request did not get a complete answer (connection refused, reset, closed)."""

    def __init__(self, message, sent, refused):
        super().__init__(message)
        self.sent = sent        # whether the whole request had been written
        self.refused = refused  # the connection was refused: nothing reached the server


def call(port, method, path, body=None, token=None, headers=None, timeout=60, on_sent=None):
    """One request on a fresh connection; returns (status, parsed JSON or None). Raises Transport."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    sent = False
    try:
        h = dict(headers or {})
        if token:
            h["Authorization"] = "Bearer " + token
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            h.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=data, headers=h)
        sent = True
        if on_sent:
            on_sent()
        response = conn.getresponse()
        raw = response.read()
        status = response.status
    except (OSError, http.client.HTTPException) as error:
        raise Transport(f"{method} {path}: {type(error).__name__}: {error}", sent,
                        isinstance(error, ConnectionRefusedError)) from None
    finally:
        conn.close()
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = raw.decode(errors="replace")
    return status, parsed


class Server:
    """A `cartograph serve` child process on a fixed data directory."""

    def __init__(self, binary, root):
        self.binary = binary
        self.root = root
        self.data = os.path.join(root, "data")
        self.starts = 0
        self.process = None
        self.port = None
        self.log_path = None

    def spawn(self):
        self.starts += 1
        self.log_path = os.path.join(self.root, f"server-{self.starts:04d}.log")
        log = open(self.log_path, "wb")
        env = {k: v for k, v in os.environ.items() if not k.startswith("CARTOGRAPH_")}
        self.process = subprocess.Popen(
            [self.binary, "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", self.data, "--threads", "4"],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=env)
        log.close()

    def start(self):
        self.spawn()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as f:
                match = re.search(rb" port=(\d+)[^\n]* listening", f.read())
            if match:
                self.port = int(match.group(1))
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.01)
        raise HarnessFailure(f"server did not start (exit {self.process.poll()}):\n{self.log()}")

    def kill(self):
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.kill()
            raise HarnessFailure("server did not exit within 60 s of SIGTERM")

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")[-4000:]

    @property
    def admin_token(self):
        with open(os.path.join(self.data, "admin.token")) as f:
            return f.read().strip()


def model_document(extras):
    """The model: Batch -> Items -> Parts, plus the attributes and entities migrations added."""
    def attr(name, type_):
        return {"name": name, "type": type_}
    entities = {
        "Batch": {"name": "Batch", "attributes": [attr("bid", "string"), attr("rev", "integer64"), attr("size", "integer64")],
                  "relationships": [{"name": "items", "destination": "Item", "toMany": True, "inverse": "batch",
                                     "deleteRule": "cascade"}],
                  "userInfo": {"identityAttributes": "bid"}},
        "Item": {"name": "Item", "attributes": [attr("iid", "string"), attr("rev", "integer64"), attr("bid", "string")],
                 "relationships": [{"name": "batch", "destination": "Batch", "inverse": "items"},
                                   {"name": "parts", "destination": "Part", "toMany": True, "inverse": "item",
                                    "deleteRule": "cascade"}],
                 "userInfo": {"identityAttributes": "iid"}},
        "Part": {"name": "Part", "attributes": [attr("pid", "string"), attr("rev", "integer64"), attr("bid", "string")],
                 "relationships": [{"name": "item", "destination": "Item", "inverse": "parts"}],
                 "userInfo": {"identityAttributes": "pid"}},
    }
    order = list(BASE_ENTITIES)
    for extra in extras:
        if extra[0] == "attribute":
            _, entity, name, default = extra
            entities[entity]["attributes"].append({"name": name, "type": "integer64", "default": default})
        else:
            _, name = extra
            entities[name] = {"name": name, "attributes": [attr("n", "integer64"), attr("label", "string")]}
            order.append(name)
    return {"entities": [entities[name] for name in order]}


MAPPING_DOCUMENT = {
    "entity": "Batch", "attributes": ["bid", "rev", "size"],
    "relationships": [{"from": "items", "to": "items", "mapping": {
        "entity": "Item", "attributes": ["iid", "rev", "bid"],
        "relationships": [{"from": "parts", "to": "parts", "mapping": {"entity": "Part", "attributes": ["pid", "rev", "bid"]}}]}}],
}


class Batch:
    """What the harness knows about one batch id."""

    def __init__(self, bid, shape):
        self.bid = bid
        self.shape = shape          # parts per item
        self.acked = None           # last acknowledged revision (None: never acknowledged)
        self.pending = None         # revision of an unacknowledged POST, if one is unresolved
        self.busy = False           # a client thread is posting it
        self.retry = None           # (revision, found applied) of an unacknowledged POST to re-send

    def payload(self, rev):
        items = []
        for i, parts in enumerate(self.shape):
            iid = f"{self.bid}-{i}"
            items.append({"iid": iid, "rev": rev, "bid": self.bid,
                          "parts": [{"pid": f"{iid}-{p}", "rev": rev, "bid": self.bid} for p in range(parts)]})
        return {"bid": self.bid, "rev": rev, "size": len(self.shape), "items": items}

    def expected_keys(self):
        keys = {("Batch", self.bid)}
        for i, parts in enumerate(self.shape):
            keys.add(("Item", f"{self.bid}-{i}"))
            keys.update(("Part", f"{self.bid}-{i}-{p}") for p in range(parts))
        return keys


class Harness:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.root = tempfile.mkdtemp(prefix="cartograph-crash-")
        self.server = Server(os.path.abspath(args.binary), self.root)
        self.lock = threading.Lock()
        self.figures = dict(kills=0, startup_kills=0, kills_with_post_in_flight=0, posts_sent=0, posts_acknowledged=0,
                            acknowledged_checked=0, unacknowledged=0, unacknowledged_applied=0, unacknowledged_absent=0,
                            idempotent_retries=0, migrations_applied=0, migrations_interrupted=0,
                            interrupted_migrations_committed=0, interrupted_migrations_rolled_back=0,
                            feed_entries_replayed=0, sqlite_files_checked=0, objects_checked=0, models_rotated=0)
        self.generation = 0
        self.migration_seconds = 0.02   # running estimate of how long a migration PUT takes
        self.new_model()

    # MARK: World state

    def new_model(self):
        self.generation += 1
        self.model = f"m{self.generation}"
        self.extras = []               # applied migrations
        self.pending_migration = None  # extras of an unacknowledged migration
        self.batches = {}
        self.next_batch = 0
        self.acked_unchecked = 0
        self.feed_seq = 0
        self.feed_objects = {}         # (entity, _id) -> object, from replaying the feed
        self.feed_epoch = None

    def path(self, suffix=""):
        return f"/v1/tenants/{TENANT}/models/{self.model}{suffix}"

    def fail(self, message):
        raise HarnessFailure(message)

    # MARK: Set-up

    def setup(self):
        self.server.start()
        self.admin = self.server.admin_token
        status, body = call(self.server.port, "POST", "/v1/tenants", {"id": TENANT}, token=self.admin)
        if status != 201:
            self.fail(f"create tenant: {status} {body}")
        self.key = body["apiKey"]
        status, body = call(self.server.port, "POST", f"/v1/tenants/{TENANT}/keys", {"scope": "write"}, token=self.key)
        if status != 201:
            self.fail(f"create key: {status} {body}")
        self.write_key = body["apiKey"]
        self.register_model()

    def register_model(self):
        status, body = call(self.server.port, "PUT", self.path(), model_document([]), token=self.key)
        if status != 201:
            self.fail(f"register model: {status} {body}")
        status, body = call(self.server.port, "PUT", self.path(f"/mappings/{MAPPING}"), MAPPING_DOCUMENT, token=self.key)
        if status != 201:
            self.fail(f"register mapping: {status} {body}")

    # MARK: Load

    def post(self, batch, rev, port, in_flight):
        """POSTs one revision of a batch; returns 'ack', 'unacked' or 'refused' (never reached the server)."""
        key = f"{batch.bid}-r{rev}"
        marked = []

        def sent():
            with self.lock:
                in_flight[0] += 1
            marked.append(True)
        try:
            status, body = call(port, "POST", self.path(f"/mappings/{MAPPING}/payloads"), batch.payload(rev),
                                token=self.write_key, headers={"Idempotency-Key": key}, on_sent=sent)
        except Transport as error:
            if not self.killing.is_set():
                self.fail(f"POST {key} failed while the server was up: {error}")
            return "refused" if error.refused else "unacked"
        finally:
            if marked:
                with self.lock:
                    in_flight[0] -= 1
        if status != 200:
            self.fail(f"POST {key}: {status} {body}")
        touched = body["inserted"] + body["updated"] + body["unchanged"]
        if touched != len(batch.expected_keys()) or body["deleted"] != 0:
            self.fail(f"POST {key}: counted {body} for {len(batch.expected_keys())} objects")
        return "ack"

    def client(self, worker, port, rng, in_flight):
        while not self.stop.is_set():
            with self.lock:
                idle = [b for b in self.batches.values() if not b.busy and b.pending is None and b.acked is not None]
                if idle and rng.random() < 0.3:
                    batch = rng.choice(idle)
                    rev = batch.acked + 1
                else:
                    self.next_batch += 1
                    # Mostly small batches; some large ones keep a transaction open longer.
                    items = rng.randint(1, 6) if rng.random() < 0.9 else rng.randint(30, 100)
                    batch = Batch(f"g{self.generation}-b{self.next_batch}", [rng.randint(0, 3) for _ in range(items)])
                    self.batches[batch.bid] = batch
                    rev = 1
                batch.busy = True
                self.figures["posts_sent"] += 1
            outcome = self.post(batch, rev, port, in_flight)
            with self.lock:
                batch.busy = False
                if outcome == "ack":
                    batch.acked = rev
                    self.figures["posts_acknowledged"] += 1
                    self.acked_unchecked += 1
                elif outcome == "unacked":
                    batch.pending = rev
                    self.figures["unacknowledged"] += 1
                else:
                    self.figures["posts_sent"] -= 1
                    if batch.acked is None:
                        del self.batches[batch.bid]
            if outcome != "ack":
                return

    def migrate(self, rng, sent_event, result):
        """Sends one migration PUT: a new defaulted attribute on an existing entity, or a new entity."""
        version = len(self.extras) + 2
        if rng.random() < 0.7:
            extra = ("attribute", rng.choice(BASE_ENTITIES), f"x{version}", version)
        else:
            extra = ("entity", f"Extra{version}")
        proposed = self.extras + [extra]
        self.pending_migration = proposed
        started = time.monotonic()
        try:
            status, body = call(self.server.port, "PUT", self.path(), model_document(proposed), token=self.key,
                                on_sent=sent_event.set)
        except Transport as error:
            if not self.killing.is_set():
                self.fail(f"migration PUT failed while the server was up: {error}")
            result.append("refused" if error.refused else "unacked")
            sent_event.set()
            return
        if status != 200 or body.get("version") != version:
            self.fail(f"migration PUT: {status} {body}")
        elapsed = time.monotonic() - started
        self.migration_seconds = 0.7 * self.migration_seconds + 0.3 * elapsed
        self.extras = proposed
        self.pending_migration = None
        result.append("ack")

    # MARK: One cycle

    def cycle(self, number):
        rng = random.Random(self.rng.random())
        if rng.random() < 0.05:
            # Kill during start-up, before (or just as) the server listens.
            self.server.spawn()
            time.sleep(rng.uniform(0, 0.15))
            self.server.kill()
            self.figures["kills"] += 1
            self.figures["startup_kills"] += 1
            self.check_files()
        self.server.start()
        port = self.server.port
        self.verify()
        if number > 0 and number % self.args.rotate == 0:
            self.rotate()
        else:
            self.retry_unacknowledged(rng)

        self.stop = threading.Event()
        self.killing = threading.Event()
        in_flight = [0]
        threads = [threading.Thread(target=self.guard, args=(self.client, w, port, random.Random(rng.random()), in_flight))
                   for w in range(self.args.clients)]
        migration = rng.random() < self.args.migration_rate and self.batches
        sent_event, result = threading.Event(), []
        if migration:
            threads.append(threading.Thread(target=self.guard, args=(self.delayed_migration, rng.uniform(0.05, 0.3),
                                                                     random.Random(rng.random()), sent_event, result)))
        for t in threads:
            t.start()
        if migration and rng.random() < 0.8:
            # Aim the kill at the migration: from just after the PUT is sent to about three times its usual duration.
            sent_event.wait(timeout=5)
            time.sleep(rng.uniform(0, 3 * self.migration_seconds))
        else:
            time.sleep(rng.uniform(0, 0.05) if rng.random() < 0.15 else rng.uniform(0.05, self.args.max_delay))
        self.killing.set()
        with self.lock:
            if in_flight[0] > 0:
                self.figures["kills_with_post_in_flight"] += 1
        self.server.kill()
        self.figures["kills"] += 1
        self.stop.set()
        for t in threads:
            t.join()
        if self.errors:
            raise self.errors[0]
        if migration:
            if result == ["ack"]:
                self.figures["migrations_applied"] += 1
            elif result == ["unacked"]:
                self.figures["migrations_interrupted"] += 1
            else:
                self.pending_migration = None   # killed before it was sent, or it never reached the server
        self.check_files()

    def delayed_migration(self, delay, rng, sent_event, result):
        time.sleep(delay)
        if not self.killing.is_set():
            self.migrate(rng, sent_event, result)

    def guard(self, target, *args):
        try:
            target(*args)
        except BaseException as error:   # noqa: BLE001 — reported by the main thread
            self.errors.append(error)
            self.stop.set()

    def rotate(self):
        """Starts a fresh model so the stores stay small (the old one was just verified)."""
        status, _ = call(self.server.port, "DELETE", self.path(), token=self.key)
        if status != 204:
            self.fail(f"delete model {self.model}: {status}")
        self.figures["models_rotated"] += 1
        self.new_model()
        self.register_model()

    # MARK: Checks

    def check_files(self):
        """`PRAGMA integrity_check` on a copy of every SQLite file (with its WAL), and each store's
        tables against the model version it records. Copies leave the originals for the server's own recovery."""
        scratch = os.path.join(self.root, "check")
        shutil.rmtree(scratch, ignore_errors=True)
        os.makedirs(scratch)
        for directory, _, files in os.walk(self.server.data):
            for name in files:
                if not name.endswith(".sqlite"):
                    continue
                source = os.path.join(directory, name)
                copy = os.path.join(scratch, f"{len(os.listdir(scratch))}-{name}")
                shutil.copyfile(source, copy)
                if os.path.exists(source + "-wal"):
                    shutil.copyfile(source + "-wal", copy + "-wal")
                db = sqlite3.connect(copy)
                try:
                    result = [row[0] for row in db.execute("PRAGMA integrity_check")]
                    if result != ["ok"]:
                        self.fail(f"integrity_check of {source}: {result}")
                    if name != "control.sqlite":
                        self.check_schema(db, source)
                finally:
                    db.close()
                self.figures["sqlite_files_checked"] += 1
        shutil.rmtree(scratch, ignore_errors=True)

    def check_schema(self, db, source):
        row = db.execute("SELECT value FROM _cartograph_meta WHERE key = 'model'").fetchone()
        if row is None:
            return
        model = json.loads(row[0])
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name != 'sqlite_sequence'")}
        entities = {e["name"]: e for e in model["entities"]}
        if tables != set(entities):
            self.fail(f"{source}: tables {sorted(tables)} but model version {model['version']} has entities {sorted(entities)}")
        for name, entity in entities.items():
            columns = {r[1] for r in db.execute(f'PRAGMA table_info("{name}")')}
            expected = {"_id", "_entity", "_stub"} | {a["name"] for a in entity["attributes"]} \
                | {r["name"] for r in entity["relationships"] if not r["toMany"]}
            if columns != expected:
                self.fail(f"{source}: table {name} has columns {sorted(columns)}, model version {model['version']} "
                          f"says {sorted(expected)} (a half-applied migration?)")

    def get(self, path):
        status, body = call(self.server.port, "GET", path, token=self.key)
        if status != 200:
            self.fail(f"GET {path}: {status} {body}")
        return body

    def list_objects(self, entity):
        items, cursor = [], None
        while True:
            query = "?limit=1000" + (f"&cursor={cursor}" if cursor else "")
            page = self.get(self.path(f"/entities/{entity}/objects{query}"))
            items += page["items"]
            cursor = page["next"]
            if not cursor:
                return items

    def verify(self):
        # The model is the acknowledged version, or the interrupted migration's version: never anything else.
        model = self.get(self.path())
        version = model["version"]
        if self.pending_migration is not None:
            if version == len(self.pending_migration) + 1:
                self.extras = self.pending_migration
                self.figures["interrupted_migrations_committed"] += 1
            elif version == len(self.extras) + 1:
                self.figures["interrupted_migrations_rolled_back"] += 1
            else:
                self.fail(f"model version {version} after an interrupted migration from {len(self.extras) + 1}")
            self.pending_migration = None
        elif version != len(self.extras) + 1:
            self.fail(f"model version {version}, expected {len(self.extras) + 1}")
        expected_model = model_document(self.extras)
        served = {e["name"]: sorted(a["name"] for a in e["attributes"]) for e in model["entities"]}
        wanted = {e["name"]: sorted(a["name"] for a in e["attributes"]) for e in expected_model["entities"]}
        if served != wanted:
            self.fail(f"model version {version} has {served}, expected {wanted}")
        defaults = {(x[1], x[2]): x[3] for x in self.extras if x[0] == "attribute"}

        # Every stored object, grouped by batch.
        stored = {}
        by_batch = {}
        for entity in wanted:
            for item in self.list_objects(entity):
                if item["_entity"] != entity:
                    continue
                stored[(entity, item["_id"])] = item
                for (owner, name), default in defaults.items():
                    if owner == entity and item.get(name) != default:
                        self.fail(f"{entity} {item} lacks the default {name}={default} of a migration")
                if entity in BASE_ENTITIES:
                    by_batch.setdefault(item["bid"], []).append(item)
        self.figures["objects_checked"] += len(stored)

        key_attribute = {"Batch": "bid", "Item": "iid", "Part": "pid"}
        for bid in by_batch:
            if bid not in self.batches:
                self.fail(f"objects of batch {bid} exist, but it was never posted")
        for bid, batch in list(self.batches.items()):
            objects = by_batch.get(bid, [])
            if not objects:
                if batch.acked is not None:
                    self.fail(f"batch {bid} rev {batch.acked} was acknowledged but nothing of it is stored")
                if batch.pending is not None:
                    self.figures["unacknowledged_absent"] += 1
                    batch.retry = (batch.pending, False)
                    batch.pending = None
                continue
            keys = {(o["_entity"], o[key_attribute[o["_entity"]]]) for o in objects}
            if keys != batch.expected_keys():
                self.fail(f"batch {bid} is partially stored: {len(keys)} of {len(batch.expected_keys())} objects "
                          f"(missing {sorted(batch.expected_keys() - keys)[:5]}, extra {sorted(keys - batch.expected_keys())[:5]})")
            revs = {o["rev"] for o in objects}
            if len(revs) != 1:
                self.fail(f"batch {bid} mixes revisions {sorted(revs)}: an update was half applied")
            rev = revs.pop()
            allowed = {batch.acked, batch.pending} - {None}
            if rev not in allowed:
                self.fail(f"batch {bid} is at rev {rev}; acknowledged {batch.acked}, unacknowledged {batch.pending}")
            for o in objects:
                if o["_entity"] == "Batch" and (o["size"] != len(batch.shape) or len(o["items"]) != len(batch.shape)):
                    self.fail(f"batch {bid}: {o}")
                if o["_entity"] == "Item":
                    index = int(o["iid"].rsplit("-", 1)[1])
                    if o["batch"] != bid or len(o["parts"]) != batch.shape[index]:
                        self.fail(f"item of batch {bid} is not connected: {o}")
                if o["_entity"] == "Part" and o["item"] != o["pid"].rsplit("-", 1)[0]:
                    self.fail(f"part of batch {bid} is not connected: {o}")
            if batch.pending is not None:
                applied = rev == batch.pending
                self.figures["unacknowledged_applied" if applied else "unacknowledged_absent"] += 1
                batch.retry = (batch.pending, applied)
                batch.pending = None
            batch.acked = rev
        self.figures["acknowledged_checked"] += self.acked_unchecked
        self.acked_unchecked = 0
        self.check_feed(stored, defaults)

    def check_feed(self, stored, defaults):
        """Reads the feed from where the last check stopped: increasing seqs (the feed is compacted: an object
        appears once, at its latest change), and a replay equal to the store."""
        since = self.feed_seq
        while True:
            page = self.get(self.path(f"/changes?since={since}&limit=1000"))
            if self.feed_epoch not in (None, page["epoch"]):
                self.fail(f"the store's epoch changed from {self.feed_epoch} to {page['epoch']} though its volume was kept")
            self.feed_epoch = page["epoch"]
            for change in page["changes"]:
                if change["seq"] <= self.feed_seq:
                    self.fail(f"change feed out of order: seq {change['seq']} follows {self.feed_seq}")
                self.feed_seq = change["seq"]
                if change["op"] == "upsert":
                    obj = change["object"]
                    self.feed_objects[(obj["_entity"], obj["_id"])] = obj
                else:
                    self.feed_objects = {k: v for k, v in self.feed_objects.items()
                                         if not (k[0] == change["entity"] and self.key_of(v) == change["key"])}
                self.figures["feed_entries_replayed"] += 1
            if page["next"] == since:
                break
            since = page["next"]
        if set(self.feed_objects) != set(stored):
            missing = set(stored) - set(self.feed_objects)
            extra = set(self.feed_objects) - set(stored)
            self.fail(f"feed replay differs from the store: {len(missing)} stored objects not in the feed "
                      f"({sorted(missing)[:5]}), {len(extra)} feed objects not stored ({sorted(extra)[:5]})")
        for key, obj in self.feed_objects.items():
            item = {k: v for k, v in stored[key].items() if k != TO_MANY.get(key[0])}
            for (owner, name), default in defaults.items():
                # An attribute added by a migration after the object's last upsert: the store filled the default.
                if owner == key[0] and name not in obj and item.get(name) == default:
                    item.pop(name)
            if item != obj:
                self.fail(f"feed replay of {key} is {obj}, the store has {item}")

    @staticmethod
    def key_of(obj):
        return obj.get("bid") if obj["_entity"] == "Batch" else obj.get("iid") if obj["_entity"] == "Item" else obj.get("pid")

    def retry_unacknowledged(self, rng):
        """Re-sends some unacknowledged POSTs with their Idempotency-Key: 200, applied once."""
        for batch in list(self.batches.values()):
            if batch.retry is None:
                continue
            (rev, applied), batch.retry = batch.retry, None
            if rng.random() < 0.5:
                if batch.acked is None:
                    del self.batches[batch.bid]   # never stored, not re-sent: forgotten
                continue
            key = f"{batch.bid}-r{rev}"
            status, body = call(self.server.port, "POST", self.path(f"/mappings/{MAPPING}/payloads"), batch.payload(rev),
                                token=self.write_key, headers={"Idempotency-Key": key})
            if status != 200:
                self.fail(f"retry of {key}: {status} {body}")
            # Applied before the kill: the stored answer comes back (its changeSeq is one the feed has already
            # shown); not applied: it is applied now, after everything the feed has shown.
            if applied != (body["changeSeq"] <= self.feed_seq):
                self.fail(f"retry of {key} (applied before the kill: {applied}) answered changeSeq {body['changeSeq']}, "
                          f"the feed was at {self.feed_seq}")
            batch.acked = rev
            self.acked_unchecked += 1
            self.figures["idempotent_retries"] += 1
            self.figures["posts_acknowledged"] += 1
            self.figures["posts_sent"] += 1

    # MARK: Run

    def run(self):
        started = time.monotonic()
        self.errors = []
        self.setup()
        self.server.kill()
        self.check_files()
        for number in range(self.args.kills):
            self.errors = []
            self.cycle(number)
            if self.args.progress and (number + 1) % self.args.progress == 0:
                print(f"  {number + 1} kills, {self.figures['posts_acknowledged']} POSTs acknowledged, "
                      f"{time.monotonic() - started:.0f} s", flush=True)
        # Last restart: everything verified once more, then a clean SIGTERM exit.
        self.server.start()
        self.verify()
        code = self.server.stop()
        if code != 0:
            self.fail(f"SIGTERM exit status {code}")
        self.check_files()
        return time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary", help="path to the cartograph executable")
    parser.add_argument("--kills", type=int, default=50, help="kill -9 cycles (default 50)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: random, printed)")
    parser.add_argument("--clients", type=int, default=3, help="concurrent POSTing threads (default 3)")
    parser.add_argument("--max-delay", type=float, default=0.8, help="longest load before a kill, seconds (default 0.8)")
    parser.add_argument("--migration-rate", type=float, default=0.3, help="share of cycles with a migration (default 0.3)")
    parser.add_argument("--rotate", type=int, default=5, help="start a fresh model every N kills (default 5)")
    parser.add_argument("--progress", type=int, default=0, help="print progress every N kills")
    parser.add_argument("--keep", action="store_true", help="keep the data directory")
    args = parser.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 32)
    harness = Harness(args)
    print(f"crash harness: {args.kills} kills, seed {args.seed}, data in {harness.root}", flush=True)
    try:
        seconds = harness.run()
    except HarnessFailure as failure:
        if harness.server.process and harness.server.process.poll() is None:
            harness.server.kill()
        print(f"FAILED: {failure}\n(seed {args.seed}; data and server logs kept in {harness.root})", file=sys.stderr)
        print("crash harness: 0 passed, 1 failed")
        return 1
    f = harness.figures
    print(f"kills: {f['kills']} ({f['kills_with_post_in_flight']} with a POST in flight, {f['startup_kills']} during start-up)")
    print(f"POSTs: {f['posts_sent']} sent, {f['posts_acknowledged']} acknowledged, {f['acknowledged_checked']} acknowledged "
          f"and checked after a kill; {f['unacknowledged']} unacknowledged ({f['unacknowledged_applied']} found applied "
          f"whole, {f['unacknowledged_absent']} found absent), {f['idempotent_retries']} re-sent with their Idempotency-Key")
    print(f"migrations: {f['migrations_applied']} acknowledged, {f['migrations_interrupted']} interrupted "
          f"({f['interrupted_migrations_committed']} found at the new version, {f['interrupted_migrations_rolled_back']} at the old)")
    print(f"checks: {f['objects_checked']} objects, {f['feed_entries_replayed']} feed entries replayed, "
          f"{f['sqlite_files_checked']} SQLite files integrity-checked, {f['models_rotated']} models rotated; {seconds:.0f} s")
    if not args.keep:
        shutil.rmtree(harness.root, ignore_errors=True)
    print("crash harness: 1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
