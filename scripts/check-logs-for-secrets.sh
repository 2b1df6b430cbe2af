#!/usr/bin/env bash
# Fails if a server log of a test run holds a secret (SECURITY.md, "Secrets in logs"). `make test-swift`
# runs the Swift tests with CARTOGRAPH_TEST_LOG_DIR set: every LiveServer logs into that directory and
# appends the admin token it was started with to `admin-tokens` there. This script then looks in every
# `*.log` for
#   - a tenant API key: cg_<keyId>_<secret>, hex id of 1-32 and secret of 64 characters
#     (PresentedAPIKey, Sources/CartographStore/Control/Secrets.swift);
#   - a generated admin token: cga_ and 64 hex characters (DataDirectory.adminToken);
#   - each admin token in `admin-tokens` (the tests' configured ones included), as a fixed string.
# A hit is reported by file, line and kind, never with the secret itself.
#
# Usage: scripts/check-logs-for-secrets.sh <log directory>
set -euo pipefail
dir=${1:?usage: $0 <log directory>}
shopt -s nullglob
logs=("$dir"/*.log)
if (( ${#logs[@]} == 0 )); then
    echo "check-logs-for-secrets: no *.log in $dir (was CARTOGRAPH_TEST_LOG_DIR passed to the tests?)" >&2
    exit 1
fi

tokens=$(mktemp)
trap 'rm -f "$tokens"' EXIT
[[ -f "$dir/admin-tokens" ]] && sort -u "$dir/admin-tokens" | grep -v '^$' > "$tokens" || true
lines=$(cat "${logs[@]}" | wc -l)

found=0
report() {  # kind, then grep -n -H output lines (file:line:match) on stdin
    local kind=$1
    while IFS=: read -r file line _; do
        echo "check-logs-for-secrets: $kind in $file line $line" >&2
        found=$((found + 1))
    done
}
report "an API key" < <(grep -n -H -o -E 'cg_[0-9a-f]{1,32}_[0-9a-f]{64}' "${logs[@]}" || true)
report "a generated admin token" < <(grep -n -H -o -E 'cga_[0-9a-f]{64}' "${logs[@]}" || true)
if [[ -s "$tokens" ]]; then
    report "an admin token" < <(grep -n -H -o -F -f "$tokens" "${logs[@]}" || true)
fi

summary="${#logs[@]} server logs, $lines lines, $(wc -l < "$tokens") distinct admin tokens"
if (( found > 0 )); then
    echo "check-logs-for-secrets: FAILED: $found secrets in $summary ($dir)" >&2
    exit 1
fi
echo "check-logs-for-secrets: no secret in $summary"
