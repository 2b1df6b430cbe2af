#!/usr/bin/env bash
# `make bench`: benchmarks reported as ratios against a reference measured in the same run.
#   1. JSON reader MB/s vs Foundation's JSONSerialization (cartograph-bench, release).
#   2. HTTP: wrk -t2 -c64 against cartograph and against a minimal C libmicrohttpd server serving the
#      same bytes, for GET /healthz and an authenticated GET /v1/tenants/{t}.
#   3. The store section: bench/store.sh (STORE_OBJECTS, default 1000000); 3b. queries: bench/query.sh;
#      3c. the to-many filter: bench/tomany.sh.
#   4. Ingestion: bench/ingest.sh.  4b. The workload matrix (five shapes of API data): bench/matrix.sh.
#   5. Connections: bench/connect.sh.
#   6. Noisy neighbour: bench/tenants.sh.
# Environment: RUNS (default 3), DURATION seconds per wrk run (default 5), CONNECTIONS (default 64).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}; DURATION=${DURATION:-5}; CONNECTIONS=${CONNECTIONS:-64}
out=bench/out; mkdir -p "$out"
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
command -v wrk >/dev/null || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq wrk; }
command -v cc >/dev/null || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq gcc; }

echo "# Cartograph benchmarks — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, runs=$RUNS"
swift build -c release --product cartograph >/dev/null
swift build -c release --product cartograph-bench >/dev/null
bin=$(swift build -c release --show-bin-path)

echo; "$bin/cartograph-bench" | tee "$out/core.txt"

echo; echo "## HTTP (wrk -t2 -c$CONNECTIONS -d${DURATION}s; requests/s, p50/p99 latency)"
cc -O2 -o "$out/mhd_reference" bench/reference/mhd_reference.c $(pkg-config --cflags --libs libmicrohttpd)
work=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
token=bench-admin-token
"$bin/cartograph" serve --host 127.0.0.1 --port 0 --data-dir "$work/data" --admin-token "$token" \
  --threads "$(nproc)" >"$work/server.log" 2>&1 &
for _ in $(seq 1 300); do port=$(grep -o ' port=[0-9]*' "$work/server.log" | head -1 | cut -d= -f2 || true); [ -n "$port" ] && break; sleep 0.05; done
curl -sf -X POST "http://127.0.0.1:$port/v1/tenants" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d '{"id":"bench"}' >/dev/null
health=$(curl -sf "http://127.0.0.1:$port/healthz")
tenant=$(curl -sf "http://127.0.0.1:$port/v1/tenants/bench" -H "Authorization: Bearer $token")
refport=$((port + 1)); while ss -ltn | grep -q ":$refport "; do refport=$((refport + 1)); done
"$out/mhd_reference" "$refport" "$(nproc)" "$token" "$health" "$tenant" &
sleep 0.3

# One wrk run -> "rps p50_ms p99_ms"
measure() {
  local url=$1; shift
  wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" "$url" >"$work/wrk.txt"
  local rps p50 p99
  rps=$(awk '/Requests\/sec/{print $2}' "$work/wrk.txt")
  p50=$(awk '$1=="50%"{print $2}' "$work/wrk.txt"); p99=$(awk '$1=="99%"{print $2}' "$work/wrk.txt")
  echo "$rps $(to_ms "$p50") $(to_ms "$p99")"
}
to_ms() { awk -v v="$1" 'BEGIN{ if (v ~ /us$/) {sub(/us/,"",v); print v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v); print v} else {sub(/s/,"",v); print v*1000} }'; }
stats() { sort -g | awk '{a[NR]=$1} END{printf "min %.0f median %.0f", a[1], a[int((NR+1)/2)]}'; }

for endpoint in healthz tenant; do
  if [ $endpoint = healthz ]; then path=/healthz; auth=(); else path=/v1/tenants/bench; auth=(-H "Authorization: Bearer $token"); fi
  : >"$work/ours"; : >"$work/ref"
  for _ in $(seq 1 "$RUNS"); do   # interleave so drift on a shared machine hits both alike
    measure "http://127.0.0.1:$port$path" "${auth[@]}" >>"$work/ours"
    measure "http://127.0.0.1:$refport$path" "${auth[@]}" >>"$work/ref"
  done
  ours_med=$(cut -d' ' -f1 "$work/ours" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
  ref_med=$(cut -d' ' -f1 "$work/ref" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
  printf "%-8s cartograph: %s req/s, p50 %s ms, p99 %s ms (median run)\n" "$endpoint" \
    "$(cut -d' ' -f1 "$work/ours" | stats)" "$(sort -k1,1g "$work/ours" | awk '{a[NR]=$2} END{print a[int((NR+1)/2)]}')" \
    "$(sort -k1,1g "$work/ours" | awk '{a[NR]=$3} END{print a[int((NR+1)/2)]}')"
  printf "%-8s C reference: %s req/s, p50 %s ms, p99 %s ms (median run)\n" "" \
    "$(cut -d' ' -f1 "$work/ref" | stats)" "$(sort -k1,1g "$work/ref" | awk '{a[NR]=$2} END{print a[int((NR+1)/2)]}')" \
    "$(sort -k1,1g "$work/ref" | awk '{a[NR]=$3} END{print a[int((NR+1)/2)]}')"
  awk -v o="$ours_med" -v r="$ref_med" -v e="$endpoint" 'BEGIN{printf "%-8s ratio cartograph/C (median req/s): %.2f (target >= 0.70)\n", e, o/r}'
done | tee "$out/http.txt"

# 3. The store section runs its own servers: stop this section's first.
kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true
echo; SCRATCH=.build bench/store.sh
echo; bench/query.sh           # 3b. the filtered list over the ingestion articles: cartograph vs Datasette on sqlite-utils' database
echo; bench/tomany.sh          # 3c. "open, labelled L, newest first" over issues: ANY through a to-many vs Datasette's SQL
echo; bench/ingest.sh          # 4. ingestion: cartograph vs C (simdjson+SQLite) vs sqlite-utils; INGEST_FULL=1 adds 1M
echo; bench/matrix.sh          # 4b. the workload matrix: shapes a-e, rates and server CPU/object vs sqlite-utils (and C on a, b)
echo; bench/connect.sh         # 5. connections: plain vs connected (users first, late binding) at 10k and 100k projects
echo; bench/tenants.sh         # 6. noisy neighbour: tenant A's p99 alone vs while rate-limited tenant B floods
