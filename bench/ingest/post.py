#!/usr/bin/env python3
"""One poster of the ingestion bench (bench/ingest.sh, bench/query.sh): one keep-alive connection, its batch
files POSTed in order to …/mappings/articles/payloads; prints its summed counts and the wall-clock times of
its first request and last answer as one JSON line. `--path P` posts to another payload route (the
workload matrix, bench/matrix.sh, posts every shape through this poster).

Usage: post.py [--path /v1/tenants/T/models/M/mappings/N/payloads] PORT KEY FILE...
"""
import http.client, json, sys, time
args = sys.argv[1:]
route = "/v1/tenants/bench/models/news/mappings/articles/payloads"
if args[:1] == ["--path"]:
    route, args = args[1], args[2:]
port, key, paths = int(args[0]), args[1], args[2:]
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)  # a hung server fails the poster, not the bench
headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
totals = {"inserted": 0, "updated": 0, "unchanged": 0, "deleted": 0}
start = time.time()
for path in paths:
    with open(path, "rb") as f:
        body = f.read()
    conn.request("POST", route, body=body, headers=headers)
    response = conn.getresponse()
    text = response.read()
    if response.status != 200:
        sys.exit("POST %s: %d %s" % (path, response.status, text[:2000]))
    result = json.loads(text)
    for k in totals: totals[k] += result[k]
print(json.dumps(dict(totals, batches=len(paths), start=start, end=time.time())))
