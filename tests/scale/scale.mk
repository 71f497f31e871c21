# Scale-out proof (issue 29): `make test-scale`, `make test-manifests`.
# Included by the top Makefile, run from the repository root; uses VENV,
# PROFILE_DIR, PY_TOOLS_STAMP and build from it, SUDO and APT_INSTALL from
# scripts/dist.mk.
#
#   make test-scale      core's Redis tests (core/tests/redis_replicas.rs:
#                        the bus and the task store on a real redis-server),
#                        two replicas of a Python, a Node and a C server on
#                        Redis, set through each language's options
#                        (tests/scale/test_replicas_python.py,
#                        replicas-node.test.mjs, replicas_c.c under valgrind),
#                        then a real redis-server, three replicas of the Rust
#                        everything-server and a real nginx in front of them
#                        (tests/scale/nginx.conf.in, the config
#                        docs/DEPLOYING.md shows), all on free ports under a
#                        temporary directory; tests/scale/run.py checks
#                        events, MRTR retries, cursors and tasks across
#                        replicas, a replica killed and one drained under
#                        load, a Redis restart, health and legacy sessions.
#                        Prints `PASS name` / `FAIL name: why` per check and
#                        `N passed, M failed`; stops every process it started.
#   make test-manifests  deploy/kubernetes/ferromcp.yaml against the
#                        Kubernetes JSON schemas, offline
#                        (tests/scale/test_manifests.py).

.PHONY: system-tools-scale test-scale test-manifests

# Debian's redis-server and nginx. Installing them does not start them here
# (the container's policy-rc.d); on a machine with systemd the packages start
# their own services on ports 6379 and 80, which the test does not use.
SCALE_APT := redis-server nginx
system-tools-scale:
	@command -v redis-server >/dev/null && { command -v nginx >/dev/null || test -x /usr/sbin/nginx; } \
		|| $(APT_INSTALL) $(SCALE_APT) >/dev/null || \
		{ $(SUDO) apt-get update -q >/dev/null && $(APT_INSTALL) $(SCALE_APT) >/dev/null; }

# The load generator of bench/ (mcp-bench), built by `make build` with the
# rest of the workspace's binaries.
SCALE_BENCH := target/$(PROFILE_DIR)/mcp-bench
# SCALE_ARGS passes options to run.py (e.g. --only cursor,tasks --keep-logs).
SCALE_ARGS ?=

test-scale: build system-tools-scale
	cargo test -p ferromcp $(CARGO_PROFILE_FLAG) --test redis_replicas -- --ignored
	$(VENV)/bin/python -m pytest -q tests/scale/test_replicas_python.py
	$(NODE) --test tests/scale/replicas-node.test.mjs
	@mkdir -p $(C_TEST_DIR)
	$(C_CC) $(C_WARNINGS) -O0 -g $(C_INCLUDE) tests/scale/replicas_c.c $(C_LIB) $(C_LDLIBS) \
		-o $(C_TEST_DIR)/replicas_c
	@# A redis-server of its own for the C test, on a free port, stopped on exit.
	@set -e; port=$$($(VENV)/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'); \
		redis-server --port $$port --bind 127.0.0.1 --save '' --appendonly no >/dev/null & redis=$$!; \
		trap "kill $$redis" EXIT; \
		for i in $$(seq 200); do redis-cli -p $$port ping >/dev/null 2>&1 && break; sleep 0.05; done; \
		echo "valgrind $(C_TEST_DIR)/replicas_c redis://127.0.0.1:$$port"; \
		$(C_VALGRIND) $(C_TEST_DIR)/replicas_c redis://127.0.0.1:$$port
	PATH="$$PATH:/usr/sbin" $(VENV)/bin/python tests/scale/run.py \
		--server target/bin/everything-server --bench $(SCALE_BENCH) $(SCALE_ARGS)

# kubernetes-validate carries the Kubernetes JSON schemas of every release
# in its wheel, so the check needs no network once installed. Pinned here,
# with a stamp that names the version (the pattern of PY_TOOLS_STAMP).
KUBERNETES_VALIDATE_VERSION := 1.37.0
KUBERNETES_SCHEMA_VERSION := 1.37.0
SCALE_PY_TOOLS := kubernetes-validate==$(KUBERNETES_VALIDATE_VERSION)
SCALE_PY_TOOLS_STAMP := $(VENV)/.scale-tools-kubernetes-validate$(KUBERNETES_VALIDATE_VERSION)
$(SCALE_PY_TOOLS_STAMP): $(VENV)/.ready
	$(VENV)/bin/pip install --quiet --disable-pip-version-check $(SCALE_PY_TOOLS)
	@rm -f $(VENV)/.scale-tools-*
	@touch $@

test-manifests: $(PY_TOOLS_STAMP) $(SCALE_PY_TOOLS_STAMP)
	KUBERNETES_SCHEMA_VERSION=$(KUBERNETES_SCHEMA_VERSION) $(VENV)/bin/python -m pytest -q tests/scale/test_manifests.py
