# Sourced by bench/ingest.sh and bench/matrix.sh: installs what their C references and sqlite-utils
# loaders need, where missing: g++, simdjson and SQLite headers, wrk (Debian), sqlite-utils (PyPI).
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
missing=""
for p in g++ libsimdjson-dev libsqlite3-dev wrk; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
python3 -c 'import sqlite_utils' 2>/dev/null || python3 -m pip install -q sqlite-utils
