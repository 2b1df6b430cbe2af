# Sourced by the test and benchmark scripts: a scratch directory and the real server on a free port.
# After sourcing: $work exists and is removed at exit, with the server stopped first.

work=$(mktemp -d)
server_pid=""
trap 'stop_server; wait 2>/dev/null || true; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# start_server BINARY DATA_DIR [serve flags...]: `BINARY serve` on 127.0.0.1, port chosen by the kernel,
# logging to $work/server.log. Sets server_pid, port and url.
start_server() {
  local binary=$1 data=$2
  shift 2
  "$binary" serve --host 127.0.0.1 --port 0 --data-dir "$data" "$@" >"$work/server.log" 2>&1 &
  server_pid=$!
  port=""
  for _ in $(seq 1 400); do
    port=$(grep -o ' port=[0-9]*' "$work/server.log" | head -1 | cut -d= -f2 || true)
    [ -n "$port" ] && break
    sleep 0.05
  done
  [ -n "$port" ] || { cat "$work/server.log" >&2; echo "server did not start" >&2; exit 1; }
  url="http://127.0.0.1:$port"
}

# stop_server: stops what start_server started, if it still runs.
stop_server() {
  [ -n "$server_pid" ] || return 0
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# release_binary SCRATCH: builds cartograph in release under that scratch path; sets bin to its directory.
# BENCH_BINARY=path/to/cartograph uses that build instead (to compare two builds).
release_binary() {
  if [ -n "${BENCH_BINARY:-}" ]; then bin=$(cd "$(dirname "$BENCH_BINARY")" && pwd); return; fi
  swift build -c release --scratch-path "$1" --product cartograph >/dev/null
  bin=$(swift build -c release --scratch-path "$1" --show-bin-path)
}
