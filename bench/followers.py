#!/usr/bin/env python3
"""Long-poll followers (issue 30, docs/change-feed.md): what FOLLOWERS clients long-polling one model's
change feed (`GET …/changes?since=N&wait=30`, each following from the head) cost the server's other
requests while writers commit.

Phases, each PHASE_SECONDS long, against a fresh `cartograph serve` (the binary given, release or debug):
  quiet                  no followers, no writers
  writers                unlimited writers (WRITERS threads, one object per commit), no followers
  followers + 10/s       FOLLOWERS followers, 10 commits/s
  followers + 750/s      FOLLOWERS followers, WRITERS writers at 750 commits/s together (if the clients keep up)
  followers + writers    FOLLOWERS followers, unlimited writers
For each: /healthz and an authenticated GET of one object (p50/p99, sampled every 20 ms by one
client each, in a process of their own), commits/s, the answers the followers received per second,
and the server's CPU (user + system, % of one core). Followers run 50 threads to a process.

With --pin (on a machine of two cores or more): the server and the sampler on the first core, the
followers and writers on the others, so that the clients' own work does not delay the sampler.

Usage: bench/followers.py path/to/cartograph [--followers 200] [--seconds 15] [--writers 4] [--pin]"""
import argparse
import http.client
import json
import multiprocessing
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


# With --pin: the cores of the server and the sampler, and of the followers and writers.
PIN = {}


def pinned(role):
    """Runs the calling process on `role`'s cores when --pin was given."""
    if PIN:
        os.sched_setaffinity(0, PIN[role])


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


def writer(port, key, base, rate, first_id, stride, stop, commits):
    client = Client(port, key)
    interval = 1.0 / rate if rate else 0
    next_at = time.monotonic()
    identifier = first_id
    while not stop.is_set():
        status, _ = client.request("POST", base + "/mappings/entries/payloads", {"entries": [{"id": identifier, "memo": f"entry {identifier}"}]})
        identifier += stride
        if status == 200:
            with commits.get_lock():
                commits.value += 1
        if interval:
            next_at += interval
            time.sleep(max(0, next_at - time.monotonic()))


def follower(port, key, base, since, stop, answers):
    client = Client(port, key)
    while not stop.is_set():
        status, body = client.request("GET", f"{base}/changes?since={since}&limit=1000&wait=30")
        if status != 200:
            time.sleep(0.05)
            continue
        since = json.loads(body)["next"]
        with answers.get_lock():
            answers.value += 1


def followers_process(count, port, key, base, since, stop, answers):
    """`count` followers as threads of one process (several processes: no one interpreter lock for all)."""
    pinned("load")
    threads = [threading.Thread(target=follower, args=(port, key, base, since, stop, answers)) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def writers_process(count, port, key, base, rate, first_id, stop, commits):
    pinned("load")
    threads = [threading.Thread(target=writer, args=(port, key, base, rate, first_id + i, count, stop, commits)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def sampler_process(port, key, base, stop, results):
    """Latencies of /healthz and of a GET of one object, one request every 20 ms each, in a process of its own so
    that the followers' threads do not delay its clock."""
    pinned("server")
    found = {}

    def sample(name, path):
        client = Client(port, key)
        latencies = []
        while not stop.is_set():
            started = time.perf_counter()
            client.request("GET", path)
            latencies.append((time.perf_counter() - started) * 1000)
            time.sleep(0.02)
        found[name] = latencies

    threads = [threading.Thread(target=sample, args=("healthz", "/healthz")),
               threading.Thread(target=sample, args=("get", base + "/entities/Entry/objects/1"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put(found)


def cpu_seconds(pid):
    """The server's user + system CPU seconds so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_phase(port, key, base, seconds, followers, writers, rate, first_id, head, server_pid):
    stop = multiprocessing.Event()
    commits, answers = multiprocessing.Value("i", 0), multiprocessing.Value("i", 0)
    results = multiprocessing.Queue()
    per_process = 50
    follower_processes = [multiprocessing.Process(target=followers_process,
                                                  args=(min(per_process, followers - start), port, key, base, head, stop, answers))
                          for start in range(0, followers, per_process)]
    others = [multiprocessing.Process(target=sampler_process, args=(port, key, base, stop, results))]
    if writers:
        others.append(multiprocessing.Process(target=writers_process, args=(writers, port, key, base, rate, first_id, stop, commits)))
    cpu_before = cpu_seconds(server_pid)
    for process in follower_processes + others:
        process.start()
    time.sleep(seconds)
    stop.set()
    cpu = cpu_seconds(server_pid) - cpu_before
    latencies = results.get()
    # Commits wake the followers still parked, so that they end before their 30 s.
    ending = Client(port, key)
    while any(process.is_alive() for process in follower_processes):
        ending.request("POST", base + "/mappings/entries/payloads", {"entries": [{"id": 1, "memo": f"end {time.time()}"}]})
        for process in follower_processes:
            process.join(timeout=0.01)
    for process in others:
        process.join()
    return latencies, commits.value, answers.value, cpu


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--followers", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--pin", action="store_true")
    arguments = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    if arguments.pin and len(cores) > 1:
        PIN.update(server={cores[0]}, load=set(cores[1:]))

    directory = tempfile.mkdtemp(prefix="cartograph-followers-")
    port = free_port()
    server = subprocess.Popen((["taskset", "-c", ",".join(map(str, PIN["server"]))] if PIN else []) + [arguments.binary, "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", directory,
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
                  (f"{arguments.followers} followers + 750 commits/s", arguments.followers, arguments.writers, 750 / arguments.writers),
                  (f"{arguments.followers} followers + writers", arguments.followers, arguments.writers, 0)]
        next_id = 2
        print(f"{'phase':<34} {'healthz p50/p99 ms':>20} {'GET p50/p99 ms':>18} {'commits/s':>10} {'answers/s':>10} {'server CPU':>10}")
        for name, followers, writers, rate in phases:
            head = 0
            while True:  # the followers start at the head
                page = json.loads(client.request("GET", f"{base}/changes?since={head}&limit=1000")[1])
                if not page["changes"]:
                    break
                head = page["next"]
            latencies, commits, answers, cpu = run_phase(port, key, base, arguments.seconds, followers, writers, rate, next_id, head, server.pid)
            next_id += 10_000_000
            health, gets = latencies["healthz"], latencies["get"]
            print(f"{name:<34} {statistics.median(health):>9.1f}/{percentile(health, 0.99):<9.1f}"
                  f" {statistics.median(gets):>8.1f}/{percentile(gets, 0.99):<8.1f}"
                  f" {commits / arguments.seconds:>10.0f} {answers / arguments.seconds:>10.0f} {100 * cpu / arguments.seconds:>9.0f}%", flush=True)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
