#!/usr/bin/env bash
# The connections section of `make bench` (issue 6); also runnable alone.
#
# Workload: P projects, each naming its owner by `user_id`, connected by foreign key to P/10 users
# (`"connections": [{"relationship": "user", "connectedBy": "userID"}]`). Projects are POSTed in
# batches of 1,000; the users in one separate payload. Three loads per size, interleaved in every run,
# each on a fresh server and data directory:
#   plain        users, then projects through a mapping WITHOUT the connection — the plain ingestion
#                rate this section is measured against (same objects, same bytes);
#   users-first  users, then projects through the connected mapping (each batch: one lookup);
#   late         projects first (every connection waits, R-C5), then the users payload completes them.
# Reported: objects/s (projects + users) min/median of RUNS runs, and the cost ratio plain/connected
# (target: connections cost at most 1.5x plain ingestion, i.e. ratio <= 1.5), at 10k and 100k.
# Every load is checked: all P projects end up connected to the right user.
#
# Environment: RUNS (default 3), CONNECT_MAX (largest P, default 100000), SCRATCH (default .build-ingest).
# Output: bench/out/connect.txt. Only 127.0.0.1 is contacted.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
CONNECT_MAX=${CONNECT_MAX:-100000}
SCRATCH=${SCRATCH:-.build-ingest}
out=bench/out; mkdir -p "$out"

sizes=()
for n in 10000 100000; do [ "$n" -le "$CONNECT_MAX" ] && sizes+=("$n"); done
[ ${#sizes[@]} -gt 0 ] || { echo "CONNECT_MAX=$CONNECT_MAX is below the smallest size (10000)" >&2; exit 1; }

source scripts/server-lib.sh
release_binary "$SCRATCH"

# Payloads: projects in batches of 1,000 (owner drawn at random from the users), users in one payload.
python3 - "$work" "${sizes[@]}" <<'PY'
import json, os, random, sys
work, sizes = sys.argv[1], [int(n) for n in sys.argv[2:]]
for n in sizes:
    rng = random.Random(n)
    users = n // 10
    d = os.path.join(work, str(n)); os.makedirs(d)
    for start in range(0, n, 1000):
        batch = [{"id": i, "name": "Project %d" % i, "user_id": rng.randrange(users)} for i in range(start, min(n, start + 1000))]
        with open(os.path.join(d, "projects-%06d.json" % start), "w") as f: json.dump({"projects": batch}, f)
    with open(os.path.join(d, "users.json"), "w") as f:
        json.dump({"users": [{"id": i, "name": "User %d" % i} for i in range(users)]}, f)
PY

# The poster: one keep-alive connection; argv: port key (mapping file)...; prints seconds.
cat >"$work/post.py" <<'PY'
import http.client, json, sys, time
port, key, pairs = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
conn = http.client.HTTPConnection("127.0.0.1", port)
headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
start = time.perf_counter()
for mapping, path in zip(pairs[::2], pairs[1::2]):
    with open(path, "rb") as f: body = f.read()
    conn.request("POST", "/v1/tenants/bench/models/work/mappings/%s/payloads" % mapping, body=body, headers=headers)
    response = conn.getresponse(); text = response.read()
    if response.status != 200: sys.exit("POST %s %s: %d %s" % (mapping, path, response.status, text[:2000]))
print("%.6f" % (time.perf_counter() - start))
PY

model='{"entities": [
  {"name": "User", "userInfo": {"identityAttributes": "userID"},
   "attributes": [{"name": "userID", "type": "integer64"}, {"name": "name", "type": "string"}],
   "relationships": [{"name": "projects", "destination": "Project", "toMany": true, "inverse": "user"}]},
  {"name": "Project", "userInfo": {"identityAttributes": "projectID"},
   "attributes": [{"name": "projectID", "type": "integer64"}, {"name": "name", "type": "string"}, {"name": "userID", "type": "integer64"}],
   "relationships": [{"name": "user", "destination": "User", "inverse": "projects"}]}]}'
plain='{"entity": "Project", "keyPath": "projects", "attributes": {"id": "projectID", "name": "name", "user_id": "userID"}}'
connected='{"entity": "Project", "keyPath": "projects", "attributes": {"id": "projectID", "name": "name", "user_id": "userID"},
  "connections": [{"relationship": "user", "connectedBy": "userID"}]}'
users='{"entity": "User", "keyPath": "users", "attributes": {"id": "userID", "name": "name"}}'
token=bench-connect-admin-token

# One load: $1 size, $2 order (plain | users-first | late); appends "<order> <objects/s>" to $work/res-$1.
run_load() {
  local n=$1 order=$2 data="$work/data" key args=() f secs h=(-H 'Content-Type: application/json')
  rm -rf "$data"
  start_server "$bin/cartograph" "$data" --admin-token "$token" --log-level notice
  key=$(curl -sf -X POST "$url/v1/tenants" -H "Authorization: Bearer $token" "${h[@]}" -d '{"id":"bench"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["apiKey"])')
  curl -sf -o /dev/null -X PUT "$url/v1/tenants/bench/models/work" -H "Authorization: Bearer $key" "${h[@]}" -d "$model"
  for m in plain connected users; do
    curl -sf -o /dev/null -X PUT "$url/v1/tenants/bench/models/work/mappings/$m" -H "Authorization: Bearer $key" "${h[@]}" -d "${!m}"
  done
  local projects_mapping=connected; [ "$order" = plain ] && projects_mapping=plain
  [ "$order" != late ] && args+=(users "$work/$n/users.json")
  for f in "$work/$n"/projects-*.json; do args+=("$projects_mapping" "$f"); done
  [ "$order" = late ] && args+=(users "$work/$n/users.json")
  secs=$(python3 "$work/post.py" "$port" "$key" "${args[@]}")
  echo "$order $(awk -v n="$n" -v s="$secs" 'BEGIN{printf "%.1f", (n + n/10)/s}')" >>"$work/res-$n"
  if [ "$order" != plain ]; then   # every project is connected, to the user it names
    local wrong
    wrong=$(curl -sf -X POST "$url/v1/tenants/bench/models/work/entities/Project/query" -H "Authorization: Bearer $key" "${h[@]}" \
            -d '{"where": "user == nil OR user.userID != userID", "count": true, "limit": 1}' \
            | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
    [ "$wrong" = 0 ] || { echo "$order $n: $wrong projects are not connected to their user" >&2; exit 1; }
  fi
  stop_server
}

{
echo "# Connections — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, runs=$RUNS, project counts=${sizes[*]} (users = projects/10)"
echo "# machine at start: $(uptime | sed 's/.*load average/load average/')"
} | tee "$out/connect.txt"
for run in $(seq 1 "$RUNS"); do
  for n in "${sizes[@]}"; do
    for order in plain users-first late; do run_load "$n" "$order"; done   # interleaved
  done
done

stat() { awk -v o="$2" '$1==o{print $2}' "$1" | sort -g | awk '{a[NR]=$1} END{printf "%s %s", a[1], a[int((NR+1)/2)]}'; }
{
echo
echo "## Objects/s (projects + users; min / median of $RUNS runs) and cost relative to plain ingestion (median; target <= 1.5x)"
printf "%-8s %-22s %-22s %-22s %-18s %s\n" projects plain users-first "late (users after)" "cost users-first" "cost late"
for n in "${sizes[@]}"; do
  read -r p_min p_med <<<"$(stat "$work/res-$n" plain)"
  read -r u_min u_med <<<"$(stat "$work/res-$n" users-first)"
  read -r l_min l_med <<<"$(stat "$work/res-$n" late)"
  printf "%-8s %-22s %-22s %-22s %-18s %s\n" "$n" "$(printf '%.0f / %.0f' "$p_min" "$p_med")" "$(printf '%.0f / %.0f' "$u_min" "$u_med")" \
    "$(printf '%.0f / %.0f' "$l_min" "$l_med")" \
    "$(awk -v p="$p_med" -v c="$u_med" 'BEGIN{r=p/c; printf "%.2fx %s", r, (r<=1.5?"met":"NOT MET")}')" \
    "$(awk -v p="$p_med" -v c="$l_med" 'BEGIN{r=p/c; printf "%.2fx %s", r, (r<=1.5?"met":"NOT MET")}')"
done
if [ ${#sizes[@]} -gt 1 ]; then
  echo
  echo "## Linearity: per-object cost at ${sizes[1]} against ${sizes[0]} (median; 1.00 = perfectly linear)"
  for order in plain users-first late; do
    a=$(stat "$work/res-${sizes[0]}" $order | cut -d' ' -f2); b=$(stat "$work/res-${sizes[1]}" $order | cut -d' ' -f2)
    awk -v o="$order" -v a="$a" -v b="$b" 'BEGIN{printf "%-12s %.2fx\n", o, a/b}'
  done
fi
} | tee -a "$out/connect.txt"
