# Benchmark: `make bench` (about 6 minutes) or `make bench-short`
# (`make bench BENCH_SHORT=1`, about 2-3 minutes). Included by the top
# Makefile, run from the repository root; uses PYTHON from it.
#
# Builds every ferromcp artifact optimised, installs the official SDKs pinned
# in bench/sdk/ into the git-ignored .cache/bench/, then measures every server
# of bench/servers.json round by round with the load generator (mcp-bench),
# which pins itself to CPU 0 and the servers to CPU 1. Prints the figures,
# ratios and targets tables and writes bench/results/latest.{json,md}.
# BENCH_ARGS passes more options to `mcp-bench run` (e.g. --only a,b).

BENCH_CACHE := .cache/bench
BENCH_PY := $(BENCH_CACHE)/py
BENCH_NODE_DIR := $(BENCH_CACHE)/node
BENCH_NODE_V2_DIR := $(BENCH_CACHE)/node-v2
BENCH_RMCP_TARGET := $(BENCH_CACHE)/rmcp-target
BENCH_SHORT ?=
BENCH_ARGS ?=

.PHONY: bench bench-short bench-sdks bench-rmcp bench-tools

# The parts of `make build`, built one by one: a binding that does not build
# yet is reported as unavailable by mcp-bench (through MCP_BENCH_FAILED_BUILDS)
# instead of stopping the run, and is not measured from a stale artifact.
BENCH_BUILD_PARTS := build-rust build-python build-node build-c

bench: bench-tools bench-sdks
	@failed=""; \
	for part in $(BENCH_BUILD_PARTS); do \
		$(MAKE) --no-print-directory $$part RELEASE=1 || failed="$$failed $$part"; \
	done; \
	if [ -n "$$failed" ]; then echo "make bench: release build failed:$$failed" >&2; fi; \
	MCP_BENCH_FAILED_BUILDS="$$failed" \
	MCP_BENCH_COMMAND="make bench$(if $(filter 1,$(BENCH_SHORT)), BENCH_SHORT=1)$(if $(BENCH_ARGS), BENCH_ARGS='$(BENCH_ARGS)')" \
		target/release/mcp-bench run $(if $(filter 1,$(BENCH_SHORT)),--short) $(BENCH_ARGS)

bench-short:
	$(MAKE) bench BENCH_SHORT=1

bench-tools:
	cargo build --release --workspace --bin mcp-bench --bin baseline-server

bench-sdks: $(BENCH_PY)/.installed $(BENCH_NODE_DIR)/.installed $(BENCH_NODE_V2_DIR)/.installed bench-rmcp

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

# The official Rust SDK: its own cargo project and lock file, built into the
# cache; cargo itself knows when there is nothing to do.
bench-rmcp:
	cargo build --release --locked --manifest-path bench/sdk/rmcp-echo/Cargo.toml \
		--target-dir $(BENCH_RMCP_TARGET)
