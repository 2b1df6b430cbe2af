# Cartograph — the two commands a newcomer needs: `make run` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PORT ?= 8080
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := json model coredata mapping predicate
DATA_DIR ?= ./data
APT_PACKAGES := libmicrohttpd-dev libsqlite3-dev pkg-config curl python3-pip
SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)

.PHONY: help deps build run test test-swift test-spec test-walkthrough bench fuzz clean

help:
	@echo "make run    install what is missing, build (release) and serve on :$(PORT) with data in $(DATA_DIR)"
	@echo "make test   install what is missing, run every test suite"
	@echo "make bench  run the benchmarks (installs wrk)"
	@echo "make fuzz   run each libFuzzer target for FUZZ_SECONDS (default $(FUZZ_SECONDS)), one after another"

# Installs the system packages that are missing (apt-get update first, once).
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "Installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@command -v swift >/dev/null || { echo "Swift 6 is required: https://www.swift.org/install/linux/"; exit 1; }

build: deps
	swift build -c release --product cartograph

run: build
	mkdir -p $(DATA_DIR)
	.build/release/cartograph serve --port $(PORT) --data-dir $(DATA_DIR)

test: deps test-swift test-spec test-walkthrough

test-swift:
	swift build --build-tests
	swift test --skip-build

# The OpenAPI document must validate (openapi-spec-validator from PyPI).
test-spec:
	@python3 -c "import openapi_spec_validator" 2>/dev/null || python3 -m pip install -q openapi-spec-validator pyyaml
	python3 scripts/validate-openapi.py openapi.yaml
	python3 scripts/lint-deploy.py

# The README's curl walk-through, run verbatim against a fresh server.
test-walkthrough:
	swift build --product cartograph
	scripts/readme-walkthrough.sh .build/debug/cartograph

bench: deps
	scripts/bench.sh

# The libFuzzer targets (docs/fuzzing.md), one at a time. `make test` replays their checked-in
# corpora and crashers without libFuzzer (FuzzCorpusReplayTests).
fuzz:
	@for target in $(FUZZ_TARGETS); do scripts/fuzz.sh $$target $(FUZZ_SECONDS) || exit 1; done

clean:
	rm -rf .build .build-* bench/out
