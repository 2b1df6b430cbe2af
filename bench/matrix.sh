#!/usr/bin/env bash
# The workload matrix of `make bench` (issue 29); also runnable alone.
#
# Five shapes of API data, each with its model, mapping, seeded generator and sqlite-utils loader in
# bench/matrix/<shape>/ (the driver, bench/matrix/run.py, and the server/proc helpers, bench/matrix/server.py,
# are shared):
#   a  today's articles (bench/ingest's generator, model and mapping as they are)
#   b  a second article shape: integer ids, an array attribute, author from a pool of 1% of the articles,
#      0-5 tags (set), a re-load that changes tag sets and half the authors
#   c  GitHub-like issue pages, 100 issues per POST (nested user, labels, assignees, milestone, nullable dates)
#   d  tiny objects, 5,000 per POST
#   e  a deep self-referencing tree (Category parent/children), one 1,000-node subtree per POST
# For each: a first load, a 10%-changed re-load and a re-post of identical data on a fresh release server
# (POSTERS keep-alive posters), with objects/s (min / median of RUNS runs) and server CPU µs per object
# (/proc/PID/stat) beside every rate, bytes written (/proc/PID/io), peak RSS (VmHWM) over the loads and
# SERVE_SECONDS of list requests; the same loads by the shape's sqlite-utils loader (and for a, b and c the C
# reference, simdjson + SQLite, writing the same tables without the change feed and the scan projection).
# Then the tiny-object check: one POST of TINY_OBJECTS {"id": n}.
# One `SUMMARY shape=<x> …` line per shape gives every ratio with issue 29's target and met/MISSED:
#   first/su >= 1.5x; first/C >= 0.35x (a, b; c's first/C printed without a target); reload/su >= 4x; changed-object CPU <= new-object CPU;
#   peak RSS <= 150 MiB; disk (store + wal) <= 1.5x sqlite-utils'; and tiny: (VmHWM after - VmRSS before) / body <= 6x.
#
# Environment:
#   MATRIX_OBJECTS  objects per shape (default 100000; a multiple of 5000)
#   MATRIX_SHAPES   shapes to run (default a,b,c,d,e)
#   RUNS            runs per shape (default 3)
#   POSTERS         concurrent posters (default 2)
#   SERVE_SECONDS   seconds of list requests after the loads (default 5)
#   TINY_OBJECTS    objects in the tiny payload (default 200000; 0 skips it); TINY_TIMEOUT seconds (300)
#   SCRATCH         SwiftPM scratch path (default .build-matrix)
# Quick run: MATRIX_OBJECTS=10000 RUNS=1 bench/matrix.sh
# Output: bench/out/matrix.txt and stdout. Only 127.0.0.1 is contacted.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRATCH=${SCRATCH:-.build-matrix}
out=bench/out; mkdir -p "$out"
. bench/deps.sh   # g++, simdjson and SQLite headers, wrk, sqlite-utils

swift build -c release --scratch-path "$SCRATCH" --product cartograph >/dev/null
bin=$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)
g++ -O2 -std=c++17 -o "$out/ingest_reference" bench/reference/ingest_reference.cpp -lsimdjson -lsqlite3
g++ -O2 -std=c++17 -o "$out/ingest_reference_b" bench/reference/ingest_reference_b.cpp -lsimdjson -lsqlite3
g++ -O2 -std=c++17 -o "$out/ingest_reference_c" bench/reference/ingest_reference_c.cpp -lsimdjson -lsqlite3

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 bench/matrix/run.py --bin "$bin/cartograph" --work "$work" \
  --c-ref a="$out/ingest_reference" --c-ref b="$out/ingest_reference_b" --c-ref c="$out/ingest_reference_c" | tee "$out/matrix.txt"
