# The one entry point. `make build` (RELEASE=1 for optimised builds),
# `make test`, `make demo`, `make conformance`, `make bench`.
# Everything installs itself: Rust crates via cargo, a project-local venv
# (.venv) with maturin and pytest, npm packages, Node 22 for the suite.

SHELL := /bin/bash
RELEASE ?=
ifeq ($(RELEASE),1)
CARGO_PROFILE_FLAG := --release
PROFILE_DIR := release
else
CARGO_PROFILE_FLAG :=
PROFILE_DIR := debug
endif
VENV := .venv
PYTHON ?= python3
NODE ?= node
MATURIN_VERSION := 1.16.0
PYTEST_VERSION := 9.2.0
# the Rust binaries examples/manifest.json starts, copied to a profile-free path
RUST_BINS := echo-server everything-server everything-client

export CARGO_TERM_COLOR ?= never

.PHONY: all build build-rust test test-rust lint demo conformance bench clean

all: build

build: build-rust build-python build-node build-c

build-rust:
	cargo build --workspace --bins $(CARGO_PROFILE_FLAG)
	@mkdir -p target/bin
	@for b in $(RUST_BINS); do cp -f target/$(PROFILE_DIR)/$$b target/bin/$$b; done

$(VENV)/.ready:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check maturin==$(MATURIN_VERSION) pytest==$(PYTEST_VERSION)
	@touch $@

include bindings-python/build.mk
include bindings-node/build.mk
include bindings-c/build.mk

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings

test-rust: build
	cargo test --workspace $(CARGO_PROFILE_FLAG)

test: lint test-rust test-python test-node test-c conformance
	@echo "make test: all suites passed"

demo: build
	cargo run --quiet -p ferromcp-tests --bin demo $(CARGO_PROFILE_FLAG)

conformance: build
	bash scripts/conformance.sh

include bench/bench.mk

clean:
	cargo clean
	rm -rf $(VENV) bindings-node/node_modules
