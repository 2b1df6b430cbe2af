#!/usr/bin/env python3
"""Long-poll followers (issue 30, docs/change-feed.md): what FOLLOWERS clients long-polling one model's
change feed (`GET …/changes?since=N&wait=30`, each following from the head) cost the server's other
requests while writers commit.

Phases, each PHASE_SECONDS long, against a fresh `cartograph serve` (the binary given, release or debug):
  quiet                  no followers, no writers
  writers                unlimited writers (WRITERS threads, one object per commit), no followers
  followers + 10/s       FOLLOWERS followers, 10 commits/s
  followers + writers    FOLLOWERS followers, unlimited writers
For each: /healthz and an authenticated GET of one object (p50/p99, sampled every 20 ms by one
client each), commits/s, and the answers the followers received per second.

Usage: bench/followers.py path/to/cartograph [--followers 200] [--seconds 15] [--writers 4]"""
import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time

ADMIN = "bench-admin-token"
MODEL = {"entities": [{"name": "Entry", "attributes": [{"name": "id", "type": "integer64"}, {"name": "memo", "type": "string"}]}]}
MAPPING = {"entity": "Entry", "keyPath": "entries", "attributes": ["id", "memo"]}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    """One keep-alive connection."""

    def __init__(self, port, token, timeout=60):
        self.port, self.token, self.timeout = port, token, timeout
        self.connection = None

    def request(self, method, path, body=None):
        for attempt in range(2):
            try:
                if self.connection is None:
                    self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
                headers = {"Authorization": f"Bearer {self.token}"}
                data = None
                if body is not None:
                    data = json.dumps(body).encode()
                    headers["Content-Type"] = "application/json"
                self.connection.request(method, path, body=data, headers=headers)
                response = self.connection.getresponse()
                return response.status, response.read()
            except (http.client.HTTPException, OSError):
                self.connection = None
                if attempt == 1:
                    raise


def percentile(values, fraction):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class Phase:
    def __init__(self, port, key, base, seconds, followers, writers, commits_per_second, first_id):
        self.port, self.key, self.base, self.seconds = port, key, base, seconds
        self.followers, self.writers, self.rate = followers, writers, commits_per_second
        self.next_id = first_id
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.commits = 0
        self.answers = 0
        self.health, self.gets = [], []

    def writer(self):
        client = Client(self.port, self.key)
        interval = 1.0 / self.rate if self.rate else 0
        next_at = time.monotonic()
        while not self.stop.is_set():
            with self.lock:
                identifier = self.next_id
                self.next_id += 1
            status, _ = client.request("POST", self.base + "/mappings/entries/payloads",
                                       {"entries": [{"id": identifier, "memo": f"entry {identifier}"}]})
            if status == 200:
                with self.lock:
                    self.commits += 1
            if interval:
                next_at += interval
                time.sleep(max(0, next_at - time.monotonic()))

    def follower(self, since):
        client = Client(self.port, self.key)
        while not self.stop.is_set():
            status, body = client.request("GET", f"{self.base}/changes?since={since}&limit=1000&wait=30")
            if status != 200:
                time.sleep(0.05)
                continue
            since = json.loads(body)["next"]
            with self.lock:
                self.answers += 1

    def sampler(self, path, token, into):
        client = Client(self.port, token)
        while not self.stop.is_set():
            started = time.perf_counter()
            client.request("GET", path)
            into.append((time.perf_counter() - started) * 1000)
            time.sleep(0.02)

    def run(self, head):
        followers = [threading.Thread(target=self.follower, args=(head,)) for _ in range(self.followers)]
        threads = list(followers)
        threads += [threading.Thread(target=self.writer) for _ in range(self.writers)]
        threads += [threading.Thread(target=self.sampler, args=("/healthz", self.key, self.health)),
                    threading.Thread(target=self.sampler, args=(self.base + "/entities/Entry/objects/1", self.key, self.gets))]
        for thread in threads:
            thread.start()
        time.sleep(self.seconds)
        self.stop.set()
        # Commits wake the followers still parked, so that they end before their 30 s.
        ending = Client(self.port, self.key)
        while any(thread.is_alive() for thread in followers):
            ending.request("POST", self.base + "/mappings/entries/payloads", {"entries": [{"id": 1, "memo": f"end {time.time()}"}]})
            for thread in followers:
                thread.join(timeout=0.01)
        for thread in threads:
            thread.join()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--followers", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--writers", type=int, default=4)
    arguments = parser.parse_args()

    directory = tempfile.mkdtemp(prefix="cartograph-followers-")
    port = free_port()
    server = subprocess.Popen([arguments.binary, "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", directory,
                               "--admin-token", ADMIN, "--log-level", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                if Client(port, ADMIN, timeout=1).request("GET", "/healthz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.05)
        admin = Client(port, ADMIN)
        key = json.loads(admin.request("POST", "/v1/tenants", {"id": "acme"})[1])["apiKey"]
        base = "/v1/tenants/acme/models/ledger"
        client = Client(port, key)
        assert client.request("PUT", base, MODEL)[0] == 201
        assert client.request("PUT", base + "/mappings/entries", MAPPING)[0] == 201
        assert client.request("POST", base + "/mappings/entries/payloads", {"entries": [{"id": 1, "memo": "first"}]})[0] == 200

        phases = [("quiet", 0, 0, 0), ("writers", 0, arguments.writers, 0),
                  (f"{arguments.followers} followers + 10 commits/s", arguments.followers, 1, 10),
                  (f"{arguments.followers} followers + writers", arguments.followers, arguments.writers, 0)]
        next_id = 2
        print(f"{'phase':<34} {'healthz p50/p99 ms':>20} {'GET p50/p99 ms':>18} {'commits/s':>10} {'answers/s':>10}")
        for name, followers, writers, rate in phases:
            head = 0
            while True:  # the followers start at the head
                page = json.loads(client.request("GET", f"{base}/changes?since={head}&limit=1000")[1])
                if not page["changes"]:
                    break
                head = page["next"]
            phase = Phase(port, key, base, arguments.seconds, followers, writers, rate, next_id)
            phase.run(head)
            next_id = phase.next_id + 1
            print(f"{name:<34} {statistics.median(phase.health):>9.1f}/{percentile(phase.health, 0.99):<9.1f}"
                  f" {statistics.median(phase.gets):>8.1f}/{percentile(phase.gets, 0.99):<8.1f}"
                  f" {phase.commits / arguments.seconds:>10.0f} {phase.answers / arguments.seconds:>10.0f}", flush=True)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
