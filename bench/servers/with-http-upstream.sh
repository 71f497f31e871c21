#!/usr/bin/env bash
# Starts the Rust echo server over Streamable HTTP on a free port, then runs
# the given bridge command with `{upstream}` replaced by that server's URL:
# the stdio rows of the bridges in `make bench` (issue 30), e.g.
#
#   bench/servers/with-http-upstream.sh target/release/ferromcp proxy --stdio '{upstream}'
#
# The echo server stays in the bridge's process group (mcp-bench kills the
# group), and its CPU counts with the bridge's: the row measures the bridge
# and what it bridges to, as a client of the bridge pays for both.
set -euo pipefail
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
target/bin/echo-server --http "$port" >/dev/null 2>&1 &
for _ in $(seq 200); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
	sleep 0.025
done
args=()
for arg in "$@"; do
	args+=("${arg//\{upstream\}/http://127.0.0.1:$port/mcp}")
done
exec "${args[@]}"
