#!/usr/bin/env bash
# The ingestion section of `make bench` (issues 5 and 14); also runnable alone.
#
# Generates realistic API payloads (bench/ingest/generate.py: articles with string ids, ISO 8601
# dates, a nested author from a pool of 1,000 and 0-5 nested tags from a pool of 200), 1,000
# articles per batch, and loads them three ways, interleaved in every run:
#   cartograph   POST /v1/tenants/bench/models/news/mappings/articles/payloads, one batch per request,
#                from POSTERS concurrent posters (default 2, as issue 14 measures), each a small
#                http.client loop over one keep-alive connection (no process per request, unlike
#                curl); a phase's batch files are dealt out interleaved (poster i takes files i, i+P, …)
#                and its rate is articles / wall time of the whole phase; against a fresh release
#                server and data directory;
#   C            bench/reference/ingest_reference.cpp: simdjson + SQLite prepared statements into the
#                same tables, one transaction per batch — the physical limit;
#   sqlite-utils bench/ingest/sqlite_utils_load.py: upsert_all into equivalent tables.
# Each does a first load of N articles and then a re-load of the same N with 10% changed (newer
# updated_at; the mapping's modificationAttribute lets cartograph skip the rest). Cartograph then
# does a further re-load with another 10% changed (generate.py --generation 2) and serves
# SERVE_SECONDS of `wrk -t2 -c16` list requests. Rates are articles/s (cartograph's objects/s —
# articles + authors + tags it touched — are shown too), min and median of RUNS runs.
#
# Issue 14's targets, judged at 100k (or the largest size run, when INGEST_MAX is lower):
#   first load cartograph/sqlite-utils >= 1.5x (cartograph/C reported too);
#   re-load (10% changed) cartograph/sqlite-utils' re-load >= 4x;
#   disk: news.sqlite + its -wal while the server runs, after the first load and the re-load, over
#     sqlite-utils' db + wal after its first load and re-load <= 1.5x; the further re-load grows
#     cartograph's files by <= 10%;
#   memory: the server's VmHWM over the whole run (loads and serving) < 150 MiB; and on a fresh
#     server, one POST of TINY_OBJECTS (200,000) tiny objects {"id": k}: (VmHWM after - VmRSS before)
#     / body bytes < 8x, with VmRSS a few seconds later (memory given back) reported;
#   growth 10k -> 1M (INGEST_FULL=1 only): cartograph's cost per article at 1M / at 10k <= the C
#     program's, in the same run.
# The last line starts with SUMMARY: every ratio against its target.
#
# Environment:
#   RUNS          runs per size (default 3)
#   POSTERS       concurrent posters for cartograph (default 2)
#   INGEST_MAX    largest size; sizes are 10k, 100k, 1M up to it (default 100000, or 1000000 with
#                 INGEST_FULL=1 — the 1M size adds minutes per run, so a plain `make bench` skips it)
#   INGEST_FULL   1: include 1M
#   INGEST_PERF   first (or 1) / reload: also `perf record -g` cartograph during one first load (or
#                 re-load) of the largest size and write the top symbols to bench/out/ingest-perf.txt
#   SERVE_SECONDS seconds of wrk after the loads (default 5)
#   TINY_OBJECTS  objects in the tiny-object payload (default 200000); TINY_TIMEOUT seconds curl waits
#                 for its answer (default 300)
#   SCRATCH       SwiftPM scratch path (default .build-ingest)
# Output: bench/out/ingest.txt. Only 127.0.0.1 is contacted.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
POSTERS=${POSTERS:-2}
INGEST_FULL=${INGEST_FULL:-0}
INGEST_MAX=${INGEST_MAX:-$([ "$INGEST_FULL" = 1 ] && echo 1000000 || echo 100000)}
INGEST_PERF=${INGEST_PERF:-0}
case "$INGEST_PERF" in 1|first) perf_phase=first ;; reload) perf_phase=reload ;; *) perf_phase=none ;; esac
SERVE_SECONDS=${SERVE_SECONDS:-5}
TINY_OBJECTS=${TINY_OBJECTS:-200000}
TINY_TIMEOUT=${TINY_TIMEOUT:-300}
SCRATCH=${SCRATCH:-.build-ingest}
[ "$POSTERS" -ge 1 ] || { echo "POSTERS must be at least 1" >&2; exit 2; }
out=bench/out; mkdir -p "$out"
. bench/deps.sh   # g++, simdjson and SQLite headers, wrk, sqlite-utils

sizes=()
for n in 10000 100000 1000000; do [ "$n" -le "$INGEST_MAX" ] && sizes+=("$n"); done
[ ${#sizes[@]} -gt 0 ] || { echo "INGEST_MAX=$INGEST_MAX is below the smallest size (10000)" >&2; exit 1; }
max=${sizes[${#sizes[@]}-1]}
target=$max; [ "$max" -gt 100000 ] && target=100000   # the size issue 14's targets are judged at

swift build -c release --scratch-path "$SCRATCH" --product cartograph >/dev/null
bin=$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)
g++ -O2 -std=c++17 -o "$out/ingest_reference" bench/reference/ingest_reference.cpp -lsimdjson -lsqlite3

work=$(mktemp -d)
server_pid=""; perf_pid=""
cleanup() {
  [ -n "$perf_pid" ] && kill -INT "$perf_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done   # posters, wrk
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

python3 bench/ingest/generate.py --articles "$max" --out "$work/first" 2>"$work/gen-first.txt"
python3 bench/ingest/generate.py --articles "$max" --out "$work/reload" --changed 0.1 2>"$work/gen-reload.txt"
python3 bench/ingest/generate.py --articles "$max" --out "$work/reload2" --changed 0.1 --generation 2 2>"$work/gen-reload2.txt"
files() { ls "$work/$1"/batch-*.json | head -n $(( $2 / 1000 )); }   # the first N/1000 batches of a set

# post_phase PORT KEY SET N: the first N/1000 batches of SET from $POSTERS concurrent posters (poster i
# takes files i, i+P, …); prints the summed counts, batches and the phase's wall time in seconds.
post_phase() {
  local port=$1 key=$2 set=$3 n=$4 i j list=() mine pids=() failed=0
  mapfile -t list < <(files "$set" "$n")
  for (( i = 0; i < POSTERS; i++ )); do
    mine=()
    for (( j = i; j < ${#list[@]}; j += POSTERS )); do mine+=("${list[j]}"); done
    [ ${#mine[@]} -gt 0 ] || continue
    python3 bench/ingest/post.py "$port" "$key" "${mine[@]}" >"$work/poster-$i.json" &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || failed=1; done
  [ "$failed" = 0 ] || { echo "cartograph: a poster failed ($set, $n articles)" >&2; exit 1; }
  python3 - "${#list[@]}" "$work"/poster-*.json <<'PY'
import json, sys
expected, parts = int(sys.argv[1]), [json.load(open(p)) for p in sys.argv[2:]]
total = {k: sum(p[k] for p in parts) for k in ("inserted", "updated", "unchanged", "deleted", "batches")}
if total["batches"] != expected:
    sys.exit("posters posted %d batches, expected %d" % (total["batches"], expected))
total["seconds"] = round(max(p["end"] for p in parts) - min(p["start"] for p in parts), 6)
total["posters"] = len(parts)
print(json.dumps(total))
PY
  rm -f "$work"/poster-*.json
}

# The articles model and mapping (shared with bench/query.sh).
model=$(cat bench/ingest/model.json)
mapping=$(cat bench/ingest/mapping.json)
token=bench-ingest-admin-token

hwm_kib() { awk '/^VmHWM/{print $2}' "/proc/$1/status"; }
json_field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
wchar() { awk '/^wchar/{print $2}' "/proc/$1/io"; }
# bytes FILE...: their summed sizes (a missing file counts 0).
bytes() { local f total=0; for f in "$@"; do [ -f "$f" ] && total=$(( total + $(stat -c %s "$f") )); done; echo "$total"; }

# start_server DATA [flags...]: a fresh release server on a free port; sets server_pid, port, url.
start_server() {
  local data=$1; shift
  "$bin/cartograph" serve --host 127.0.0.1 --port 0 --data-dir "$data" --admin-token "$token" --log-level notice "$@" \
    >"$work/server.log" 2>&1 &
  server_pid=$!
  port=""
  for _ in $(seq 1 400); do port=$(grep -o ' port=[0-9]*' "$work/server.log" | head -1 | cut -d= -f2 || true); [ -n "$port" ] && break; sleep 0.05; done
  [ -n "$port" ] || { cat "$work/server.log" >&2; exit 1; }
  url="http://127.0.0.1:$port"
}
stop_server() { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; server_pid=""; }
# new_tenant: creates tenant `bench` as the admin; prints its API key.
new_tenant() {
  curl -sf -X POST "$url/v1/tenants" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d '{"id":"bench"}' \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["apiKey"])'
}

# One cartograph run at size $1 (run $2): appends "first|reload|reload2 <articles/s> <objects/s> <VmHWM KiB>
# <bytes written> <store bytes>" to $work/cg-$1 (store bytes: news.sqlite + news.sqlite-wal, server
# running), then "<requests/s> <non-2xx> <VmHWM KiB>" of the serving phase to $work/serve-$1.
run_cartograph() {
  local n=$1 run=$2 data="$work/cg-data" key phase result secs objects written store
  rm -rf "$data"
  start_server "$data"
  key=$(new_tenant)
  curl -sf -o /dev/null -X PUT "$url/v1/tenants/bench/models/news" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d "$model"
  curl -sf -o /dev/null -X PUT "$url/v1/tenants/bench/models/news/mappings/articles" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d "$mapping"
  store="$data/tenants/bench/news.sqlite"
  for phase in first reload reload2; do
    if [ "$phase" = "$perf_phase" ] && [ "$n" = "$max" ] && [ "$run" = 1 ]; then
      perf record -g -o "$work/perf.data" -p "$server_pid" >/dev/null 2>&1 &
      perf_pid=$!; sleep 0.5
    fi
    written=$(wchar "$server_pid")
    result=$(post_phase "$port" "$key" "$phase" "$n")
    sleep 1   # a checkpoint still running on the server's own thread belongs to this load's writes
    written=$(( $(wchar "$server_pid") - written ))
    if [ -n "$perf_pid" ]; then
      kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true; perf_pid=""
      { echo "# perf record -g -p <cartograph> during the $phase of $n articles ($POSTERS posters); perf report --no-children, top symbols"
        # (perf and grep stop early when head has its lines: not a failure)
        { perf report -i "$work/perf.data" --no-children --stdio --sort symbol 2>/dev/null | grep -E '^ +[0-9.]+%' | head -40; } || true
        echo; echo "# with children (inclusive time), top entries"
        { perf report -i "$work/perf.data" --children --stdio --sort symbol 2>/dev/null | grep -E '^ +[0-9.]+%' | head -60; } || true
      } >"$out/ingest-perf.txt"
    fi
    if [ ! -f "$store" ]; then
      echo "cartograph's store is not at $store; the data directory holds:" >&2; find "$data" -type f >&2; exit 1
    fi
    secs=$(json_field "$result" seconds)
    objects=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(r["inserted"]+r["updated"]+r["unchanged"])' "$result")
    echo "$phase $(awk -v n="$n" -v s="$secs" 'BEGIN{printf "%.1f", n/s}') $(awk -v o="$objects" -v s="$secs" 'BEGIN{printf "%.1f", o/s}') $(hwm_kib "$server_pid") $written $(bytes "$store" "$store-wal")" >>"$work/cg-$n"
    echo "  cartograph $n $phase: $result; files $(bytes "$store") + wal $(bytes "$store-wal") bytes" >>"$work/detail.txt"
  done
  if [ "$run" = 1 ]; then   # where a batch's time goes at this store size: a dry run with ?explain=true (stores nothing)
    echo "  $n: $(cd "$data" && find . -type f | sort | tr '\n' ' ')" >>"$work/files.txt"
    curl -sf -X POST "$url/v1/tenants/bench/models/news/mappings/articles/payloads?explain=true" -H "Authorization: Bearer $key" \
      -H 'Content-Type: application/json' --data-binary @"$(files first 1000 | head -1)" \
      | python3 -c 'import json,sys; t=json.load(sys.stdin)["timings"]; print("  '"$n"' articles stored: " + ", ".join("%s %.1f ms" % (k, v) for k, v in t.items()))' \
      >>"$work/phases.txt"
  fi
  local total
  total=$(curl -sf "$url/v1/tenants/bench/models/news/entities/Article/objects?count=true&limit=1" -H "Authorization: Bearer $key" \
          | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
  [ "$total" = "$n" ] || { echo "cartograph stored $total articles, expected $n" >&2; exit 1; }
  # Serving after the loads: the whole run's peak RSS covers ingest and serving.
  local rps non2xx
  if wrk -t2 -c16 -d"${SERVE_SECONDS}s" -H "Authorization: Bearer $key" \
       "$url/v1/tenants/bench/models/news/entities/Article/objects?limit=50&orderBy=-publishedAt" >"$work/wrk.txt" 2>&1; then
    rps=$(awk '/Requests\/sec/{print $2}' "$work/wrk.txt")
    non2xx=$(awk '/Non-2xx/{print $NF}' "$work/wrk.txt"); non2xx=${non2xx:-0}
  else
    rps=0; non2xx=failed; sed 's/^/    wrk: /' "$work/wrk.txt" >>"$work/detail.txt"
  fi
  echo "$rps $non2xx $(hwm_kib "$server_pid")" >>"$work/serve-$n"
  echo "  cartograph $n serving ${SERVE_SECONDS}s (wrk -t2 -c16, list of 50 by -publishedAt): $rps req/s, non-2xx $non2xx, VmHWM $(hwm_kib "$server_pid") KiB" >>"$work/detail.txt"
  stop_server
  rm -rf "$data"
}

# One run of an in-process loader ($1: c | su) at size $2: appends "first|reload <articles/s> <db + wal bytes
# after the loader exited> <bytes written, C only>" to $work/$1-$2.
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
    echo "$phase $(awk -v n="$n" -v s="$secs" 'BEGIN{printf "%.1f", n/s}') $(bytes "$db" "$db-wal") $(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("bytesWritten", 0))' "$result")" >>"$work/$tool-$n"
    echo "  $tool $n $phase: $result; files $(bytes "$db") + wal $(bytes "$db-wal") bytes" >>"$work/detail.txt"
  done
  rm -f "$db" "$db-wal" "$db-shm"
}

# The tiny-object payload (run $1): on a fresh server, one POST of TINY_OBJECTS objects {"id": k}, measured by
# bench/matrix/server.py (shared with the workload matrix). Appends "<HTTP status|failed> <seconds> <VmRSS before>
# <VmHWM after> <VmRSS 3 s after> <body bytes>" (KiB) to $work/tiny. Whatever the server does (413, 503 after the
# request time limit, dying), the line is written.
run_tiny() {
  local result line status secs before hwm after size
  result=$(python3 bench/matrix/server.py tiny "$bin/cartograph" "$work/tiny.json" "$TINY_TIMEOUT") \
    || result="failed 0 0 0 0 $(stat -c %s "$work/tiny.json")"
  line=$(head -1 <<<"$result")
  echo "$line" >>"$work/tiny"
  read -r status secs before hwm after size <<<"$line"
  echo "  tiny $TINY_OBJECTS objects ($size bytes): HTTP $status in ${secs}s, VmRSS before $before KiB, VmHWM after $hwm KiB, VmRSS 3 s later $after KiB; answer: $(sed -n 2p <<<"$result")" >>"$work/detail.txt"
}
python3 -c 'import sys; sys.path.insert(0, "bench/matrix"); import server; server.write_tiny_body(sys.argv[2], int(sys.argv[1]))' \
  "$TINY_OBJECTS" "$work/tiny.json"

# Column $2 of the lines of file $1 whose phase is $3, sorted; or ($3 empty) of every line.
col() { awk -v p="${3-}" -v c="$2" 'p=="" || $1==p{print $c}' "$1" | sort -g; }
median() { awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
minimum() { head -1; }
maximum() { tail -1; }
fmt() { awk '{printf "%.0f", $1}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.2f", a/b; else print "n/a" }'; }
# verdict VALUE OP LIMIT: met | NOT MET
verdict() { awk -v v="$1" -v o="$2" -v l="$3" 'BEGIN{ if (v == "n/a") { print "NOT MET"; exit }
  ok = (o == ">=" ? v >= l : o == "<=" ? v <= l : o == "<" ? v < l : v > l); print (ok ? "met" : "NOT MET") }'; }
mib() { awk -v k="$1" 'BEGIN{printf "%.1f", k/1024}'; }
mb() { awk -v b="$1" 'BEGIN{printf "%.1f", b/1e6}'; }

{
echo "# Ingestion — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, runs=$RUNS, sizes=${sizes[*]}, cartograph posters=$POSTERS"
echo "# machine at start: $(uptime | sed 's/.*load average/load average/')"
top -bn1 | sed -n '7,12p' | sed 's/^/#   /'
echo "# data: $(cat "$work/gen-first.txt"); re-load set: $(sed 's/.*, //' "$work/gen-reload.txt"); further re-load set: $(sed 's/^[^)]*), //' "$work/gen-reload2.txt")"
} | tee "$out/ingest.txt"

: >"$work/detail.txt"; : >"$work/phases.txt"; : >"$work/files.txt"; : >"$work/tiny"
for run in $(seq 1 "$RUNS"); do
  for n in "${sizes[@]}"; do   # interleaved, so drift on a shared machine hits all three alike
    run_cartograph "$n" "$run"
    run_loader c "$n"
    run_loader su "$n"
  done
  run_tiny "$run"
done

{
echo
echo "## Articles/s (min / median of $RUNS runs); 1,000 articles per batch, one transaction per batch; cartograph from $POSTERS concurrent posters"
printf "%-8s %-7s %-24s %-24s %-24s %-9s %-9s %s\n" size load "cartograph" "C (simdjson+SQLite)" "sqlite-utils upsert_all" "cg/C" "cg/su" "cartograph objects/s (median)"
for n in "${sizes[@]}"; do
  for phase in first reload; do
    cg_min=$(col "$work/cg-$n" 2 $phase | minimum); cg_med=$(col "$work/cg-$n" 2 $phase | median)
    c_min=$(col "$work/c-$n" 2 $phase | minimum); c_med=$(col "$work/c-$n" 2 $phase | median)
    su_min=$(col "$work/su-$n" 2 $phase | minimum); su_med=$(col "$work/su-$n" 2 $phase | median)
    obj_med=$(col "$work/cg-$n" 3 $phase | median)
    printf "%-8s %-7s %-24s %-24s %-24s %-9s %-9s %s\n" "$n" "$phase" \
      "$(echo "$cg_min" | fmt) / $(echo "$cg_med" | fmt)" "$(echo "$c_min" | fmt) / $(echo "$c_med" | fmt)" \
      "$(echo "$su_min" | fmt) / $(echo "$su_med" | fmt)" "$(ratio "$cg_med" "$c_med")" "$(ratio "$cg_med" "$su_med")" \
      "$(echo "$obj_med" | fmt)"
  done
done

echo
echo "## Targets (issue 14; medians of $RUNS runs unless noted; judged at $target)"
for n in "${sizes[@]}"; do
  cg_first=$(col "$work/cg-$n" 2 first | median); cg_reload=$(col "$work/cg-$n" 2 reload | median)
  cg_reload2=$(col "$work/cg-$n" 2 reload2 | median)
  c_first=$(col "$work/c-$n" 2 first | median); su_first=$(col "$work/su-$n" 2 first | median)
  su_reload=$(col "$work/su-$n" 2 reload | median)
  r=$(ratio "$cg_first" "$su_first")
  printf "%-8s first load cartograph/sqlite-utils:  %sx (target >= 1.5x) %s; cartograph/C %sx\n" "$n" "$r" "$(verdict "$r" '>=' 1.5)" "$(ratio "$cg_first" "$c_first")"
  r=$(ratio "$cg_reload" "$su_reload")
  printf "%-8s re-load (10%% changed) cartograph/sqlite-utils' re-load: %sx (target >= 4x) %s\n" "$n" "$r" "$(verdict "$r" '>=' 4)"
  cg_disk1=$(col "$work/cg-$n" 6 first | median); cg_disk=$(col "$work/cg-$n" 6 reload | median)
  su_disk1=$(col "$work/su-$n" 3 first | median); su_disk=$(col "$work/su-$n" 3 reload | median)
  c_disk=$(col "$work/c-$n" 3 reload | median)
  r=$(ratio "$cg_disk" "$su_disk")
  printf "%-8s disk after first load + re-load: cartograph %s MB (news.sqlite + -wal, server running) / sqlite-utils %s MB (db + wal, loader exited) = %sx (target <= 1.5x) %s; after the first load alone %sx (%s / %s MB); C %s MB\n" \
    "$n" "$(mb "$cg_disk")" "$(mb "$su_disk")" "$r" "$(verdict "$r" '<=' 1.5)" "$(ratio "$cg_disk1" "$su_disk1")" "$(mb "$cg_disk1")" "$(mb "$su_disk1")" "$(mb "$c_disk")"
  g=$(awk '$1=="reload"{a=$6} $1=="reload2"{printf "%.2f\n", (a > 0 ? 100*($6-a)/a : 0)}' "$work/cg-$n" | sort -g | median)
  printf "%-8s a further re-load (another 10%% changed, newer): cartograph's files grow %+.1f%% (median; %s -> %s MB) (target <= 10%%) %s; it ran at %s articles/s\n" \
    "$n" "$g" "$(mb "$cg_disk")" "$(mb "$(col "$work/cg-$n" 6 reload2 | median)")" "$(verdict "$g" '<=' 10)" "$(echo "$cg_reload2" | fmt)"
  peak=$(col "$work/serve-$n" 3 | maximum)
  printf "%-8s peak RSS over ingest and serving (VmHWM, worst run): %s MiB (target < 150 MiB) %s; after the first load %s MiB, after the re-loads %s MiB (worst runs)\n" \
    "$n" "$(mib "$peak")" "$(verdict "$(mib "$peak")" '<' 150)" "$(mib "$(col "$work/cg-$n" 4 first | maximum)")" "$(mib "$(col "$work/cg-$n" 4 reload2 | maximum)")"
done
# The tiny-object payload: worst run (highest ratio). A run that did not answer 200 fails the target; its
# ratio (memory at the moment curl gave up or the error came back) is still shown.
tiny_fail=$(awk '$1!="200"{print $1}' "$work/tiny" | head -1)
tiny_r=$(awk '$4>0{printf "%.1f\n", ($4-$3)*1024/$6}' "$work/tiny" | sort -g | maximum); tiny_r=${tiny_r:-n/a}
tiny_verdict=$([ -n "$tiny_fail" ] && echo "NOT MET (HTTP $tiny_fail)" || verdict "$tiny_r" '<' 8)
tiny_secs=$(awk '{print $2}' "$work/tiny" | sort -g | median | awk '{printf "%.2f", $1}')
tiny_size=$(awk '{print $6; exit}' "$work/tiny")
printf "tiny     one POST of %s objects {\"id\": k} (%s bytes), fresh server: HTTP %s, %ss (median); (VmHWM after - VmRSS before) / body = %sx (worst run; target < 8x) %s\n" \
  "$TINY_OBJECTS" "$tiny_size" "$(awk '{print $1}' "$work/tiny" | sort | uniq -c | awk '{printf "%s%s x%d", (NR>1?", ":""), $2, $1}')" \
  "$tiny_secs" "$tiny_r" "$tiny_verdict"
printf "         VmRSS before %s MiB, VmHWM after %s MiB, VmRSS 3 s after the answer %s MiB (worst run)\n" \
  "$(mib "$(col "$work/tiny" 3 | maximum)")" "$(mib "$(col "$work/tiny" 4 | maximum)")" "$(mib "$(col "$work/tiny" 5 | maximum)")"

echo
echo "## Cost per article (median first load, µs/article) and growth against 10k"
declare -A base
for n in "${sizes[@]}"; do
  line=$(printf "%-8s" "$n")
  for tool in cg c su; do
    cost=$(awk -v r="$(col "$work/$tool-$n" 2 first | median)" 'BEGIN{printf "%.2f", 1e6/r}')
    base[$tool]=${base[$tool]:-$cost}
    case $tool in cg) name=cartograph;; c) name=C;; su) name=sqlite-utils;; esac
    line="$line  $name $cost ($(awk -v c="$cost" -v b="${base[$tool]}" 'BEGIN{printf "%.2fx", c/b}'))"
  done
  echo "$line"
done
growth_cg=""; growth_c=""
if [ "$max" = 1000000 ]; then   # the growth target is judged from 10k to 1M, against C's growth in this run
  growth_cg=$(ratio "$(col "$work/cg-10000" 2 first | median)" "$(col "$work/cg-1000000" 2 first | median)")
  growth_c=$(ratio "$(col "$work/c-10000" 2 first | median)" "$(col "$work/c-1000000" 2 first | median)")
  echo "growth 10k -> 1M: cartograph ${growth_cg}x, C ${growth_c}x (target: cartograph's <= C's) $(verdict "$growth_cg" '<=' "$growth_c")"
else
  echo "(growth target not judged: 1M not run, INGEST_MAX=$INGEST_MAX; it needs INGEST_FULL=1)"
fi
echo
echo "## Bytes written per article on a first load (median; cartograph: the server's write(2) bytes — WAL, checkpoints, responses; C: its own, final checkpoint included)"
for n in "${sizes[@]}"; do
  awk -v n="$n" -v cg="$(col "$work/cg-$n" 5 first | median)" -v c="$(col "$work/c-$n" 4 first | median)" \
    'BEGIN{printf "%-8s cartograph %.1f KB  C %.1f KB\n", n, cg/n/1024, c/n/1024}'
done
echo
echo "## Serving after the loads (wrk -t2 -c16 -d${SERVE_SECONDS}s, GET …/Article/objects?limit=50&orderBy=-publishedAt; median req/s)"
for n in "${sizes[@]}"; do
  printf "%-8s %s req/s (non-2xx in the runs: %s)\n" "$n" "$(col "$work/serve-$n" 1 | median | fmt)" "$(awk '{print $2}' "$work/serve-$n" | paste -sd, -)"
done
echo
echo "## Cartograph's data directory after the loads (run 1)"
cat "$work/files.txt"
echo
echo "## Cartograph's phases for one more 1,000-article batch (already stored articles) once N are stored (run 1, ?explain=true)"
cat "$work/phases.txt"
echo
echo "## Every load (counts and seconds as each tool reported them)"
cat "$work/detail.txt"
echo
# One line, every ratio against its target, at $target (growth: 10k -> 1M).
t=$target
first_su=$(ratio "$(col "$work/cg-$t" 2 first | median)" "$(col "$work/su-$t" 2 first | median)")
first_c=$(ratio "$(col "$work/cg-$t" 2 first | median)" "$(col "$work/c-$t" 2 first | median)")
reload_su=$(ratio "$(col "$work/cg-$t" 2 reload | median)" "$(col "$work/su-$t" 2 reload | median)")
disk_su=$(ratio "$(col "$work/cg-$t" 6 reload | median)" "$(col "$work/su-$t" 3 reload | median)")
disk_growth=$(awk '$1=="reload"{a=$6} $1=="reload2"{printf "%.1f\n", (a > 0 ? 100*($6-a)/a : 0)}' "$work/cg-$t" | sort -g | median)
peak_mib=$(awk -v k="$(col "$work/serve-$t" 3 | maximum)" 'BEGIN{printf "%.0f", k/1024}')
tiny_text="tiny=${tiny_r}x (<8 $tiny_verdict)"
if [ -n "$growth_cg" ]; then growth_text="growth cg=${growth_cg}x C=${growth_c}x ($(verdict "$growth_cg" '<=' "$growth_c"))"; else growth_text="growth (not run: INGEST_FULL=1)"; fi
echo "SUMMARY size=$t first/su=${first_su}x (>=1.5 $(verdict "$first_su" '>=' 1.5)) first/C=${first_c}x reload/su=${reload_su}x (>=4 $(verdict "$reload_su" '>=' 4))" \
  "disk/su=${disk_su}x (<=1.5 $(verdict "$disk_su" '<=' 1.5)) disk+reload=$(printf '%+.0f' "$disk_growth")% (<=10% $(verdict "$disk_growth" '<=' 10))" \
  "peakRSS=${peak_mib}MiB (<150 $(verdict "$peak_mib" '<' 150)) $tiny_text $growth_text"
} | tee -a "$out/ingest.txt"
