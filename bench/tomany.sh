#!/usr/bin/env bash
# The to-many filter section of `make bench` (issue 33): "open, labelled L, newest first" over OBJECTS
# (default 100000) GitHub-like issues, Cartograph's `ANY labels.name == L` against the SQL a Datasette user
# writes over sqlite-utils' database of the same rows, without and with an index on (state, updated).
# See bench/tomany.py. Output: bench/out/tomany.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRATCH=${SCRATCH:-.build}
out=bench/out; mkdir -p "$out"
source bench/datasette-deps.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 bench/tomany.py --bin "$bin/cartograph" --work "$work" | tee "$out/tomany.txt"
