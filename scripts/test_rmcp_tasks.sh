#!/usr/bin/env bash
# The tasks extension (SEP-2663) against the official MCP Rust SDK, rmcp
# 3.11 (`make test-rmcp-tasks`, part of `make test`), both ways:
#
#   scripts/test_rmcp_tasks.sh          (from the repository root)
#
# 1. ferromcp's client -> rmcp's task server: core/tests/rmcp_tasks_peer.rs
#    (ignored by a plain `cargo test`) starts bench/sdk/rmcp-tasks'
#    rmcp-tasks-server and follows its tasks.
# 2. rmcp's client -> ferromcp's everything-server: rmcp-tasks-client calls
#    the server's task tools and exits non-zero on any mismatch.
#
# The rmcp crate is its own workspace with its own lock file; it is built
# into the benchmark's rmcp target directory (RMCP_TARGET, bench/bench.mk's
# BENCH_RMCP_TARGET) beside rmcp-echo, so the SDK is compiled once for both.
# CARGO_PROFILE_FLAG / PROFILE_DIR come from the Makefile (`--profile test`
# and `debug` unless RELEASE=1), so the ferromcp side reuses `make build`'s
# artifacts.
set -euo pipefail
root=$PWD
rmcp_target=${RMCP_TARGET:-.cache/bench/rmcp-target}
profile_flag=${CARGO_PROFILE_FLAG:---profile test}
profile_dir=${PROFILE_DIR:-debug}
# The Makefile exports it to every cargo command (one pyo3 build); a run of
# this script alone must not rebuild the workspace without it.
export PYO3_BUILD_EXTENSION_MODULE=1

started=$SECONDS
step() { echo "== $* ($((SECONDS - started)) s)"; }

step "building the rmcp peers (rmcp =3.11.0)"
cargo build --release --locked --manifest-path bench/sdk/rmcp-tasks/Cargo.toml \
	--target-dir "$rmcp_target"
rmcp_bin=$root/$rmcp_target/release

step "building ferromcp's everything-server"
# --workspace: the same feature resolution as `make build` (see the Makefile).
# shellcheck disable=SC2086
cargo build --workspace $profile_flag --bin everything-server

results=()
failed=0
record() {
	if [ "$2" -eq 0 ]; then results+=("PASS  $1"); else results+=("FAIL  $1"); failed=1; fi
}

step "ferromcp client -> rmcp task server (core/tests/rmcp_tasks_peer.rs)"
set +e
# shellcheck disable=SC2086
FERROMCP_RMCP_TASKS_BIN=$rmcp_bin/rmcp-tasks-server \
	cargo test --workspace $profile_flag --test rmcp_tasks_peer -- --ignored
record "ferromcp client -> rmcp task server" $?
set -e

step "rmcp client -> ferromcp everything-server"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"target/$profile_dir/everything-server" "$port" &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 200); do
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
	kill -0 "$server_pid" 2>/dev/null || { echo "everything-server exited" >&2; break; }
	sleep 0.05
done
set +e
"$rmcp_bin/rmcp-tasks-client" "http://127.0.0.1:$port/mcp"
record "rmcp client -> ferromcp everything-server" $?
set -e
kill "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
trap - EXIT

echo
echo "rmcp 3.11 tasks interoperability ($((SECONDS - started)) s):"
printf '  %s\n' "${results[@]}"
exit "$failed"
