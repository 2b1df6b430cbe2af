#!/usr/bin/env bash
# Runs schemathesis against the real server with its own openapi.yaml: every served operation (those
# marked x-cartograph-planned are left out), checking that no response is a 5xx and that every
# response conforms to the spec (status code, content type, headers, body schema).
#
# Usage: scripts/schemathesis.sh path/to/cartograph [max-examples-per-operation]
# The server gets a scratch data directory with tenant `acme`, model `comics` (README's), mapping
# `characters` and a few objects; path parameters take those names most of the time (so routes reach
# real resources) and generated values otherwise.
set -euo pipefail
binary=$(realpath "${1:-.build/debug/cartograph}")
max_examples=${2:-20}
repo=$(cd "$(dirname "$0")/.." && pwd)
source "$(dirname "$0")/server-lib.sh"

admin=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
CARTOGRAPH_ADMIN_TOKEN=$admin start_server "$binary" "$work/data"

call() {  # method path [body]: the set-up fails on anything but 2xx
  local status
  status=$(curl -s -o "$work/last.json" -w '%{http_code}' -X "$1" "$url$2" -H "Authorization: Bearer $admin" \
    -H 'Content-Type: application/json' ${3:+-d "$3"})
  [[ $status == 2* ]] || { echo "set-up $1 $2: $status $(cat "$work/last.json")"; exit 1; }
}
call POST /v1/tenants '{"id": "acme"}'
call PUT /v1/tenants/acme/models/comics '{"entities": [
  {"name": "Publisher", "attributes": [{"name": "identifier", "type": "integer64"}, {"name": "name", "type": "string"}],
   "relationships": [{"name": "characters", "destination": "Character", "toMany": true, "inverse": "publisher"}]},
  {"name": "Character", "attributes": [{"name": "identifier", "type": "integer64"}, {"name": "name", "type": "string"}],
   "relationships": [{"name": "publisher", "destination": "Publisher", "inverse": "characters"}],
   "userInfo": {"identityAttributes": "identifier"}}]}'
call PUT /v1/tenants/acme/models/comics/mappings/characters '{"entity": "Character", "keyPath": "results",
  "attributes": {"id": "identifier", "name": "name"},
  "relationships": [{"from": "publisher", "to": "publisher", "mapping": {"entity": "Publisher", "attributes": {"id": "identifier", "name": "name"}}}]}'
call POST /v1/tenants/acme/models/comics/mappings/characters/payloads '{"results": [
  {"id": 1699, "name": "Spider-Man", "publisher": {"id": 10, "name": "Marvel"}},
  {"id": 1455, "name": "Iron Man", "publisher": {"id": 10, "name": "Marvel"}}]}'
call POST /v1/tenants/acme/keys '{"scope": "read"}'
# What the destructive operations may delete (scripts/schemathesis.toml), so the resources above stay.
call POST /v1/tenants '{"id": "doomed"}'
comics=$(curl -s "$url/v1/tenants/acme/models/comics" -H "Authorization: Bearer $admin")
characters=$(curl -s "$url/v1/tenants/acme/models/comics/mappings/characters" -H "Authorization: Bearer $admin")
call PUT /v1/tenants/acme/models/scratch "$comics"
call PUT /v1/tenants/acme/models/doomed "$comics"
call PUT /v1/tenants/acme/models/scratch/mappings/characters "$characters"
call PUT /v1/tenants/acme/models/comics/mappings/doomed "$characters"
# Webhooks to a host that does not resolve here: their deliveries fail, which the GETs show.
call PUT /v1/tenants/acme/webhooks/mirror '{"url": "https://hooks.example.invalid/cartograph", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  "models": [{"name": "comics", "entities": ["Character"]}]}'
call PUT /v1/tenants/acme/webhooks/doomed "$(cat "$work/last.json" | python3 -c 'import json, sys; w = json.load(sys.stdin); print(json.dumps({"url": w["url"], "models": w["models"], "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}))')"
call POST /v1/tenants/acme/models/scratch/mappings/characters/payloads '{"results": [
  {"id": 1699, "name": "Spider-Man", "publisher": {"id": 10, "name": "Marvel"}},
  {"id": 1455, "name": "Iron Man", "publisher": {"id": 10, "name": "Marvel"}}]}'

# Operations not served yet are left out; read from the spec so they join once they land.
excludes=$(python3 - "$repo/openapi.yaml" <<'EOF'
import sys, yaml
spec = yaml.safe_load(open(sys.argv[1]))
for item in spec["paths"].values():
    for method, operation in item.items():
        if isinstance(operation, dict) and operation.get("x-cartograph-planned"):
            print(f"--exclude-operation-id={operation['operationId']}")
EOF
)

set +e
# The checks: no 5xx, and conformance of status code, content type, headers and body schema.
# --phases leaves out the stateful phase: the spec declares no links between operations. One worker:
# hypothesis's lambda inspection is not thread-safe on Python 3.11 ("AST constructor recursion depth").
cd "$work"   # schemathesis keeps its caches in the working directory
schemathesis --config-file "$repo/scripts/schemathesis.toml" run "$repo/openapi.yaml" --url "$url" \
  -H "Authorization: Bearer $admin" $excludes \
  --checks ${SCHEMATHESIS_CHECKS:-not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance} \
  --phases examples,coverage,fuzzing --max-examples "$max_examples" --seed "${SCHEMATHESIS_SEED:-1}" \
  --workers 1 --request-timeout 30 --suppress-health-check all --no-color 2>&1 | tee "$work/output.txt"
status=${PIPESTATUS[0]}
set -e
if grep -q "request failed" "$work/server.log"; then
  echo "the server logged errors:"; grep "request failed" "$work/server.log" | head -20; status=1
fi
kill -0 "$server_pid" 2>/dev/null || { echo "the server died:"; tail -20 "$work/server.log"; exit 1; }
exit "$status"
