#!/usr/bin/env python3
"""The to-many filter of `make bench` (issue 33): "open, labelled L, newest first", the commonest query of
issue-tracker data, over OBJECTS (default 100,000) GitHub-like issues (the workload matrix's shape (c):
bench/matrix/c), loaded into Cartograph over HTTP and into sqlite-utils' database by the matrix's loader:

  Cartograph  GET …/entities/Issue/objects?where=state == 'open' AND ANY labels.name == 'L'&orderBy=-updatedAt&limit=50
  Datasette   GET /su.json?sql=SELECT issues.* FROM issues WHERE state = 'open' AND id IN (SELECT issue_id
              FROM issue_labels JOIN labels ON labels.id = issue_labels.label_id WHERE labels.name = :label)
              ORDER BY updated_at DESC LIMIT 50&label=L

the SQL a Datasette user writes for it. L is drawn per request from the 60 labels (no answer comes from a
cache of earlier ones). wrk -t2 -c16 for DURATION seconds, RUNS interleaved rounds: req/s min/median,
p50/p99, server CPU per request (utime+stime from /proc), and one SUMMARY line against issue 33's target
(at least 3x Datasette), first with no index declared, then with an index on (state, updated) on both
sides; and a facet on the issues' author over `state == S` (R-Q8) against Datasette's `_facet=user_login`. Both sides list the same issues for one label, checked first.

Usage: tomany.py --bin CARTOGRAPH --work DIR    (env: OBJECTS, RUNS, DURATION)
"""
import argparse, json, os, re, shutil, socket, sqlite3, subprocess, sys, time, urllib.parse, urllib.request

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "matrix"))
from server import Server, post_phase  # noqa: E402

OBJECTS = int(os.environ.get("OBJECTS", "100000"))
RUNS = int(os.environ.get("RUNS", "3"))
DURATION = int(os.environ.get("DURATION", "8"))
SHAPE = os.path.join(here, "matrix", "c")
PREDICATE = "state == 'open' AND ANY labels.name == '%s'"
SQL = ("SELECT issues.* FROM issues WHERE state = 'open' AND id IN (SELECT issue_id FROM issue_labels "
       "JOIN labels ON labels.id = issue_labels.label_id WHERE labels.name = :label) ORDER BY updated_at DESC LIMIT 50")
LUA = """
-- GET <prefix><label><suffix>, the label drawn per request from args[3] (comma-separated).
local counter = 0
function setup(thread) counter = counter + 1; thread:set("id", counter) end
function init(args)
  prefix, suffix, labels = args[1], args[2], {}
  for label in string.gmatch(args[3], "[^,]+") do labels[#labels + 1] = label end
  math.randomseed(3000 + id)
end
function request() return wrk.format(nil, prefix .. labels[math.random(#labels)] .. suffix) end
"""


def quote(text):
    return urllib.parse.quote(text, safe="")


def wrk(url, prefix, suffix, labels, script, key=None, connections=16, seconds=None):
    headers = ["-H", "Authorization: Bearer " + key] if key else []
    out = subprocess.run(["wrk", "-t2", "-c%d" % connections, "-d%ds" % (seconds or DURATION), "--timeout", "60s", "--latency", *headers, "-s", script,
                          url, "--", prefix, suffix, ",".join(labels)], capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    requests = int(re.search(r"(\d+) requests in", out).group(1))

    def ms(label):
        value = re.search(r"^\s+%s\s+([\d.]+)(us|ms|s)" % label, out, re.M)
        return float(value.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[value.group(2)]
    errors = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses: (\d+)", out))
    return {"rps": rps, "requests": requests, "p50": ms("50%"), "p99": ms("99%"), "errors": errors}


def start_datasette(database, port):
    """Datasette serving `database` immutable on `port`, once it answers."""
    process = subprocess.Popen([sys.executable, "-m", "datasette", "serve", "-i", database, "--host", "127.0.0.1", "--port", str(port),
                                "--setting", "sql_time_limit_ms", "60000", "--setting", "facet_time_limit_ms", "60000"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            urllib.request.urlopen("http://127.0.0.1:%d/-/versions.json" % port, timeout=1).read()
            return process
        except OSError:
            time.sleep(0.1)
    raise SystemExit("Datasette did not start")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    data = os.path.join(args.work, "tomany-data")
    subprocess.run([sys.executable, os.path.join(SHAPE, "generate.py"), "--objects", str(OBJECTS), "--out", data], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    files = sorted(os.path.join(data, "first", name) for name in os.listdir(os.path.join(data, "first")))
    conf = json.load(open(os.path.join(SHAPE, "shape.json")))
    labels = sorted({label["name"] for name in files for issue in json.load(open(name))["issues"] for label in issue["labels"]})
    print("# Cartograph to-many filter — %s, %d cores, %d issues, %d labels, runs=%d, %ds each" % (
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), os.cpu_count(), OBJECTS, len(labels), RUNS, DURATION), flush=True)

    server = Server(args.bin)
    datasette = None
    try:
        key = server.new_tenant()
        route = server.register(key, conf["modelName"], json.load(open(os.path.join(SHAPE, conf["model"]))),
                                conf["mappingName"], json.load(open(os.path.join(SHAPE, conf["mapping"]))))
        post_phase(server, key, route, files, 2, 3600)
        database = os.path.join(args.work, "tomany-su.db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(database + suffix):
                os.remove(database + suffix)
        subprocess.run([sys.executable, os.path.join(SHAPE, "su_load.py"), database, *files], check=True, stdout=subprocess.DEVNULL)
        db = sqlite3.connect(database)   # Datasette serves the file immutable: fold the WAL in first
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("PRAGMA journal_mode=DELETE")
        db.close()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            ds_port = probe.getsockname()[1]
        datasette = start_datasette(database, ds_port)
        ds_url = "http://127.0.0.1:%d" % ds_port
        cg_url = "http://127.0.0.1:%d" % server.port
        cg_prefix = "/v1/tenants/bench/models/%s/entities/Issue/objects?limit=50&orderBy=-updatedAt&where=" % conf["modelName"] \
            + quote(PREDICATE.split("'%s'")[0] + "'")
        cg_suffix = quote("'")
        ds_prefix = "/tomany-su.json?_shape=array&sql=%s&label=" % quote(SQL)
        ds_suffix = ""

        # The same issues for one label on both sides (as sets: equal updated_at values may tie).
        label = labels[len(labels) // 2]
        cg = server.expect((200,), "GET", cg_prefix + quote(label) + cg_suffix, key=key)["items"]
        ds = json.load(urllib.request.urlopen(ds_url + ds_prefix + quote(label)))
        cg_ids, ds_ids = sorted(o["id"] for o in cg), sorted(o["id"] for o in ds)
        if cg_ids != ds_ids or len(cg_ids) != 50:
            raise SystemExit("cartograph and Datasette list different issues for %r: %s / %s" % (label, cg_ids[:5], ds_ids[:5]))
        plan = server.expect((200,), "GET", cg_prefix + quote(label) + cg_suffix + "&explain=true", key=key)["plan"]
        print("plan: " + plan["summary"] + " (" + "; ".join(plan["steps"]) + ")", flush=True)

        script = os.path.join(args.work, "tomany.lua")
        with open(script, "w") as f:
            f.write(LUA)
        encoded = [quote(label) for label in labels]

        def round_of(name, cg=(cg_prefix, cg_suffix), ds=(ds_prefix, ds_suffix), values=encoded, connections=16, seconds=None):
            """RUNS interleaved runs of both servers; prints their rows, returns Cartograph's ratio of medians."""
            rounds = {"cartograph": [], "datasette": []}
            for _ in range(RUNS):
                before = server.cpu_us()
                run = wrk(cg_url, cg[0], cg[1], values, script, key, connections, seconds)
                run["cpu_us"] = (server.cpu_us() - before) / max(run["requests"], 1)
                rounds["cartograph"].append(run)
                rounds["datasette"].append(wrk(ds_url, ds[0], ds[1], values, script, None, connections, seconds))
            medians = {}
            for server_name, runs in rounds.items():
                ordered = sorted(runs, key=lambda r: r["rps"])
                middle = ordered[(len(ordered) - 1) // 2]
                medians[server_name] = middle["rps"]
                errors = sum(r["errors"] for r in runs)
                print("%-24s %-11s %10.1f %10.1f %9.2f %9.2f %14s%s" % (
                    name if server_name == "cartograph" else "", server_name, ordered[0]["rps"], middle["rps"], middle["p50"], middle["p99"],
                    "%.0f" % middle["cpu_us"] if "cpu_us" in middle else "-", " (%d non-2xx)" % errors if errors else ""), flush=True)
            return medians["cartograph"] / medians["datasette"] if medians["datasette"] else 0

        print("\n%-24s %-11s %10s %10s %9s %9s %14s" % ("indexes", "server", "min req/s", "median", "p50 ms", "p99 ms", "CPU µs/request"))
        bare = round_of("none declared")
        # R-Q8: a facet on the author (user.login) over a filter (state drawn from open and closed), against Datasette's table
        # facet on the same column; both list 10 values. Checked alike first.
        facet_cg = ("/v1/tenants/bench/models/%s/entities/Issue/objects?limit=1&facets=user.login&facetLimit=10&where=" % conf["modelName"]
                    + quote("state == '"), quote("'"))
        facet_ds = ("/tomany-su/issues.json?_facet=user_login&_facet_size=10&_size=1&_nocount=1&_nosuggest=1&_shape=objects&state=", "")
        ours = server.expect((200,), "GET", facet_cg[0] + "open" + facet_cg[1], key=key)["facets"]["user.login"]["values"]
        theirs = json.load(urllib.request.urlopen(ds_url + facet_ds[0] + "open"))["facet_results"]["user_login"]["results"]
        if sorted(v["count"] for v in ours) != sorted(v["count"] for v in theirs):
            raise SystemExit("cartograph and Datasette count authors differently: %s / %s" % (ours[:3], theirs[:3]))
        # Two connections and at least 20 s: a facet over 100k rows takes Datasette seconds, which 16 waiting
        # requests would turn into no answer within the run.
        facet = round_of("facet user.login", facet_cg, facet_ds, ["open", "closed"], connections=2, seconds=max(DURATION, 20))
        # An index on (state, updated) on both sides: a fetch index in Cartograph's model (R-M7), CREATE INDEX in
        # sqlite-utils' database. SQLite then reads open issues newest first and stops after the page.
        model = json.load(open(os.path.join(SHAPE, conf["model"])))
        # updatedAt ascending: read backwards, the index gives updatedAt descending with _id descending, the page's
        # exact order (a descending element would leave ties to sort).
        model["entities"][0]["fetchIndexes"] = [{"name": "openByUpdate", "elements": ["state", "updatedAt"]}]
        server.expect((200,), "PUT", "/v1/tenants/bench/models/%s" % conf["modelName"], model, key)
        datasette.terminate()
        datasette.wait()
        db = sqlite3.connect(database)
        db.execute("CREATE INDEX issues_state_updated ON issues (state, updated_at DESC)")
        db.commit()
        db.close()
        datasette = start_datasette(database, ds_port)
        plan = server.expect((200,), "GET", cg_prefix + quote(label) + cg_suffix + "&explain=true", key=key)["plan"]
        print("plan with the index: " + plan["summary"], flush=True)
        indexed = round_of("(state, updated)")
        rss = server.status_kib("VmHWM") / 1024
        print("\nSUMMARY objects=%d tomany/Datasette=%.2fx (>=3 %s) indexed/Datasette=%.2fx (>=3 %s) facet/Datasette=%.2fx (>=3 %s) peakRSS=%.0fMiB" % (
            OBJECTS, bare, "met" if bare >= 3 else "NOT MET", indexed, "met" if indexed >= 3 else "NOT MET",
            facet, "met" if facet >= 3 else "NOT MET", rss), flush=True)
    finally:
        if datasette:
            datasette.terminate()
            datasette.wait()
        server.stop()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
