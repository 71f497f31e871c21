"""`make test-proxy`: `ferromcp proxy` between the official SDKs and across
the protocol eras (issue 30), with real processes on free ports:

- a 2026-07-28-only upstream (the Rust everything-server with
  EVERYTHING_MODERN_ONLY=1) refuses ``initialize`` by itself, and the
  official TypeScript SDK 1.32.2 client (2025-11-25 only) reaches it through
  ``ferromcp proxy --http PORT -- ...``: tools, a call, and the upstream's
  elicitation and sampling answered by the TypeScript client;
- the official Python SDK client (mcp 2.3.0) at 2026-07-28 reaches a server
  on the TypeScript SDK 1.32.2 (2025-11-25 only) through ``--http PORT --``
  (the upstream on stdio: its questions come apart from the call) and
  through ``--stdio URL`` (the upstream on HTTP: its questions come on the
  call's stream), its elicitation and sampling answered by the Python client.

Prints ``PASS name`` / ``FAIL name: why`` per check and ``N passed, M
failed``; exits 1 if any failed. Every process it starts is stopped.

    python3 tests/proxy/proxy_checks.py --ferromcp target/debug/ferromcp
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SDK_PYTHON = ROOT / ".cache/bench/py/bin/python"
NODE = os.environ.get("NODE", "node")
TIMEOUT_S = 60


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"exited with {process.returncode} before serving on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing served on port {port} within 30 s")


class Processes:
    """Background processes, stopped at the end."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(argv, cwd=ROOT, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)
        self.started.append(process)
        return process

    def stop(self) -> None:
        for process in self.started:
            process.terminate()
        for process in self.started:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def run_json(argv: list[str]) -> dict[str, object]:
    """Runs a client program; its one JSON line."""
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, timeout=TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited with {done.returncode}: {done.stderr.decode()[-2000:]}")
    lines = [line for line in done.stdout.decode().splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"no JSON from {argv}: {done.stdout.decode()[-500:]} {done.stderr.decode()[-1500:]}")
    result: dict[str, object] = json.loads(lines[-1])
    return result


def expect(got: object, want: object, what: str) -> None:
    if got != want:
        raise AssertionError(f"{what}: expected {want!r}, got {got!r}")


def expect_in(part: str, whole: object, what: str) -> None:
    if not isinstance(whole, str) or part not in whole:
        raise AssertionError(f"{what}: expected {part!r} in {whole!r}")


def modern_only_upstream_refuses_initialize(args: argparse.Namespace, _procs: Processes) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    done = subprocess.run(
        [str(ROOT / "target/bin/everything-server"), "--stdio"],
        input=(json.dumps(initialize) + "\n").encode(),
        capture_output=True,
        timeout=TIMEOUT_S,
        env={**os.environ, "EVERYTHING_MODERN_ONLY": "1"},
        check=False,
    )
    answer = json.loads(done.stdout.decode().splitlines()[0])
    expect(answer.get("error", {}).get("code"), -32022, "the error code")
    expect(answer["error"]["data"]["supported"], ["2026-07-28"], "the versions named")


def ts_sdk_client_reaches_a_modern_only_server(args: argparse.Namespace, procs: Processes) -> None:
    port = free_port()
    proxy = procs.start(
        [args.ferromcp, "proxy", "--http", str(port), "--", "target/bin/everything-server", "--stdio"],
        env={"EVERYTHING_MODERN_ONLY": "1"},
    )
    wait_for_port(port, proxy)
    result = run_json([NODE, "tests/proxy/ts_sdk_client.mjs", f"http://127.0.0.1:{port}/mcp"])
    expect(result["protocolVersion"], "2025-11-25", "the version the TypeScript client speaks")
    tools = result["tools"]
    if not isinstance(tools, list) or "test_elicitation" not in tools:
        raise AssertionError(f"tools: {tools}")
    expect_in("simple text", result["simple"], "test_simple_text")
    expect_in("action=accept", result["elicited"], "test_elicitation")
    expect_in('"username":"ada"', result["elicited"], "test_elicitation's answer")
    expect(result["asked"], ["who are you?"], "the question the client saw")
    expect_in("sampled by the TypeScript SDK", result["sampled"], "test_sampling")


def check_python_client(result: dict[str, object]) -> None:
    expect(result["protocolVersion"], "2026-07-28", "the version the Python client speaks")
    expect(result["tools"], ["ask", "echo", "summarize"], "tools")
    expect(result["echo"], "through the proxy", "echo")
    expect(result["ask"], "hi Ada (accept)", "ask (elicitation)")
    expect(result["summarize"], "model said: sampled by the Python SDK", "summarize (sampling)")


def python_sdk_client_reaches_a_legacy_stdio_server(args: argparse.Namespace, procs: Processes) -> None:
    port = free_port()
    proxy = procs.start([args.ferromcp, "proxy", "--http", str(port), "--", NODE, "tests/proxy/ts_sdk_server.mjs"])
    wait_for_port(port, proxy)
    check_python_client(
        run_json([str(SDK_PYTHON), "tests/proxy/py_sdk_client.py", "http", f"http://127.0.0.1:{port}/mcp"])
    )


def python_sdk_client_reaches_a_legacy_http_server_over_stdio(args: argparse.Namespace, procs: Processes) -> None:
    port = free_port()
    upstream = procs.start([NODE, "tests/proxy/ts_sdk_server.mjs", str(port)])
    wait_for_port(port, upstream)
    url = f"http://127.0.0.1:{port}/mcp"
    check_python_client(
        run_json(
            [
                str(SDK_PYTHON),
                "tests/proxy/py_sdk_client.py",
                "stdio",
                args.ferromcp,
                "proxy",
                "--stdio",
                url,
                "--no-login",
            ]
        )
    )


TS_CLIENT = "TypeScript SDK 1.32.2 client"
PY_CLIENT = "Python SDK client at 2026-07-28"
TS_SERVER = "TypeScript SDK 1.32.2"
CHECKS: list[tuple[str, Callable[[argparse.Namespace, Processes], None]]] = [
    ("modern-only upstream refuses initialize", modern_only_upstream_refuses_initialize),
    (f"{TS_CLIENT} -> proxy --http -> 2026-07-28-only stdio server", ts_sdk_client_reaches_a_modern_only_server),
    (f"{PY_CLIENT} -> proxy --http -> {TS_SERVER} stdio server", python_sdk_client_reaches_a_legacy_stdio_server),
    (
        f"{PY_CLIENT} -> proxy --stdio -> {TS_SERVER} HTTP server",
        python_sdk_client_reaches_a_legacy_http_server_over_stdio,
    ),
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ferromcp", default=str(ROOT / "target/debug/ferromcp"))
    args = parser.parse_args()
    args.ferromcp = str(Path(args.ferromcp).resolve())
    passed = failed = 0
    for name, check in CHECKS:
        procs = Processes()
        try:
            check(args, procs)
            print(f"PASS {name}", flush=True)
            passed += 1
        # Every failure is reported, then the next check runs.
        except Exception as error:
            print(f"FAIL {name}: {error}", flush=True)
            failed += 1
        finally:
            procs.stop()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
