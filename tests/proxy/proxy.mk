# The gateway between the official SDKs (issue 30): `make test-proxy`.
# Included by the top Makefile after bench/bench.mk, whose rules install the
# official SDKs this uses (the TypeScript SDK 1.32.2 into .cache/bench/node,
# the Python SDK mcp 2.3.0 into .cache/bench/py); run from the repository
# root.
#
#   make test-proxy   tests/proxy/proxy_checks.py: the TypeScript SDK 1.32.2 client
#                     (2025-11-25 only) through `ferromcp proxy --http` to a
#                     2026-07-28-only server, and the Python SDK client at
#                     2026-07-28 through `--http` and `--stdio` to a server
#                     on the TypeScript SDK 1.32.2, elicitation and sampling
#                     crossing the eras both ways. About 15 s after the
#                     installs. Prints `N passed, M failed`.

.PHONY: test-proxy

test-proxy: build $(BENCH_PY)/.installed $(BENCH_NODE_DIR)/.installed
	NODE=$(NODE) $(VENV)/bin/python tests/proxy/proxy_checks.py --ferromcp target/$(PROFILE_DIR)/ferromcp
