#!/usr/bin/env python3
"""A fresh release `cartograph serve` for the bench scripts, and what they measure of it from /proc.

Used by the workload matrix (bench/matrix/run.py) and, through its command line, by bench/ingest.sh for the
tiny-object payload:

  server.py tiny BINARY BODY TIMEOUT
      On a fresh server (its own data directory, port 0 on 127.0.0.1), one POST of BODY ({"items": [{"id": k}, …]})
      to a model Item {id} (the matrix also posts it to Item {id, tags} through a mapping of the tags no object
      uses); prints "<HTTP status|timeout-Ns|error…> <seconds> <VmRSS before KiB> <VmHWM after KiB>
      <VmRSS 3 s after KiB> <body bytes>" and, on a second line, the start of the answer. Whatever the server
      does (413, 503, dying), the line is printed.

Only 127.0.0.1 is contacted; every wait is bounded.
"""
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TOKEN = "bench-admin-token"
CLOCK_TICK_US = 1e6 / os.sysconf("SC_CLK_TCK")
HERE = os.path.dirname(os.path.abspath(__file__))
POSTER = os.path.join(HERE, "..", "ingest", "post.py")


class BenchError(Exception):
    pass


class Server:
    """`cartograph serve` on a free port with a fresh data directory (removed by stop())."""

    def __init__(self, binary, data_dir=None, extra_args=(), log_path=None):
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="cg-data-")
        self.log_path = log_path or os.path.join(self.data_dir + ".log")
        shutil.rmtree(self.data_dir, ignore_errors=True)
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", self.data_dir,
             "--admin-token", TOKEN, "--log-level", "notice", *extra_args],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.pid = self.process.pid
        self.port = None
        deadline = time.time() + 30
        while time.time() < deadline and self.port is None:
            if self.process.poll() is not None:
                break
            with open(self.log_path) as f:
                m = re.search(r" port=(\d+)", f.read())
            if m:
                self.port = int(m.group(1))
            else:
                time.sleep(0.05)
        if self.port is None:
            self.stop(keep_log=True)
            raise BenchError("the server did not start:\n" + open(self.log_path).read()[-3000:])

    # HTTP -----------------------------------------------------------------------------------------
    def request(self, method, path, body=None, key=TOKEN, timeout=120, content_type="application/json"):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            headers = {"Authorization": "Bearer " + key}
            if body is not None:
                headers["Content-Type"] = content_type
                if not isinstance(body, (bytes, str)):
                    body = json.dumps(body)
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def expect(self, status_ok, method, path, body=None, key=TOKEN):
        status, text = self.request(method, path, body, key)
        if status not in status_ok:
            raise BenchError("%s %s: HTTP %d %s" % (method, path, status, text[:3000].decode(errors="replace")))
        return json.loads(text) if text else None

    def new_tenant(self, tenant="bench"):
        """Creates the tenant as the admin; returns its API key."""
        return self.expect((200, 201), "POST", "/v1/tenants", {"id": tenant})["apiKey"]

    def register(self, key, model_name, model, mapping_name, mapping, tenant="bench"):
        """PUTs the model and the mapping (a 422 raises with the server's problem document)."""
        base = "/v1/tenants/%s/models/%s" % (tenant, model_name)
        self.expect((200, 201), "PUT", base, model, key)
        self.expect((200, 201), "PUT", "%s/mappings/%s" % (base, mapping_name), mapping, key)
        return "%s/mappings/%s/payloads" % (base, mapping_name)

    def count(self, key, model_name, entity, tenant="bench"):
        return self.expect((200,), "GET", "/v1/tenants/%s/models/%s/entities/%s/objects?count=true&limit=1"
                           % (tenant, model_name, entity), key=key)["total"]

    # /proc ----------------------------------------------------------------------------------------
    def cpu_us(self):
        """User + system CPU time of the server process (every thread), in µs."""
        with open("/proc/%d/stat" % self.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * CLOCK_TICK_US   # utime, stime: fields 14 and 15 of stat

    def io(self):
        """{"write_bytes": …, "wchar": …} of /proc/PID/io."""
        with open("/proc/%d/io" % self.pid) as f:
            return {k: int(v) for k, v in (line.split(":") for line in f)}

    def status_kib(self, field):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        raise BenchError("no %s in /proc/%d/status" % (field, self.pid))

    def sample(self):
        io = self.io()
        return {"cpu_us": self.cpu_us(), "write_bytes": io["write_bytes"], "wchar": io["wchar"], "time": time.time()}

    def alive(self):
        return self.process.poll() is None

    def stop(self, keep_log=False):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(15)
        self.log.close()
        shutil.rmtree(self.data_dir, ignore_errors=True)
        if not keep_log:
            try:
                os.remove(self.log_path)
            except OSError:
                pass


def post_phase(server, key, route, files, posters=2, timeout=3600, settle=1.0):
    """POSTs `files` from `posters` concurrent bench/ingest/post.py processes (poster i takes files i, i+P, …),
    each over one keep-alive connection. Returns the summed counts, the phase's wall time (first request
    to last answer) and the server's CPU µs and bytes written over the phase — sampled before the first
    request and `settle` seconds after the last answer, so a checkpoint the load left running on the
    server's own thread is the load's."""
    before = server.sample()
    procs = []
    for i in range(posters):
        mine = files[i::posters]
        if mine:
            procs.append(subprocess.Popen([sys.executable, POSTER, "--path", route, str(server.port), key, *mine],
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    parts, failures = [], []
    deadline = time.time() + timeout
    for p in procs:
        try:
            out, err = p.communicate(timeout=max(1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            err = "timed out after %ds; %s" % (timeout, err)
        if p.returncode != 0:
            failures.append(err.strip()[-2000:])
        else:
            parts.append(json.loads(out))
    if failures:
        raise BenchError("a poster failed: " + " | ".join(failures))
    time.sleep(settle)
    after = server.sample()
    total = {k: sum(p[k] for p in parts) for k in ("inserted", "updated", "unchanged", "deleted", "batches")}
    if total["batches"] != len(files):
        raise BenchError("posted %d batches, expected %d" % (total["batches"], len(files)))
    total["seconds"] = max(p["end"] for p in parts) - min(p["start"] for p in parts)
    total["cpu_us"] = after["cpu_us"] - before["cpu_us"]
    total["write_bytes"] = after["write_bytes"] - before["write_bytes"]
    total["wchar"] = after["wchar"] - before["wchar"]
    return total


def serve_lists(server, key, path, seconds, connections=16):
    """`seconds` of list requests (wrk -t2 -cN, or a bounded Python reader loop when wrk is missing).
    Returns (requests/s, non-2xx count or 'failed')."""
    url = "http://127.0.0.1:%d%s" % (server.port, path)
    if shutil.which("wrk"):
        try:
            r = subprocess.run(["wrk", "-t2", "-c%d" % connections, "-d%ds" % seconds, "-H", "Authorization: Bearer " + key, url],
                               capture_output=True, text=True, timeout=seconds + 30)
        except subprocess.TimeoutExpired:
            return 0.0, "failed"
        rps = re.search(r"Requests/sec:\s+([\d.]+)", r.stdout)
        non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", r.stdout)
        return (float(rps.group(1)) if rps else 0.0), (int(non2xx.group(1)) if non2xx else (0 if rps else "failed"))
    done, bad, end = 0, 0, time.time() + seconds
    while time.time() < end:
        status, _ = server.request("GET", path, key=key, timeout=30)
        done += 1
        bad += status // 100 != 2
    return done / seconds, bad


def tiny_model_and_mapping(nested):
    """The tiny payload's model and mapping: Item {id}; `nested` gives Item tags and maps them with a relationship
    mapping that no object uses (issue 30)."""
    item = {"name": "Item", "userInfo": {"identityAttributes": "id"}, "attributes": [{"name": "id", "type": "integer64"}]}
    mapping = {"entity": "Item", "keyPath": "items", "attributes": {"id": "id"}}
    if not nested:
        return {"entities": [item]}, mapping
    item["relationships"] = [{"name": "tags", "destination": "Tag", "toMany": True, "inverse": "items"}]
    tag = {"name": "Tag", "userInfo": {"identityAttributes": "name"}, "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "items", "destination": "Item", "toMany": True, "inverse": "tags"}]}
    mapping["relationships"] = [{"from": "tags", "to": "tags", "mapping": {"entity": "Tag", "attributes": {"name": "name"}}}]
    return {"entities": [item, tag]}, mapping


def tiny_check(binary, body_path, timeout, nested=False, ndjson=False):
    """The tiny-object payload (issue 14, 29, 30): see the module's docstring; `ndjson`: the body is NDJSON
    (`write_tiny_body(…, ndjson=True)`), posted as application/x-ndjson (issue 33). Returns (line, answer)."""
    size = os.path.getsize(body_path)
    extra = ("--max-body-bytes", str(size * 2)) if size > 64 * 1024 * 1024 else ()
    server = Server(binary, extra_args=extra)
    try:
        key = server.new_tenant()
        model, mapping = tiny_model_and_mapping(nested)
        route = server.register(key, "tiny", model, "items", mapping)
        time.sleep(0.5)
        before = server.status_kib("VmRSS")
        with open(body_path, "rb") as f:
            body = f.read()
        start = time.time()
        try:
            status, answer = server.request("POST", route, body, key, timeout=timeout,
                                            content_type="application/x-ndjson" if ndjson else "application/json")
            status = str(status)
        except TimeoutError:
            status, answer = "timeout-%ds" % timeout, b""
        except (OSError, http.client.HTTPException) as e:
            status, answer = "error-" + type(e).__name__, b""
        seconds = time.time() - start
        if server.alive():
            hwm = server.status_kib("VmHWM")
            time.sleep(3)
            after = server.status_kib("VmRSS")
        else:
            status, hwm, after = status + ",server-died", 0, 0
        return "%s %.3f %d %d %d %d" % (status, seconds, before, hwm, after, size), answer[:300].decode(errors="replace")
    finally:
        server.stop()


def write_tiny_body(path, n, ndjson=False):
    """`{"items": [{"id": 0}, …]}`, or with `ndjson` the same objects one per line."""
    with open(path, "w") as f:
        if ndjson:
            f.write("".join('{"id":%d}\n' % k for k in range(n)))
        else:
            f.write('{"items":[' + ",".join('{"id":%d}' % k for k in range(n)) + "]}")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "tiny":
        line, answer = tiny_check(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        print(line)
        print(answer.replace("\n", " "))
    else:
        sys.exit(__doc__)
