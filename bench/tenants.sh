#!/usr/bin/env bash
# The noisy-neighbour section of `make bench` (R-S2 tenant rate limits); also runnable alone.
#
# Two tenants on one server, each with a model of 1,000 items. Tenant A is a well-behaved client: one
# keep-alive connection sending get-by-key GETs (`…/entities/Item/objects/<random id>`) paced at
# A_RATE requests/s, each timed from send to last byte (a small Python client). Tenant B floods:
# wrk with FLOOD_CONNECTIONS connections hammering small payload POSTs as fast as it can. Four
# phases per run, interleaved in every run:
#   quiet      A alone — the reference;
#   limited    A while B floods with B rate-limited (its own limit, PATCHed by the admin: B_RATE/s,
#              burst B_RATE) — what the rate limit is for;
#   unlimited  A while B floods with no limit (B's limit PATCHed to 0);
#   payloads   A while B, unlimited, posts 5 MiB payloads (LARGE_CONNECTIONS connections) as fast as it can.
# Reported (min / median of RUNS runs): A's p50 and p99 latency per phase, the ratio of A's median
# p99 flooded/quiet (target for every phase: <= 3x, issue 30: with default settings, whatever B does),
# and B's answers: 429s and 200s (in `limited`, B's 200s per second should be about B_RATE). Every A
# request must answer 200: A is never limited.
#
# Environment: RUNS (default 3), DURATION seconds per phase (default 8), A_RATE (default 250),
# FLOOD_CONNECTIONS (default 8), LARGE_CONNECTIONS (default 2), B_RATE (default 100), SCRATCH (default .build-tenants).
# Output: bench/out/tenants.txt. Only 127.0.0.1 is contacted.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
DURATION=${DURATION:-8}
A_RATE=${A_RATE:-250}
FLOOD_CONNECTIONS=${FLOOD_CONNECTIONS:-8}
LARGE_CONNECTIONS=${LARGE_CONNECTIONS:-2}
B_RATE=${B_RATE:-100}
SCRATCH=${SCRATCH:-.build-tenants}
out=bench/out; mkdir -p "$out"
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
command -v wrk >/dev/null || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq wrk; }

source scripts/server-lib.sh
release_binary "$SCRATCH"

# Tenant A's client: argv port key seconds rate; prints "p50_ms p99_ms requests non200".
cat >"$work/client.py" <<'PY'
import http.client, random, sys, time
port, key, seconds, rate = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
conn = http.client.HTTPConnection("127.0.0.1", port)
headers = {"Authorization": "Bearer " + key}
rng = random.Random(7)
latencies, failures = [], 0
interval = 1.0 / rate
start = time.perf_counter()
due = start
while True:
    now = time.perf_counter()
    if now - start >= seconds: break
    if due > now: time.sleep(due - now)
    due += interval
    sent = time.perf_counter()
    conn.request("GET", "/v1/tenants/a/models/m/entities/Item/objects/%d" % rng.randrange(1000), headers=headers)
    response = conn.getresponse(); response.read()
    latencies.append(time.perf_counter() - sent)
    if response.status != 200: failures += 1
latencies.sort()
pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000
print("%.3f %.3f %d %d" % (pick(0.50), pick(0.99), len(latencies), failures))
PY

# Tenant B's flood: POSTs one small payload; prints "B 429=<n> 200=<n> other=<n>".
cat >"$work/flood.lua" <<'LUA'
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) tooMany = 0; ok = 0; other = 0 end
function response(status, headers, body)
  if status == 429 then tooMany = tooMany + 1 elseif status == 200 then ok = ok + 1 else other = other + 1 end
end
function done(summary, latency, requests)
  local t429, t200, tother = 0, 0, 0
  for _, t in ipairs(threads) do t429 = t429 + t:get("tooMany"); t200 = t200 + t:get("ok"); tother = tother + t:get("other") end
  io.write(string.format("B 429=%d 200=%d other=%d\n", t429, t200, tother))
end
LUA

model='{"entities": [{"name": "Item", "userInfo": {"identityAttributes": "itemID"},
  "attributes": [{"name": "itemID", "type": "integer64"}, {"name": "name", "type": "string"}]}]}'
mapping='{"entity": "Item", "keyPath": "items", "attributes": {"id": "itemID", "name": "name"}}'
items=$(python3 -c 'import json; print(json.dumps({"items": [{"id": i, "name": "Item %d" % i} for i in range(1000)]}))')
token=bench-tenants-admin-token
data="$work/data"
start_server "$bin/cartograph" "$data" --admin-token "$token" --threads "$(nproc)" --log-level notice
json=(-H 'Content-Type: application/json')
admin=(-H "Authorization: Bearer $token")
declare -A keys
for t in a b; do
  keys[$t]=$(curl -sf -X POST "$url/v1/tenants" "${admin[@]}" "${json[@]}" -d "{\"id\":\"$t\"}" \
             | python3 -c 'import json,sys; print(json.load(sys.stdin)["apiKey"])')
  auth=(-H "Authorization: Bearer ${keys[$t]}")
  curl -sf -o /dev/null -X PUT "$url/v1/tenants/$t/models/m" "${auth[@]}" "${json[@]}" -d "$model"
  curl -sf -o /dev/null -X PUT "$url/v1/tenants/$t/models/m/mappings/items" "${auth[@]}" "${json[@]}" -d "$mapping"
  curl -sf -o /dev/null -X POST "$url/v1/tenants/$t/models/m/mappings/items/payloads" "${auth[@]}" "${json[@]}" -d "$items"
done
cat >>"$work/flood.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer ${keys[b]}"
wrk.body = '{"items": [{"id": 1, "name": "Item 1"}, {"id": 2, "name": "Item 2"}]}'
LUA
# The payloads phase's body: 5 MiB of items (B re-posts it: every object is read and compared again).
python3 -c 'import json, sys; items = []
while sum(map(len, items)) < 5 * 2**20: items.append(json.dumps({"id": len(items), "name": "Item %d of a larger payload" % len(items)}))
sys.stdout.write("{\"items\": [" + ",".join(items) + "]}")' >"$work/large.json"
sed -e '/^wrk.body/d' "$work/flood.lua" >"$work/flood-large.lua"
echo "wrk.body = io.open(\"$work/large.json\"):read(\"*a\")" >>"$work/flood-large.lua"
flood_url="$url/v1/tenants/b/models/m/mappings/items/payloads"
limit_b() { curl -sf -o /dev/null -X PATCH "$url/v1/tenants/b" "${admin[@]}" "${json[@]}" -d "{\"limits\": {\"requestsPerSecond\": $1, \"burst\": $2}}"; }

# One phase: $1 name (quiet | limited | unlimited | payloads); appends "<name> p50 p99 n 429s 200s" to $work/res.
phase() {
  local name=$1 a b="B 429=0 200=0 other=0"
  case $name in
    limited) limit_b "$B_RATE" "$B_RATE" ;;
    unlimited | payloads) limit_b 0 null ;;
  esac
  local script=flood.lua connections=$FLOOD_CONNECTIONS
  [ "$name" = payloads ] && script=flood-large.lua connections=$LARGE_CONNECTIONS
  if [ "$name" = quiet ]; then
    a=$(python3 "$work/client.py" "$port" "${keys[a]}" "$DURATION" "$A_RATE")
  else
    wrk -t1 -c"$connections" -d"$((DURATION + 2))s" --timeout 60s -s "$work/$script" "$flood_url" >"$work/wrk.txt" 2>&1 &
    local wrk_pid=$!
    sleep 1   # B is at full speed before A starts
    a=$(python3 "$work/client.py" "$port" "${keys[a]}" "$DURATION" "$A_RATE")
    wait "$wrk_pid"
    b=$(grep '^B ' "$work/wrk.txt")
  fi
  read -r p50 p99 n failures <<<"$a"
  [ "$failures" = 0 ] || { echo "phase $name: $failures of tenant A's requests were not 200" >&2; exit 1; }
  local t429 t200 tother
  t429=$(sed 's/.*429=\([0-9]*\).*/\1/' <<<"$b"); t200=$(sed 's/.*200=\([0-9]*\).*/\1/' <<<"$b"); tother=$(sed 's/.*other=\([0-9]*\).*/\1/' <<<"$b")
  [ "$tother" = 0 ] || { echo "phase $name: tenant B got $tother answers other than 200 and 429" >&2; exit 1; }
  echo "$name $p50 $p99 $n $t429 $t200" >>"$work/res"
}

{
echo "# Noisy neighbour — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, runs=$RUNS, ${DURATION}s per phase"
echo "# A: get-by-key GETs paced at $A_RATE/s on one connection; B: wrk -t1 -c$FLOOD_CONNECTIONS payload POSTs, limited to $B_RATE/s (burst $B_RATE) in 'limited'; wrk -t1 -c$LARGE_CONNECTIONS 5 MiB payload POSTs in 'payloads'"
echo "# machine at start: $(uptime | sed 's/.*load average/load average/')"
} | tee "$out/tenants.txt"
: >"$work/res"
for _ in $(seq 1 "$RUNS"); do
  for p in quiet limited unlimited payloads; do phase "$p"; done
done

col() { awk -v p="$2" -v c="$3" '$1==p{print $c}' "$1" | sort -g | awk '{a[NR]=$1} END{printf "%s %s", a[1], a[int((NR+1)/2)]}'; }
{
echo
echo "## Tenant A latency (ms; min / median of $RUNS runs) and B's answers (median per phase)"
printf "%-10s %-16s %-16s %-22s %-10s %-10s %s\n" phase "A p50" "A p99" "A p99 / quiet" "B 429s" "B 200s" "B 200s/s"
read -r _ quiet_p99 <<<"$(col "$work/res" quiet 3)"
for p in quiet limited unlimited payloads; do
  read -r p50_min p50_med <<<"$(col "$work/res" $p 2)"
  read -r p99_min p99_med <<<"$(col "$work/res" $p 3)"
  read -r _ b429 <<<"$(col "$work/res" $p 5)"
  read -r _ b200 <<<"$(col "$work/res" $p 6)"
  ratio=$(awk -v f="$p99_med" -v q="$quiet_p99" -v p="$p" 'BEGIN{r=f/q; t=""; if (p!="quiet") t=(r<=3?" met":" NOT MET"); printf "%.2fx%s", r, t}')
  rate=$(awk -v n="$b200" -v d="$DURATION" -v p="$p" 'BEGIN{ if (p=="quiet") print "-"; else printf "%.0f", n/(d+2) }')
  printf "%-10s %-16s %-16s %-22s %-10s %-10s %s\n" "$p" "$p50_min / $p50_med" "$p99_min / $p99_med" "$ratio" "$b429" "$b200" "$rate"
done
echo
echo "target: A's p99 in every phase <= 3x A's quiet p99 (issue 30); B's 200s/s in 'limited' close to $B_RATE (plus its burst once)."
} | tee -a "$out/tenants.txt"
