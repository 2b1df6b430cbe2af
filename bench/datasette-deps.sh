# Sourced by bench/query.sh and bench/tomany.sh: installs what measuring against Datasette needs, where
# missing: wrk (Debian), sqlite-utils and Datasette (PyPI); then builds the release binary into $bin.
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
command -v wrk >/dev/null || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq wrk; }
for module in sqlite_utils datasette; do
  python3 -c "import $module" 2>/dev/null || python3 -m pip install -q "${module/_/-}" 2>/dev/null \
    || python3 -m pip install -q --break-system-packages "${module/_/-}"
done
swift build -c release --scratch-path "$SCRATCH" --product cartograph >/dev/null
bin=$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)
