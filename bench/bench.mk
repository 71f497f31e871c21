# Benchmark: `make bench` (about 6 minutes) or `make bench-short`
# (`make bench BENCH_SHORT=1`, about 2-3 minutes). Included by the top
# Makefile, run from the repository root; uses PYTHON from it.
#
# Builds every ferromcp artifact optimised, installs the official SDKs pinned
# in bench/sdk/ into the git-ignored .cache/bench/, then measures every server
# of bench/servers.json round by round with the load generator (mcp-bench),
# which pins itself to CPU 0 and the servers to CPU 1. Then the scale-out
# rows (bench/src/scale.rs, issue 29: the Rust everything-server without and
# with the Redis event bus, and a change's fan-out to 1,000 listen streams
# over 3 replicas, on a real redis-server, which system-tools-scale of
# tests/scale/scale.mk installs; about 30 s, 12 s short;
# `target/release/mcp-bench scale [--short]` runs them alone). Then the
# clients of bench/clients.json, each calling the Rust echo server (see
# bench/src/clients.rs). Prints the figures, ratios and targets tables and
# writes bench/results/latest.{json,md}.
# BENCH_ARGS passes more options to `mcp-bench run` (e.g. --only a,b).

BENCH_CACHE := .cache/bench
BENCH_PY := $(BENCH_CACHE)/py
BENCH_NODE_DIR := $(BENCH_CACHE)/node
BENCH_NODE_V2_DIR := $(BENCH_CACHE)/node-v2
BENCH_RMCP_TARGET := $(BENCH_CACHE)/rmcp-target
BENCH_PY_FASTMCP := $(BENCH_CACHE)/py-fastmcp
BENCH_NODE_CLIENT_DIR := $(BENCH_CACHE)/node-client
BENCH_BRIDGES_DIR := $(BENCH_CACHE)/bridges
BENCH_SHORT ?=
BENCH_ARGS ?=

.PHONY: bench bench-short bench-sdks bench-rmcp bench-tools bench-client-sdks bench-client-c

# The parts of `make build`, built one by one: a binding that does not build
# yet is reported as unavailable by mcp-bench (through MCP_BENCH_FAILED_BUILDS)
# instead of stopping the run, and is not measured from a stale artifact.
BENCH_BUILD_PARTS := build-rust build-python build-node build-c

bench: bench-tools bench-sdks system-tools-scale
	@failed=""; \
	for part in $(BENCH_BUILD_PARTS); do \
		$(MAKE) --no-print-directory $$part RELEASE=1 || failed="$$failed $$part"; \
	done; \
	if [ -n "$$failed" ]; then echo "make bench: release build failed:$$failed" >&2; fi; \
	$(MAKE) --no-print-directory bench-client-c RELEASE=1 \
		|| echo "make bench: the C bench client did not build (its row is reported as unavailable)" >&2; \
	$(MAKE) --no-print-directory bench-client-sdks \
		|| echo "make bench: a client SDK did not install (its row is reported as unavailable)" >&2; \
	MCP_BENCH_FAILED_BUILDS="$$failed" \
	MCP_BENCH_COMMAND="make bench$(if $(filter 1,$(BENCH_SHORT)), BENCH_SHORT=1)$(if $(BENCH_ARGS), BENCH_ARGS='$(BENCH_ARGS)')" \
		target/release/mcp-bench run $(if $(filter 1,$(BENCH_SHORT)),--short) $(BENCH_ARGS)

bench-short:
	$(MAKE) bench BENCH_SHORT=1

bench-tools:
	cargo build --release --workspace --bin mcp-bench --bin baseline-server --bin baseline-relay --bin ferromcp-bench-client

bench-sdks: $(BENCH_PY)/.installed $(BENCH_NODE_DIR)/.installed $(BENCH_NODE_V2_DIR)/.installed $(BENCH_BRIDGES_DIR)/.installed bench-rmcp

# The official Python SDK, in its own venv with the same interpreter as the
# project's .venv, so both Python servers run on one Python.
$(BENCH_PY)/.installed: bench/sdk/python/requirements.txt
	rm -rf $(BENCH_PY)
	$(PYTHON) -m venv $(BENCH_PY)
	$(BENCH_PY)/bin/pip install --quiet --disable-pip-version-check -r bench/sdk/python/requirements.txt
	@touch $@

# The official TypeScript SDK: package.json and its lock file are copied into
# the cache and installed there with `npm ci` (exact versions from the lock).
$(BENCH_NODE_DIR)/.installed: bench/sdk/typescript/package.json bench/sdk/typescript/package-lock.json
	@mkdir -p $(BENCH_NODE_DIR)
	cp bench/sdk/typescript/package.json bench/sdk/typescript/package-lock.json $(BENCH_NODE_DIR)/
	cd $(BENCH_NODE_DIR) && npm ci --no-audit --no-fund
	@touch $@

# The TypeScript SDK v2 (@modelcontextprotocol/server and .../node), the same
# way, in a directory of its own: v1 and v2 pin different zod and SDK trees.
$(BENCH_NODE_V2_DIR)/.installed: bench/sdk/typescript-v2/package.json bench/sdk/typescript-v2/package-lock.json
	@mkdir -p $(BENCH_NODE_V2_DIR)
	cp bench/sdk/typescript-v2/package.json bench/sdk/typescript-v2/package-lock.json $(BENCH_NODE_V2_DIR)/
	cd $(BENCH_NODE_V2_DIR) && npm ci --no-audit --no-fund
	@touch $@

# The bridges `ferromcp proxy` is measured beside (supergateway, mcp-remote),
# the same way, in a directory of their own.
$(BENCH_BRIDGES_DIR)/.installed: bench/sdk/bridges/package.json bench/sdk/bridges/package-lock.json
	@mkdir -p $(BENCH_BRIDGES_DIR)
	cp bench/sdk/bridges/package.json bench/sdk/bridges/package-lock.json $(BENCH_BRIDGES_DIR)/
	cd $(BENCH_BRIDGES_DIR) && npm ci --no-audit --no-fund
	@touch $@

# The official Rust SDK: its own cargo project and lock file, built into the
# cache; cargo itself knows when there is nothing to do.
bench-rmcp:
	cargo build --release --locked --manifest-path bench/sdk/rmcp-echo/Cargo.toml \
		--target-dir $(BENCH_RMCP_TARGET)

# The client rows (bench/clients.json). What they need is made inside the
# bench recipe and may fail alone: a client whose SDK did not install or
# whose program did not build is an error row, the rest of the run goes on.
bench-client-sdks: $(BENCH_PY_FASTMCP)/.installed $(BENCH_NODE_CLIENT_DIR)/.installed

# FastMCP, in its own venv with the same interpreter as the project's .venv
# and the mcp venv. Removed first, so a failed install leaves no half venv
# behind (the row then reports its interpreter as missing).
$(BENCH_PY_FASTMCP)/.installed: bench/sdk/python/fastmcp-requirements.txt
	rm -rf $(BENCH_PY_FASTMCP)
	$(PYTHON) -m venv $(BENCH_PY_FASTMCP)
	$(BENCH_PY_FASTMCP)/bin/pip install --quiet --disable-pip-version-check \
		-r bench/sdk/python/fastmcp-requirements.txt || { rm -rf $(BENCH_PY_FASTMCP); exit 1; }
	@touch $@

# The TypeScript SDK v2 client, as the SDK servers: lock file copied into the
# cache and installed there with `npm ci`.
$(BENCH_NODE_CLIENT_DIR)/.installed: bench/sdk/typescript-client/package.json bench/sdk/typescript-client/package-lock.json
	@mkdir -p $(BENCH_NODE_CLIENT_DIR)
	cp bench/sdk/typescript-client/package.json bench/sdk/typescript-client/package-lock.json $(BENCH_NODE_CLIENT_DIR)/
	cd $(BENCH_NODE_CLIENT_DIR) && npm ci --no-audit --no-fund
	@touch $@

# The C client row, linked against the optimised libferromcp.a of
# `make build-c RELEASE=1` (uses C_CC, C_WARNINGS... of bindings-c/build.mk).
# The old binary is removed first: a failed build must not leave a stale
# one to be measured.
bench-client-c:
	@mkdir -p $(C_BIN_DIR)
	rm -f $(C_BIN_DIR)/bench-client-c
	$(C_CC) $(C_WARNINGS) -O2 $(C_INCLUDE) bench/clients/c_client.c target/release/libferromcp.a \
		$(C_LDLIBS) -o $(C_BIN_DIR)/bench-client-c

# The tasks extension against the official Rust SDK, both ways (part of
# `make test`): bench/sdk/rmcp-tasks' task server and client, built into the
# same target directory as rmcp-echo. See scripts/test_rmcp_tasks.sh.
.PHONY: test-rmcp-tasks
test-rmcp-tasks:
	RMCP_TARGET=$(BENCH_RMCP_TARGET) CARGO_PROFILE_FLAG="$(CARGO_PROFILE_FLAG)" PROFILE_DIR=$(PROFILE_DIR) \
		bash scripts/test_rmcp_tasks.sh
