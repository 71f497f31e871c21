# Scale-out proof (issue 29): `make test-scale`, `make test-manifests`.
# Included by the top Makefile, run from the repository root; uses VENV,
# PROFILE_DIR, PY_TOOLS_STAMP and build from it, SUDO and APT_INSTALL from
# scripts/dist.mk.
#
#   make test-scale      core's Redis tests (core/tests/redis_replicas.rs:
#                        the bus and the task store on a real redis-server),
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
	PATH="$$PATH:/usr/sbin" cargo test -p ferromcp $(CARGO_PROFILE_FLAG) --test redis_replicas -- --ignored
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
