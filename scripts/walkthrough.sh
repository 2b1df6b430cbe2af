#!/usr/bin/env bash
# Runs a document's walk-through verbatim against a fresh server on a free port, then checks its output.
# Usage: scripts/walkthrough.sh path/to/cartograph [DOCUMENT.md]   (README.md by default)
#
# The walk-through is every ```sh block between <!-- walkthrough:start --> and <!-- walkthrough:end -->,
# run in one shell from a scratch folder that holds the server's data/ (so data/admin.token reads as
# after `make run`) and the repository's docs/ (for the files a guide posts). The output must contain
# each line of the document's <!-- walkthrough:expect … --> block (grep patterns, one a line), and the
# walk-through must leave no file behind.
set -euo pipefail
binary=$(realpath "${1:-.build/debug/cartograph}")
repo=$(cd "$(dirname "$0")/.." && pwd)
document=$(realpath "${2:-$repo/README.md}")
name=$(basename "$document")
source "$repo/scripts/server-lib.sh"
start_server "$binary" "$work/data"

mkdir "$work/run"
ln -s "$work/data" "$work/run/data"
ln -s "$repo/docs" "$work/run/docs"
awk '/<!-- walkthrough:start -->/{on=1; next} /<!-- walkthrough:end -->/{on=0}
     on && /^```sh$/{code=1; next} on && /^```$/{code=0; next} on && code' "$document" >"$work/walkthrough.sh"
awk '/<!-- walkthrough:expect/{on=1; next} on && /^-->/{on=0} on' "$document" >"$work/expected"
[ -s "$work/walkthrough.sh" ] && [ -s "$work/expected" ] || { echo "$name has no walk-through or no expectations"; exit 1; }

cd "$work/run"
output=$(CARTOGRAPH_URL="$url" bash -euo pipefail "$work/walkthrough.sh" 2>&1) || {
  echo "$output"; echo "$name walk-through failed"; exit 1; }
echo "$output"

passed=0
while IFS= read -r pattern; do
  grep -q -- "$pattern" <<<"$output" || { echo "$name walk-through output lacks: $pattern"; exit 1; }
  passed=$((passed + 1))
done <"$work/expected"
left=$(ls -A "$work/run" | grep -v -x -e data -e docs || true)
[ -z "$left" ] || { echo "$name walk-through left files behind: $left"; exit 1; }
echo "$name walk-through: $passed passed, 0 failed"
