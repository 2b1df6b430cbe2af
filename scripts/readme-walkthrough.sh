#!/usr/bin/env bash
# Runs the README's walk-through verbatim against a fresh server on a free port, then checks the
# state it should have left. Usage: scripts/readme-walkthrough.sh path/to/cartograph
set -euo pipefail
binary=$(realpath "${1:-.build/debug/cartograph}")
repo=$(cd "$(dirname "$0")/.." && pwd)
source "$repo/scripts/server-lib.sh"
start_server "$binary" "$work/data"

# Extract the shell blocks between the walk-through markers.
awk '/<!-- walkthrough:start -->/{on=1; next} /<!-- walkthrough:end -->/{on=0}
     on && /^```sh$/{code=1; next} on && /^```$/{code=0; next} on && code' "$repo/README.md" >"$work/walkthrough.sh"

cd "$work"   # the walk-through reads data/admin.token relative to where it runs
output=$(CARTOGRAPH_URL="$url" bash -euo pipefail "$work/walkthrough.sh" 2>&1) || {
  echo "$output"; echo "walk-through failed"; exit 1; }
echo "$output"

expect() { grep -q -- "$1" <<<"$output" || { echo "walk-through output lacks: $1"; exit 1; }; }
expect '{"status":"ok"}'
expect '"id":"acme","apiKey":"cg_'
expect '"scope":"read"'
expect '"status":403'
expect "has scope 'read'"
expect '^204$'
expect '"status":401'
expect '"items":\[{"id":"acme"'
expect '"version":1'
expect '"identificationAttributes":\["identifier"\]'
expect '"entity":"Character","keyPath":"results"'
expect '"inserted":3,"updated":0,"unchanged":0'
expect '"name":"Spider-Man","publisher":10'
expect '"total":1'
expect '"op":"upsert","entity":"Publisher"'
expect 'cartograph_http_requests_total'
[ ! -e acme.json ] && [ ! -e reader.json ] || { echo "walk-through left files behind"; exit 1; }
echo "README walk-through: 16 passed, 0 failed"
