#!/usr/bin/env bash
# The ingestion section of `make bench` (issue 5); also runnable alone.
#
# Generates realistic API payloads (bench/ingest/generate.py: articles with string ids, ISO 8601
# dates, a nested author from a pool of 1,000 and 0-5 nested tags from a pool of 200), 1,000
# articles per batch, and loads them three ways, interleaved in every run:
#   cartograph   POST /v1/tenants/bench/models/news/mappings/articles/payloads, one batch per request,
#                sequentially over one keep-alive connection (a small http.client poster: no process
#                per request, unlike curl), against a fresh release server and data directory;
#   C            bench/reference/ingest_reference.cpp: simdjson + SQLite prepared statements into the
#                same tables, one transaction per batch — the physical limit;
#   sqlite-utils bench/ingest/sqlite_utils_load.py: upsert_all into equivalent tables.
# Each does a first load of N articles and then a re-load of the same N with 10% changed (newer
# updated_at; the mapping's modificationAttribute lets cartograph skip the rest). Rates are
# articles/s (cartograph's objects/s — articles + authors + tags it touched — are shown too), min
# and median of RUNS runs; cartograph's peak RSS is VmHWM from /proc/<pid>/status after each load.
#
# Environment:
#   RUNS         runs per size (default 3)
#   INGEST_MAX   largest size; sizes are 10k, 100k, 1M up to it (default 100000, or 1000000 with
#                INGEST_FULL=1 — the 1M size adds minutes per run, so a plain `make bench` skips it)
#   INGEST_FULL  1: include 1M
#   INGEST_PERF  1: also `perf record -g` cartograph during one first load of the largest size and
#                write the top symbols to bench/out/ingest-perf.txt
#   SCRATCH      SwiftPM scratch path (default .build-ingest)
# Output: bench/out/ingest.txt. Only 127.0.0.1 is contacted.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
INGEST_FULL=${INGEST_FULL:-0}
INGEST_MAX=${INGEST_MAX:-$([ "$INGEST_FULL" = 1 ] && echo 1000000 || echo 100000)}
INGEST_PERF=${INGEST_PERF:-0}
SCRATCH=${SCRATCH:-.build-ingest}
out=bench/out; mkdir -p "$out"
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)

# Dependencies: g++, simdjson and SQLite headers (Debian), sqlite-utils (PyPI).
missing=""
for p in g++ libsimdjson-dev libsqlite3-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
python3 -c 'import sqlite_utils' 2>/dev/null || python3 -m pip install -q sqlite-utils

sizes=()
for n in 10000 100000 1000000; do [ "$n" -le "$INGEST_MAX" ] && sizes+=("$n"); done
[ ${#sizes[@]} -gt 0 ] || { echo "INGEST_MAX=$INGEST_MAX is below the smallest size (10000)" >&2; exit 1; }
max=${sizes[${#sizes[@]}-1]}

swift build -c release --scratch-path "$SCRATCH" --product cartograph >/dev/null
bin=$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)
g++ -O2 -std=c++17 -o "$out/ingest_reference" bench/reference/ingest_reference.cpp -lsimdjson -lsqlite3

work=$(mktemp -d)
server_pid=""; perf_pid=""
cleanup() {
  [ -n "$perf_pid" ] && kill -INT "$perf_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

python3 bench/ingest/generate.py --articles "$max" --out "$work/first" 2>"$work/gen-first.txt"
python3 bench/ingest/generate.py --articles "$max" --out "$work/reload" --changed 0.1 2>"$work/gen-reload.txt"
largest=$(for f in "$work"/first/*.json "$work"/reload/*.json; do stat -c %s "$f"; done | sort -n | tail -1)
files() { ls "$work/$1"/batch-*.json | head -n $(( $2 / 1000 )); }   # the first N/1000 batches of a set

# The poster: one keep-alive connection, batches in order; prints the summed counts and seconds.
cat >"$work/post.py" <<'PY'
import http.client, json, sys, time
port, key, paths = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
conn = http.client.HTTPConnection("127.0.0.1", port)
headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
totals = {"inserted": 0, "updated": 0, "unchanged": 0, "deleted": 0}
start = time.perf_counter()
for path in paths:
    with open(path, "rb") as f:
        body = f.read()
    conn.request("POST", "/v1/tenants/bench/models/news/mappings/articles/payloads", body=body, headers=headers)
    response = conn.getresponse()
    text = response.read()
    if response.status != 200:
        sys.exit("POST %s: %d %s" % (path, response.status, text[:2000]))
    result = json.loads(text)
    for k in totals: totals[k] += result[k]
seconds = time.perf_counter() - start
print(json.dumps(dict(totals, seconds=round(seconds, 6))))
PY

model='{"entities": [
  {"name": "Article", "userInfo": {"identityAttributes": "articleID"},
   "attributes": [{"name": "articleID", "type": "string"}, {"name": "title", "type": "string"}, {"name": "body", "type": "string"},
                  {"name": "publishedAt", "type": "date"}, {"name": "updatedAt", "type": "date"}, {"name": "views", "type": "integer64"}],
   "relationships": [{"name": "author", "destination": "Author", "inverse": "articles"},
                     {"name": "tags", "destination": "Tag", "toMany": true, "inverse": "articles"}]},
  {"name": "Author", "userInfo": {"identityAttributes": "authorID"},
   "attributes": [{"name": "authorID", "type": "string"}, {"name": "name", "type": "string"}],
   "relationships": [{"name": "articles", "destination": "Article", "toMany": true, "inverse": "author"}]},
  {"name": "Tag", "userInfo": {"identityAttributes": "tagID"},
   "attributes": [{"name": "tagID", "type": "string"}, {"name": "name", "type": "string"}],
   "relationships": [{"name": "articles", "destination": "Article", "toMany": true, "inverse": "tags"}]}]}'
mapping='{"entity": "Article", "keyPath": "articles", "modificationAttribute": "updatedAt",
  "attributes": {"id": "articleID", "title": "title", "body": "body",
                 "published_at": {"to": "publishedAt", "transformer": "ISO8601ToDate"},
                 "updated_at": {"to": "updatedAt", "transformer": "ISO8601ToDate"}, "views": "views"},
  "relationships": [{"from": "author", "to": "author", "mapping": {"entity": "Author", "attributes": {"id": "authorID", "name": "name"}}},
                    {"from": "tags", "to": "tags", "mapping": {"entity": "Tag", "attributes": {"id": "tagID", "name": "name"}}}]}'
token=bench-ingest-admin-token

hwm_kib() { awk '/^VmHWM/{print $2}' "/proc/$1/status"; }
json_field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

wchar() { awk '/^wchar/{print $2}' "/proc/$1/io"; }

# One cartograph run at size $1 (run $2): appends "first|reload <articles/s> <objects/s> <VmHWM KiB> <bytes written>" to $work/cg-$1.
run_cartograph() {
  local n=$1 run=$2 data="$work/cg-data" port="" key phase set result secs objects written
  rm -rf "$data"
  "$bin/cartograph" serve --host 127.0.0.1 --port 0 --data-dir "$data" --admin-token "$token" --log-level notice \
    >"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 400); do port=$(grep -o ' port=[0-9]*' "$work/server.log" | head -1 | cut -d= -f2 || true); [ -n "$port" ] && break; sleep 0.05; done
  [ -n "$port" ] || { cat "$work/server.log" >&2; exit 1; }
  local url="http://127.0.0.1:$port"
  key=$(curl -sf -X POST "$url/v1/tenants" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d '{"id":"bench"}' \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["apiKey"])')
  curl -sf -o /dev/null -X PUT "$url/v1/tenants/bench/models/news" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d "$model"
  curl -sf -o /dev/null -X PUT "$url/v1/tenants/bench/models/news/mappings/articles" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d "$mapping"
  for phase in first reload; do
    if [ "$INGEST_PERF" = 1 ] && [ "$phase" = first ] && [ "$n" = "$max" ] && [ "$run" = 1 ]; then
      perf record -g -o "$work/perf.data" -p "$server_pid" >/dev/null 2>&1 &
      perf_pid=$!; sleep 0.5
    fi
    written=$(wchar "$server_pid")
    result=$(python3 "$work/post.py" "$port" "$key" $(files "$phase" "$n"))
    sleep 1   # a checkpoint still running on the server's own thread belongs to this load's writes
    written=$(( $(wchar "$server_pid") - written ))
    if [ -n "$perf_pid" ]; then
      kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true; perf_pid=""
      { echo "# perf record -g -p <cartograph> during the first load of $n articles; perf report --no-children, top symbols"
        # (perf and grep stop early when head has its lines: not a failure)
        { perf report -i "$work/perf.data" --no-children --stdio --sort symbol 2>/dev/null | grep -E '^ +[0-9.]+%' | head -40; } || true
        echo; echo "# with children (inclusive time), top entries"
        { perf report -i "$work/perf.data" --children --stdio --sort symbol 2>/dev/null | grep -E '^ +[0-9.]+%' | head -60; } || true
      } >"$out/ingest-perf.txt"
    fi
    secs=$(json_field "$result" seconds)
    objects=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(r["inserted"]+r["updated"]+r["unchanged"])' "$result")
    echo "$phase $(awk -v n="$n" -v s="$secs" 'BEGIN{printf "%.1f", n/s}') $(awk -v o="$objects" -v s="$secs" 'BEGIN{printf "%.1f", o/s}') $(hwm_kib "$server_pid") $written" >>"$work/cg-$n"
    echo "  cartograph $n $phase: $result" >>"$work/detail.txt"
  done
  if [ "$run" = 1 ]; then   # where a batch's time goes at this store size: a dry run with ?explain=true (stores nothing)
    curl -sf -X POST "$url/v1/tenants/bench/models/news/mappings/articles/payloads?explain=true" -H "Authorization: Bearer $key" \
      -H 'Content-Type: application/json' --data-binary @"$(files first 1000 | head -1)" \
      | python3 -c 'import json,sys; t=json.load(sys.stdin)["timings"]; print("  '"$n"' articles stored: " + ", ".join("%s %.1f ms" % (k, v) for k, v in t.items()))' \
      >>"$work/phases.txt"
  fi
  local total
  total=$(curl -sf "$url/v1/tenants/bench/models/news/entities/Article/objects?count=true&limit=1" -H "Authorization: Bearer $key" \
          | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
  [ "$total" = "$n" ] || { echo "cartograph stored $total articles, expected $n" >&2; exit 1; }
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
  rm -rf "$data"
}

# One run of an in-process loader ($1: c | su) at size $2: appends "first|reload <articles/s> [<bytes written>]" to $work/$1-$2.
run_loader() {
  local tool=$1 n=$2 db="$work/$1.db" phase result secs
  rm -f "$db" "$db-wal" "$db-shm"
  for phase in first reload; do
    if [ "$tool" = c ]; then
      result=$("$out/ingest_reference" "$db" $(files "$phase" "$n"))
    else
      result=$(python3 bench/ingest/sqlite_utils_load.py "$db" $(files "$phase" "$n"))
    fi
    [ "$(json_field "$result" articles)" = "$n" ] || { echo "$tool loaded $(json_field "$result" articles), expected $n" >&2; exit 1; }
    secs=$(json_field "$result" seconds)
    echo "$phase $(awk -v n="$n" -v s="$secs" 'BEGIN{printf "%.1f", n/s}') $(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("bytesWritten", ""))' "$result")" >>"$work/$tool-$n"
    echo "  $tool $n $phase: $result" >>"$work/detail.txt"
  done
  rm -f "$db" "$db-wal" "$db-shm"
}

# Column $2 of the lines of file $1 whose phase is $3 -> "min median" (or "max" for RSS with $4=max).
col() { awk -v p="$3" -v c="$2" '$1==p{print $c}' "$1" | sort -g; }
median() { awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
minimum() { head -1; }
fmt() { awk '{printf "%.0f", $1}'; }

{
echo "# Ingestion — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, runs=$RUNS, sizes=${sizes[*]}"
echo "# machine at start: $(uptime | sed 's/.*load average/load average/')"
top -bn1 | sed -n '7,12p' | sed 's/^/#   /'
echo "# data: $(cat "$work/gen-first.txt"); re-load set: $(sed 's/.*, //' "$work/gen-reload.txt")"
} | tee "$out/ingest.txt"

: >"$work/detail.txt"; : >"$work/phases.txt"
for run in $(seq 1 "$RUNS"); do
  for n in "${sizes[@]}"; do   # interleaved, so drift on a shared machine hits all three alike
    run_cartograph "$n" "$run"
    run_loader c "$n"
    run_loader su "$n"
  done
done

{
echo
echo "## Articles/s (min / median of $RUNS runs); 1,000 articles per batch, one transaction per batch"
printf "%-8s %-7s %-24s %-24s %-24s %-9s %-9s %s\n" size load "cartograph" "C (simdjson+SQLite)" "sqlite-utils upsert_all" "cg/C" "cg/su" "cartograph objects/s (median)"
for n in "${sizes[@]}"; do
  for phase in first reload; do
    cg_min=$(col "$work/cg-$n" 2 $phase | minimum); cg_med=$(col "$work/cg-$n" 2 $phase | median)
    c_min=$(col "$work/c-$n" 2 $phase | minimum); c_med=$(col "$work/c-$n" 2 $phase | median)
    su_min=$(col "$work/su-$n" 2 $phase | minimum); su_med=$(col "$work/su-$n" 2 $phase | median)
    obj_med=$(col "$work/cg-$n" 3 $phase | median)
    printf "%-8s %-7s %-24s %-24s %-24s %-9s %-9s %s\n" "$n" "$phase" \
      "$(echo "$cg_min" | fmt) / $(echo "$cg_med" | fmt)" "$(echo "$c_min" | fmt) / $(echo "$c_med" | fmt)" \
      "$(echo "$su_min" | fmt) / $(echo "$su_med" | fmt)" \
      "$(awk -v a="$cg_med" -v b="$c_med" 'BEGIN{printf "%.2f", a/b}')" "$(awk -v a="$cg_med" -v b="$su_med" 'BEGIN{printf "%.2f", a/b}')" \
      "$(echo "$obj_med" | fmt)"
  done
done

echo
echo "## Targets (medians)"
rss_limit_kib=$(( (4 * largest) / 1024 + 100 * 1024 ))
first_cost=""
for n in "${sizes[@]}"; do
  cg_first=$(col "$work/cg-$n" 2 first | median); cg_reload=$(col "$work/cg-$n" 2 reload | median)
  c_first=$(col "$work/c-$n" 2 first | median)
  rss=$(awk '{print $4}' "$work/cg-$n" | sort -g | tail -1)
  awk -v n="$n" -v a="$cg_first" -v b="$c_first" 'BEGIN{r=a/b; printf "%-8s first load cartograph/C:          %.2f  (target >= 0.50) %s\n", n, r, (r>=0.5?"met":"NOT MET")}'
  awk -v n="$n" -v a="$cg_reload" -v b="$cg_first" 'BEGIN{r=a/b; printf "%-8s re-load speed-up (10%% changed):    %.2fx (target >= 3x)   %s\n", n, r, (r>=3?"met":"NOT MET")}'
  awk -v n="$n" -v r="$rss" -v l="$rss_limit_kib" 'BEGIN{printf "%-8s peak RSS (VmHWM, worst run):       %.1f MiB (target <= %.1f MiB = 4 x %.2f MiB batch + 100 MiB) %s\n", n, r/1024, l/1024, (l-102400)/4/1024, (r<=l?"met":"NOT MET")}'
done
echo
echo "## Cost per article (median first load, µs/article) and growth against 10k (target at 1M <= 1.3x)"
declare -A base
for n in "${sizes[@]}"; do
  line=$(printf "%-8s" "$n")
  for tool in cg c su; do
    cost=$(awk -v r="$(col "$work/$tool-$n" 2 first | median)" 'BEGIN{printf "%.2f", 1e6/r}')
    base[$tool]=${base[$tool]:-$cost}
    case $tool in cg) name=cartograph;; c) name=C;; su) name=sqlite-utils;; esac
    line="$line  $name $cost ($(awk -v c="$cost" -v b="${base[$tool]}" 'BEGIN{printf "%.2fx", c/b}'))"
  done
  if [ "$n" = 1000000 ]; then
    g=$(awk -v c="$(col "$work/cg-$n" 2 first | median)" -v b="$(col "$work/cg-10000" 2 first | median)" 'BEGIN{printf "%.2f", b/c}')
    line="$line  -> cartograph growth ${g}x $(awk -v g="$g" 'BEGIN{print (g<=1.3?"met":"NOT MET")}')"
  fi
  echo "$line"
done
[ "$max" = 1000000 ] || echo "(1M not run: INGEST_MAX=$INGEST_MAX; the growth target is judged at 1M — INGEST_FULL=1)"
# Whether the two targets can hold together: Cartograph writes every row and index entry the C program
# writes (and the change feed besides), so its cost per article grows by at least as much as C's.
if [ "$max" = 1000000 ]; then   # the growth target is judged at 1M
  c10=$(awk -v r="$(col "$work/c-10000" 2 first | median)" 'BEGIN{printf "%.2f", 1e6/r}')
  c100=$(awk -v r="$(col "$work/c-100000" 2 first | median)" 'BEGIN{printf "%.2f", 1e6/r}')
  cmax=$(awk -v r="$(col "$work/c-$max" 2 first | median)" 'BEGIN{printf "%.2f", 1e6/r}')
  awk -v n="$max" -v c10="$c10" -v cmax="$cmax" -v c100="$c100" 'BEGIN{
    g=cmax-c10; printf "C itself: +%.1f us/article from 10k to %d. Growing at least that much, a load stays within 1.3x only if it costs\n", g, n;
    printf ">= %.1f us/article at 10k (%.1f / 0.3); >= 0.5x C at 100k allows <= %.1f there (2 x %.1f): %s\n", g/0.3, g, 2*c100, c100,
      (g/0.3 <= 2*c100 ? "the two targets can hold together" : "the two targets cannot both hold")}'
fi
echo
echo "## Bytes written per article on a first load (median; cartograph: the server's write(2) bytes — WAL, checkpoints, responses; C: its own, final checkpoint included)"
for n in "${sizes[@]}"; do
  awk -v n="$n" -v cg="$(col "$work/cg-$n" 5 first | median)" -v c="$(col "$work/c-$n" 3 first | median)" \
    'BEGIN{printf "%-8s cartograph %.1f KB  C %.1f KB\n", n, cg/n/1024, c/n/1024}'
done
echo
echo "## Cartograph's phases for one more 1,000-article batch (already stored articles) once N are stored (run 1, ?explain=true)"
cat "$work/phases.txt"
echo
echo "## Every load (counts and seconds as each tool reported them)"
cat "$work/detail.txt"
} | tee -a "$out/ingest.txt"
