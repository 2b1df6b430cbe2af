#!/usr/bin/env bash
# The query section of `make bench` (issue 15's headline): the filtered list of 50
#   GET …/entities/Article/objects?where=views > N&orderBy=-publishedAt&limit=50
# with N drawn per request from 400000…600000 (no answer can come from a cache of earlier answers), over
# QUERY_OBJECTS (default 100000) of the ingestion bench's articles (bench/ingest/generate.py: titles and
# bodies, an author, tags), loaded into Cartograph over HTTP as the ingestion bench does, against
# Datasette over sqlite-utils' database of the same rows (bench/ingest/sqlite_utils_load.py), the
# database a Datasette user would have:
#   1. no index on either side;
#   2. publishedAt declared indexed in Cartograph's model (R-M7), and `CREATE INDEX … (published_at)` in
#      sqlite-utils' database.
#   3. full-text search (issue 33, R-Q6): title and body made `searchable` in Cartograph's model (a
#      migration that indexes the stored rows) and `sqlite-utils enable-fts articles title body` on the
#      other side; one word drawn per request from 40 of the generator's words, 20 results ordered by
#      rank: `search=<word>&limit=20` against Datasette's SQL with the same order
#      (`… articles_fts match :q order by articles_fts.rank limit 20`) and, for reference, Datasette's
#      table search `?_search=<word>&_size=20` (table order, no rank).
# wrk -t2 -c16, DURATION seconds (default 8), RUNS interleaved rounds (default 3); req/s min/median and
# p50/p99; peak RSS of the server; SUMMARY lines with issue 15's targets (>= 5x Datasette without an
# index, >= 2x with) and issue 33's (search >= 3x Datasette's). Then every article as one streamed CSV and
# NDJSON answer (R-Q7): MB/s, server CPU per object, peak RSS while streaming, and a `SUMMARY formats …` line
# with issue 33's target (CSV of 100k objects at >= 50 MB/s with RSS under 150 MiB). Output: bench/out/query.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
QUERY_OBJECTS=${QUERY_OBJECTS:-100000}; RUNS=${RUNS:-3}; DURATION=${DURATION:-8}; SCRATCH=${SCRATCH:-.build}
out=bench/out; mkdir -p "$out"
source bench/datasette-deps.sh

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_http() { for _ in $(seq 1 600); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done; echo "no answer from $1" >&2; return 1; }

exec > >(tee "$out/query.txt")
echo "# Cartograph query benchmark — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $QUERY_OBJECTS articles, runs=$RUNS, ${DURATION}s each"

# --- Data: the same articles into Cartograph (over HTTP) and into sqlite-utils' database ---------------
python3 bench/ingest/generate.py --articles "$QUERY_OBJECTS" --out "$work/first" 2>/dev/null
token=bench-query-admin-token
data="$work/data"
"$bin/cartograph" serve --host 127.0.0.1 --port 0 --data-dir "$data" --admin-token "$token" --log-level notice >"$work/server.log" 2>&1 &
cg_pid=$!; pids+=("$cg_pid")
for _ in $(seq 1 400); do port=$(grep -o ' port=[0-9]*' "$work/server.log" | head -1 | cut -d= -f2 || true); [ -n "${port:-}" ] && break; sleep 0.05; done
url="http://127.0.0.1:$port"
key=$(curl -sf -X POST "$url/v1/tenants" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d '{"id":"bench"}' \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["apiKey"])')
models="$url/v1/tenants/bench/models/news"
curl -sf -o /dev/null -X PUT "$models" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d @bench/ingest/model.json
curl -sf -o /dev/null -X PUT "$models/mappings/articles" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d @bench/ingest/mapping.json
mapfile -t batches < <(ls "$work/first"/batch-*.json)
even=(); odd=()
for i in "${!batches[@]}"; do if (( i % 2 )); then odd+=("${batches[i]}"); else even+=("${batches[i]}"); fi; done
python3 bench/ingest/post.py "$port" "$key" "${even[@]}" >/dev/null & p1=$!
python3 bench/ingest/post.py "$port" "$key" "${odd[@]}" >/dev/null & p2=$!
wait "$p1"; wait "$p2"
su_db="$work/su.db"
python3 bench/ingest/sqlite_utils_load.py "$su_db" "${batches[@]}" >/dev/null
# Datasette serves the file immutable: fold the WAL in first.
python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute("PRAGMA wal_checkpoint(TRUNCATE)"); db.execute("PRAGMA journal_mode=DELETE"); db.close()' "$su_db"
echo "cartograph store $(du -m "$data/tenants/bench/news.sqlite" | cut -f1) MB; sqlite-utils database $(du -m "$su_db" | cut -f1) MB"

ds_port=$(free_port)
start_datasette() {
  python3 -m datasette serve -i "$su_db" --host 127.0.0.1 --port "$ds_port" --setting sql_time_limit_ms 60000 >"$work/datasette.log" 2>&1 &
  ds_pid=$!; pids+=("$ds_pid")
  wait_http "http://127.0.0.1:$ds_port/su/articles.json?_size=1&_shape=array"
}
stop_datasette() { kill "$ds_pid" 2>/dev/null || true; wait "$ds_pid" 2>/dev/null || true; }

cat >"$work/list.lua" <<'EOF'
-- GET <prefix><random N in 400000..600000><suffix>, a different deterministic sequence per thread.
local counter = 0
function setup(thread) counter = counter + 1; thread:set("id", counter) end
function init(args) prefix, suffix = args[1], args[2]; math.randomseed(2000 + id) end
function request() return wrk.format(nil, prefix .. math.random(400000, 600000) .. suffix) end
EOF
cg_prefix="/v1/tenants/bench/models/news/entities/Article/objects?where=views%20%3E%20"
cg_suffix="&orderBy=-publishedAt&limit=50"
ds_prefix="/su/articles.json?views__gt="
ds_suffix="&_sort_desc=published_at&_size=50&_nosuggest=1&_nofacet=1&_nocount=1&_shape=array"
# One wrk run -> "rps p50_ms p99_ms errors"
to_ms() { awk -v v="$1" 'BEGIN{ if (v ~ /us$/) {sub(/us/,"",v); print v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v); print v} else {sub(/s/,"",v); print v*1000} }'; }
measure() {
  wrk -t2 -c16 -d"${DURATION}s" --timeout 60s --latency "$@" >"$work/wrk.txt" 2>&1
  local rps p50 p99 errors
  rps=$(awk '/Requests\/sec/{print $2}' "$work/wrk.txt")
  p50=$(awk '$1=="50%"{print $2}' "$work/wrk.txt"); p99=$(awk '$1=="99%"{print $2}' "$work/wrk.txt")
  errors=$(awk '/Non-2xx/{e += $NF} /Socket errors/{gsub(",", ""); e += $4 + $6 + $8 + $10} END{print e + 0}' "$work/wrk.txt")
  echo "${rps:-0} $(to_ms "${p50:-0ms}") $(to_ms "${p99:-0ms}") $errors"
}
round() {  # NAME [SCRIPT]: RUNS interleaved runs of cartograph and Datasette (and Datasette's second form when ds2_prefix is set)
  local script=${2:-$work/list.lua}
  : >"$work/$1.cg"; : >"$work/$1.ds"; : >"$work/$1.ds2"
  for _ in $(seq 1 "$RUNS"); do
    measure -H "Authorization: Bearer $key" -s "$script" "$url" -- "$cg_prefix" "$cg_suffix" >>"$work/$1.cg"
    measure -s "$script" "http://127.0.0.1:$ds_port" -- "$ds_prefix" "$ds_suffix" >>"$work/$1.ds"
    [ -z "${ds2_prefix:-}" ] || measure -s "$script" "http://127.0.0.1:$ds_port" -- "$ds2_prefix" "$ds2_suffix" >>"$work/$1.ds2"
  done
}
summary() { sort -k1,1g "$1" | awk '{r[NR]=$1; p5[NR]=$2; p9[NR]=$3; e += $4} END{m = int((NR+1)/2); print r[1], r[m], p5[m], p9[m], e}'; }
row() { read -r mn md p50 p99 err < <(summary "$3"); printf "%-22s %-11s %10.1f %10.1f %9.2f %9.2f %s\n" "$1" "$2" "$mn" "$md" "$p50" "$p99" "$([ "$err" = 0 ] || echo "($err errors/non-2xx)")"; }
median() { summary "$1" | cut -d' ' -f2; }

start_datasette
# The same 50 articles, newest first, on both sides.
cg_ids=$(curl -sf "$url${cg_prefix}500000${cg_suffix}" -H "Authorization: Bearer $key" | python3 -c 'import json,sys; print(" ".join(o["articleID"] for o in json.load(sys.stdin)["items"]))')
ds_ids=$(curl -sf "http://127.0.0.1:$ds_port${ds_prefix}500000${ds_suffix}" | python3 -c 'import json,sys; print(" ".join(o["id"] for o in json.load(sys.stdin)))')
[ "$cg_ids" = "$ds_ids" ] || { echo "cartograph and Datasette list different articles" >&2; exit 1; }
round bare
echo; echo "## Plans without an index"
curl -sf "$url${cg_prefix}500000${cg_suffix}&explain=true" -H "Authorization: Bearer $key" | python3 -c 'import json,sys; print("  cartograph: " + json.load(sys.stdin)["plan"]["summary"])'
stop_datasette

# Index publishedAt on both sides: Cartograph through its model, sqlite-utils' database by hand.
python3 -c '
import json, sys
model = json.load(open(sys.argv[1]))
for attribute in model["entities"][0]["attributes"]:
    if attribute["name"] == "publishedAt": attribute["indexed"] = True
print(json.dumps(model))' bench/ingest/model.json >"$work/model-indexed.json"
curl -sf -o /dev/null -X PUT "$models" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d @"$work/model-indexed.json"
python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute("CREATE INDEX idx_articles_published_at ON articles(published_at)"); db.commit(); db.close()' "$su_db"
start_datasette
round indexed
echo "## Plans with publishedAt indexed"
curl -sf "$url${cg_prefix}500000${cg_suffix}&explain=true" -H "Authorization: Bearer $key" | python3 -c 'import json,sys; print("  cartograph: " + json.load(sys.stdin)["plan"]["summary"])'
stop_datasette

# Search: title and body searchable on both sides (Cartograph: a migration that indexes the stored rows).
python3 -c '
import json, sys
model = json.load(open(sys.argv[1]))
for attribute in model["entities"][0]["attributes"]:
    if attribute["name"] in ("title", "body"): attribute["searchable"] = True
print(json.dumps(model))' "$work/model-indexed.json" >"$work/model-search.json"
migrate_started=$(date +%s.%N)
curl -sf -o /dev/null -X PUT "$models" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d @"$work/model-search.json"
migrate_seconds=$(awk -v a="$migrate_started" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}')
python3 -m sqlite_utils enable-fts "$su_db" articles title body --fts5 >/dev/null
python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute("PRAGMA journal_mode=DELETE"); db.close()' "$su_db"
echo "search indexes: cartograph's migration ${migrate_seconds}s, store with its log $(du -cm "$data/tenants/bench/news.sqlite"* | tail -1 | cut -f1) MB; sqlite-utils database $(du -m "$su_db" | cut -f1) MB"
words=$(python3 -c 'import sys; sys.path.insert(0, "bench/ingest"); import generate; print(" ".join(generate.COMMON_WORDS[40:80]))')
{
  echo '-- GET <prefix><one of 40 words><suffix>, a different deterministic sequence per thread.'
  echo "local words = {}"
  echo "for w in string.gmatch(\"$words\", \"%S+\") do words[#words + 1] = w end"
  echo 'local counter = 0'
  echo 'function setup(thread) counter = counter + 1; thread:set("id", counter) end'
  echo 'function init(args) prefix, suffix = args[1], args[2]; math.randomseed(3000 + id) end'
  echo 'function request() return wrk.format(nil, prefix .. words[math.random(#words)] .. suffix) end'
} >"$work/search.lua"
cg_prefix="/v1/tenants/bench/models/news/entities/Article/objects?search="
cg_suffix="&limit=20"
ds_prefix="/su.json?_shape=array&sql=select+articles.*+from+articles+join+articles_fts+on+articles_fts.rowid+%3D+articles.rowid+where+articles_fts+match+%3Aq+order+by+articles_fts.rank+limit+20&q="
ds_suffix=""
ds2_prefix="/su/articles.json?_search="
ds2_suffix="&_size=20&_nosuggest=1&_nofacet=1&_nocount=1&_shape=array"
start_datasette
word=${words%% *}
cg_top=$(curl -sf "$url${cg_prefix}${word}${cg_suffix}" -H "Authorization: Bearer $key" | python3 -c 'import json,sys; print(" ".join(o["articleID"] for o in json.load(sys.stdin)["items"][:5]))')
ds_top=$(curl -sf "http://127.0.0.1:$ds_port${ds_prefix}${word}${ds_suffix}" | python3 -c 'import json,sys; print(" ".join(o["id"] for o in json.load(sys.stdin)[:5]))')
echo "search '$word', first 5 by rank: cartograph $cg_top; Datasette $ds_top"
round search "$work/search.lua"
echo "## Plan of a search"
curl -sf "$url${cg_prefix}${word}${cg_suffix}&explain=true" -H "Authorization: Bearer $key" | python3 -c 'import json,sys; p = json.load(sys.stdin)["plan"]; print("  cartograph: " + " / ".join(p["steps"]))'
stop_datasette
rss=$(awk '/^VmHWM/{printf "%.1f", $2 / 1024}' "/proc/$cg_pid/status")
cpu=$(awk '{printf "%.1f", ($14 + $15) / 100}' "/proc/$cg_pid/stat")

# --- Formats (R-Q7, issue 33): every article as one streamed CSV (and NDJSON) answer ------------------
# curl reads each answer to /dev/null: RUNS runs per format, MB/s (10^6 bytes) min and median, the server's
# CPU per object (utime + stime from /proc/PID/stat) and its peak RSS from the first run on (VmHWM, reset
# through clear_refs). One more CSV answer goes through Python's csv module, which must count every article.
clk=$(getconf CLK_TCK)
echo 5 >"/proc/$cg_pid/clear_refs"
stream() {  # ACCEPT -> a line "MB/s µs-per-object" per run into $work/stream.<name>
  local name=$1 accept=$2
  : >"$work/stream.$name"
  for _ in $(seq 1 "$RUNS"); do
    read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$cg_pid/stat")
    read -r bytes seconds < <(curl -sf -o /dev/null -w '%{size_download} %{time_total}\n' -H "Authorization: Bearer $key" \
      -H "Accept: $accept" "$url/v1/tenants/bench/models/news/entities/Article/objects?limit=$((QUERY_OBJECTS * 10))")
    read -r u2 s2 < <(awk '{print $14, $15}' "/proc/$cg_pid/stat")
    awk -v b="$bytes" -v t="$seconds" -v c=$((u2 - u1 + s2 - s1)) -v hz="$clk" -v n="$QUERY_OBJECTS" \
      'BEGIN{printf "%.1f %.2f %d\n", b / t / 1e6, c * 1e6 / hz / n, b}' >>"$work/stream.$name"
  done
}
stream csv text/csv
stream ndjson application/x-ndjson
csv_rows=$(curl -sf -H "Authorization: Bearer $key" -H 'Accept: text/csv' \
  "$url/v1/tenants/bench/models/news/entities/Article/objects?limit=$((QUERY_OBJECTS * 10))" \
  | python3 -c 'import csv, io, sys; print(sum(1 for _ in csv.reader(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", newline=""))) - 1)')
stream_rss=$(awk '/^VmHWM/{printf "%.1f", $2 / 1024}' "/proc/$cg_pid/status")

echo
echo "## req/s min and median, p50/p99 ms of the median-req/s run (wrk -t2 -c16 -d${DURATION}s, $RUNS interleaved runs)"
printf "%-22s %-11s %10s %10s %9s %9s\n" list server "min req/s" median "p50 ms" "p99 ms"
row "no index" cartograph "$work/bare.cg"; row "" Datasette "$work/bare.ds"
row "publishedAt indexed" cartograph "$work/indexed.cg"; row "" Datasette "$work/indexed.ds"
row "search, rank, 20" cartograph "$work/search.cg"; row "" Datasette "$work/search.ds"; row "" "DS _search" "$work/search.ds2"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", (b > 0) ? a / b : 0}'; }
verdict() { awk -v v="$1" -v t="$2" 'BEGIN{print (v >= t) ? "met" : "NOT MET"}'; }
bare=$(ratio "$(median "$work/bare.cg")" "$(median "$work/bare.ds")")
indexed=$(ratio "$(median "$work/indexed.cg")" "$(median "$work/indexed.ds")")
echo
search=$(ratio "$(median "$work/search.cg")" "$(median "$work/search.ds")")
table_search=$(ratio "$(median "$work/search.cg")" "$(median "$work/search.ds2")")
echo "## Every article in one answer (limit=$((QUERY_OBJECTS * 10)), $RUNS runs each): MB/s min and median, server CPU µs per object (median run)"
printf "%-8s %10s %10s %14s %12s\n" format "min MB/s" median "CPU µs/object" "MB"
for name in csv ndjson; do
  sort -k1,1g "$work/stream.$name" | awk -v f="$name" '{r[NR]=$1; c[NR]=$2; b[NR]=$3} END{m = int((NR+1)/2); printf "%-8s %10.1f %10.1f %14.2f %12.1f\n", f, r[1], r[m], c[m], b[m] / 1e6}'
done
echo "csv rows read back by Python's csv module: $csv_rows of $QUERY_OBJECTS; server peak RSS while streaming ${stream_rss} MiB"
csv_rate=$(sort -k1,1g "$work/stream.csv" | awk '{r[NR]=$1} END{print r[int((NR+1)/2)]}')
csv_cpu=$(sort -k1,1g "$work/stream.csv" | awk '{c[NR]=$2} END{print c[int((NR+1)/2)]}')
echo
echo "SUMMARY formats objects=$QUERY_OBJECTS csv=${csv_rate}MB/s (>=50 $(verdict "$csv_rate" 50)) cpu=${csv_cpu}us/object" \
  "rows=$csv_rows ($([ "$csv_rows" = "$QUERY_OBJECTS" ] && echo met || echo 'NOT MET')) streamingPeakRSS=${stream_rss}MiB" \
  "(<150 $(awk -v v="$stream_rss" 'BEGIN{print (v < 150) ? "met" : "NOT MET"}'))"
echo "SUMMARY objects=$QUERY_OBJECTS noindex/Datasette=${bare}x (>=5 $(verdict "$bare" 5)) indexed/Datasette=${indexed}x (>=2 $(verdict "$indexed" 2)) peakRSS=${rss}MiB"
echo "SUMMARY search objects=$QUERY_OBJECTS by-rank/Datasette-by-rank=${search}x (>=3 $(verdict "$search" 3)) by-rank/Datasette-_search=${table_search}x migration=${migrate_seconds}s serverCPU=${cpu}s (whole run)"
