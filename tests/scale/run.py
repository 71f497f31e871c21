#!/usr/bin/env python3
"""Scale-out proof (issue 29): ferromcp replicas sharing Redis, behind nginx.

Starts, on free ports chosen now and under one temporary directory:

- a real ``redis-server`` (no persistence),
- three replicas of the Rust everything-server (``r1``, ``r2``, ``r3``) with
  the same ``FERROMCP_SEAL_KEYS``, ``FERROMCP_EVENT_BUS`` and
  ``FERROMCP_TASK_STORE`` pointing at that Redis, and ``FERROMCP_REPLICA``,
- a real ``nginx`` in front of them, configured by tests/scale/nginx.conf.in
  (the configuration docs/DEPLOYING.md shows),

then checks through the load balancer (or against one replica directly,
where a check must choose which one answers) that a client cannot tell it
talks to several processes. Prints ``PASS name`` or ``FAIL name: why`` per
check and ``N passed, M failed`` at the end; exits 1 when a check failed.
Every process it started is stopped on exit, on failure and on Ctrl-C
(and, through ``setpriv --pdeathsig``, if this script itself is killed).

Run by ``make test-scale``; alone::

    .venv/bin/python tests/scale/run.py --server target/bin/everything-server \\
        --bench target/debug/mcp-bench [--only events,cursor] [--keep] [-v]
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import base64
import contextlib
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ferromcp
from ferromcp.client import Subscription

HERE = Path(__file__).resolve().parent
REPLICAS = ("r1", "r2", "r3")
# The resource the everything-server offers for subscriptions, a static one
# with known content, and the tool that makes the server announce an update
# of a resource (`server.notify_resource_updated(uri)`).
WATCHED = "test://watched-resource"
STATIC = "test://static-text"
STATIC_TEXT = "This is the content of the static text resource."
NOTIFY_TOOL = "test_notify_resource_updated"
UPDATED = "notifications/resources/updated"
# Lists page by this many items on every replica (EVERYTHING_PAGE_SIZE), so
# that walking a list crosses replicas.
PAGE_SIZE = 2
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
CLIENT_INFO = {"name": "ferromcp-scale-test", "version": "1.0"}
LEGACY_SESSION = re.compile(r"^(r[0-9]+)\.")


class CheckFailed(Exception):
    """A check's verdict: the message is the one line printed after FAIL."""


def short(error: BaseException) -> str:
    """One line naming an unexpected error (no traceback)."""
    text = " ".join(str(error).split()) or "(no message)"
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(error).__name__}: {text}"


def log(message: str) -> None:
    print(f"scale: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- processes


def free_ports(count: int) -> list[int]:
    """`count` distinct ports free now (bound together, then released)."""
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@dataclass
class Proc:
    """One process the harness started, with its log file."""

    name: str
    argv: list[str]
    log_path: Path
    env: dict[str, str] = field(default_factory=dict)
    popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        # setpriv: the child is killed if this script dies without cleaning
        # up. A new session: Ctrl-C reaches only this script, which stops
        # the children in order.
        prefix = ["setpriv", "--pdeathsig", "KILL", "--"] if shutil.which("setpriv") else []
        with open(self.log_path, "ab") as out:
            self.popen = subprocess.Popen(
                prefix + self.argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.env},
                start_new_session=True,
            )

    @property
    def pid(self) -> int | None:
        return None if self.popen is None else self.popen.pid

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def send(self, sig: signal.Signals) -> None:
        if self.alive() and self.popen is not None:
            with contextlib.suppress(ProcessLookupError):
                self.popen.send_signal(sig)

    def wait(self, timeout: float) -> int | None:
        """The exit status, or None if still running after `timeout` s."""
        if self.popen is None:
            return None
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM, then SIGKILL after `grace` seconds."""
        if not self.alive():
            self.wait(0)
            return
        self.send(signal.SIGTERM)
        if self.wait(grace) is None:
            self.send(signal.SIGKILL)
            self.wait(5.0)

    def tail(self, lines: int = 5) -> str:
        try:
            text = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(text[-lines:])


class Cluster:
    """Redis, the replicas and nginx, and every process ever started."""

    def __init__(self, server: Path, bench: Path, workdir: Path) -> None:
        self.server = server
        self.bench = bench
        self.workdir = workdir
        self.procs: list[Proc] = []
        ports = free_ports(2 + len(REPLICAS) + 2)
        self.redis_port = ports[0]
        self.nginx_port = ports[1]
        self.replica_ports = dict(zip(REPLICAS, ports[2:], strict=False))
        self.spare_ports = ports[2 + len(REPLICAS) :]
        # The first key seals, both open: the rotation setup of DEPLOYING.md.
        self.seal_keys = [base64.b64encode(secrets.token_bytes(32)).decode() for _ in range(2)]
        self.redis: Proc | None = None
        self.nginx: Proc | None = None
        self.replicas: dict[str, Proc] = {}
        self.nginx_dir = workdir / "nginx"

    # -- urls

    @property
    def lb_url(self) -> str:
        return f"http://127.0.0.1:{self.nginx_port}/mcp"

    def url(self, replica: str) -> str:
        return f"http://127.0.0.1:{self.replica_ports[replica]}/mcp"

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}"

    def _new(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> Proc:
        proc = Proc(name, argv, self.workdir / f"{name}.log", env or {})
        self.procs.append(proc)
        proc.start()
        return proc

    # -- redis

    def start_redis(self) -> None:
        data = self.workdir / "redis"
        data.mkdir(exist_ok=True)
        argv = [
            "redis-server",
            "--port",
            str(self.redis_port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(data),
            "--daemonize",
            "no",
            "--protected-mode",
            "yes",
        ]
        self.redis = self._new("redis", argv)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if not self.redis.alive():
                raise RuntimeError(f"redis-server exited: {self.redis.tail()}")
            if redis_ping(self.redis_port):
                return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server did not answer PING on port {self.redis_port}")

    def restart_redis(self) -> None:
        """SIGKILL and start again on the same port (nothing is kept)."""
        if self.redis is not None:
            self.redis.send(signal.SIGKILL)
            self.redis.wait(5)
        self.start_redis()

    # -- replicas

    def replica_env(self, name: str) -> dict[str, str]:
        return {
            "FERROMCP_SEAL_KEYS": ",".join(self.seal_keys),
            "FERROMCP_EVENT_BUS": self.redis_url,
            "FERROMCP_TASK_STORE": self.redis_url,
            "FERROMCP_REPLICA": name,
            "EVERYTHING_PAGE_SIZE": str(PAGE_SIZE),
            "RUST_LOG": os.environ.get("RUST_LOG", "warn"),
        }

    def start_replica(self, name: str, port: int | None = None, extra_env: dict[str, str] | None = None) -> Proc:
        port = self.replica_ports[name] if port is None else port
        env = {**self.replica_env(name), **(extra_env or {})}
        proc = self._new(name, [str(self.server), str(port)], env)
        if name in self.replica_ports:
            self.replicas[name] = proc
        wait_for_replica(proc, port)
        return proc

    # -- nginx

    def start_nginx(self) -> None:
        run = self.nginx_dir
        for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (run / sub).mkdir(parents=True, exist_ok=True)
        site = (HERE / "nginx.conf.in").read_text()
        values = {"LISTEN_PORT": self.nginx_port, **{f"{r.upper()}_PORT": p for r, p in self.replica_ports.items()}}
        for key, value in values.items():
            site = site.replace(f"@{key}@", str(value))
        if "@" in re.sub(r"#.*", "", site):
            raise RuntimeError("nginx.conf.in has a placeholder run.py does not fill")
        (run / "mcp.conf").write_text(site)
        # The main context: this test's own pid file, logs and temp dirs. As
        # root, the workers would run as `nobody` and could not write them.
        # One process (no master): if this script is killed, --pdeathsig
        # takes nginx down with it, where an orphaned worker would survive
        # its master.
        user = "user root;\n" if os.geteuid() == 0 else ""
        (run / "nginx.conf").write_text(
            f"{user}master_process off;\ndaemon off;\npid {run}/nginx.pid;\n"
            f"error_log {run}/error.log notice;\nevents {{ worker_connections 1024; }}\n"
            "http {\n"
            "    log_format scale '$request_method $status $upstream_addr $http_mcp_method "
            "$http_mcp_session_id';\n"
            f"    access_log {run}/access.log scale;\n"
            f"    client_body_temp_path {run}/client_body;\n    proxy_temp_path {run}/proxy;\n"
            f"    fastcgi_temp_path {run}/fastcgi;\n    uwsgi_temp_path {run}/uwsgi;\n"
            f"    scgi_temp_path {run}/scgi;\n"
            f"    include {run}/mcp.conf;\n}}\n"
        )
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        argv = [nginx, "-p", f"{run}/", "-c", f"{run}/nginx.conf", "-e", f"{run}/error.log"]
        check = subprocess.run([*argv, "-t"], capture_output=True, text=True, check=False)
        if check.returncode != 0:
            raise RuntimeError(f"nginx -t: {' '.join(check.stderr.split())}")
        self.nginx = self._new("nginx", argv)
        deadline = time.monotonic() + 10
        while not port_open(self.nginx_port):
            if not self.nginx.alive() or time.monotonic() > deadline:
                raise RuntimeError(f"nginx did not start: {self.nginx.tail()} {read_tail(run / 'error.log')}")
            time.sleep(0.05)

    def access_log(self) -> list[str]:
        """nginx's access log: method, status, upstream, Mcp-Method, Mcp-Session-Id."""
        try:
            return (self.nginx_dir / "access.log").read_text().splitlines()
        except OSError:
            return []

    def upstream_name(self, addr: str) -> str:
        """`r2` for the replica at `127.0.0.1:port` (nginx's $upstream_addr)."""
        names = {f"127.0.0.1:{p}": r for r, p in self.replica_ports.items()}
        return names.get(addr, addr)

    # -- whole cluster

    def start(self) -> None:
        self.start_redis()
        for name in REPLICAS:
            self.start_replica(name)
        self.start_nginx()

    def heal(self) -> None:
        """Starts again whatever a check left stopped."""
        if self.redis is None or not self.redis.alive():
            self.start_redis()
        for name in REPLICAS:
            proc = self.replicas.get(name)
            if proc is None or not proc.alive():
                self.start_replica(name)
        if self.nginx is None or not self.nginx.alive():
            self.start_nginx()

    def stop_all(self) -> None:
        """Stops every process started, nginx first, Redis last."""
        order = sorted(self.procs, key=lambda p: {"nginx": 0, "redis": 2}.get(p.name, 1))
        for proc in order:
            proc.stop(grace=3.0)
        left = [f"{p.name} (pid {p.pid})" for p in self.procs if p.alive()]
        if left:
            log(f"could not stop: {', '.join(left)}")


def read_head(path: Path) -> str:
    try:
        return next(iter(path.read_text(errors="replace").splitlines()), "(no output)")
    except OSError:
        return "(no output)"


def read_tail(path: Path, lines: int = 3) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return ""


def redis_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def wait_for_replica(proc: Proc, port: int, timeout: float = 20.0) -> None:
    """Until the replica answers tools/list (its readiness is checked by the health check)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not proc.alive():
            raise RuntimeError(f"{proc.name} exited with {proc.wait(0)}: {proc.tail()}")
        if port_open(port):
            with contextlib.suppress(OSError, http.client.HTTPException):
                status, _, message = rpc(port, "tools/list", {})
                if status == 200 and message is not None and "result" in message:
                    return
        time.sleep(0.05)
    raise RuntimeError(f"{proc.name} did not answer on port {port} within {timeout:.0f} s: {proc.tail()}")


# ------------------------------------------------------------- raw HTTP


def modern_meta(capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
    }


def sse_messages(body: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for event in re.split(r"\r?\n\r?\n", body):
        data = "\n".join(line[5:].lstrip() for line in event.splitlines() if line.startswith("data:"))
        if data:
            with contextlib.suppress(ValueError):
                parsed = json.loads(data)
                if isinstance(parsed, dict):
                    messages.append(parsed)
    return messages


def rpc(
    port: int,
    method: str,
    params: dict[str, Any],
    *,
    request_id: int = 1,
    session: str | None = None,
    legacy: bool = False,
    capabilities: dict[str, Any] | None = None,
    timeout: float = 10.0,
) -> tuple[int, dict[str, str], dict[str, Any] | None]:
    """One JSON-RPC request by hand: (HTTP status, headers, the answer to it).

    A 2026-07-28 request carries its `_meta` and the standard headers; a
    legacy one the session id (and no version header for `initialize`).
    """
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if legacy:
        params = dict(params)
        if method != "initialize":
            headers["MCP-Protocol-Version"] = LEGACY
    else:
        params = {**params, "_meta": modern_meta(capabilities)}
        headers["MCP-Protocol-Version"] = MODERN
        headers["Mcp-Method"] = method
        name = params.get("name", params.get("uri"))
        if method in ("tools/call", "prompts/get", "resources/read") and isinstance(name, str):
            headers["Mcp-Name"] = name
    if session is not None:
        headers["Mcp-Session-Id"] = session
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if not method.startswith("notifications/"):
        message["id"] = request_id
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", "/mcp", body=json.dumps(message), headers=headers)
        response = conn.getresponse()
        body = response.read().decode("utf-8", errors="replace")
        got = {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()
    answer: dict[str, Any] | None = None
    if got.get("content-type", "").startswith("text/event-stream"):
        answer = next((m for m in sse_messages(body) if m.get("id") == request_id), None)
    elif body.strip():
        with contextlib.suppress(ValueError):
            parsed = json.loads(body)
            answer = parsed if isinstance(parsed, dict) else None
    return response.status, got, answer


def result_of(what: str, reply: tuple[int, dict[str, str], dict[str, Any] | None]) -> dict[str, Any]:
    """The `result` of a raw reply, or CheckFailed saying what came instead."""
    status, _, message = reply
    if message is None:
        raise CheckFailed(f"{what}: HTTP {status} without a JSON-RPC answer")
    if "error" in message:
        error = message["error"]
        raise CheckFailed(f"{what}: HTTP {status}, error {error.get('code')}: {error.get('message')}")
    result = message.get("result")
    if not isinstance(result, dict):
        raise CheckFailed(f"{what}: HTTP {status}, no result")
    return result


def http_get(port: int, path: str, timeout: float = 2.0) -> int:
    """The status of GET `path`; OSError when the port does not answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


async def arpc(port: int, method: str, params: dict[str, Any], **kw: Any) -> tuple[int, dict[str, str], Any]:
    return await asyncio.to_thread(lambda: rpc(port, method, params, **kw))


# ---------------------------------------------------------- client helpers


async def elicitation_answer(params: dict[str, Any]) -> dict[str, Any]:
    """Answers test_elicitation with a username derived from its message."""
    return {"action": "accept", "content": {"username": f"user-{params.get('message')}", "email": "a@example.com"}}


@contextlib.asynccontextmanager
async def connect(url: str, *, timeout: float | None = 15.0, **kw: Any) -> AsyncIterator[ferromcp.Client]:
    try:
        client = await ferromcp.Client.http(url, timeout=timeout, **kw).connect()
    except Exception as e:
        raise CheckFailed(f"cannot connect to {url}: {short(e)}") from e
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            await client.close()


async def notify(client: ferromcp.Client, where: str, uri: str = WATCHED) -> None:
    """Makes the server behind `client` announce an update of `uri`."""
    try:
        result = await client.call_tool(NOTIFY_TOOL, {"uri": uri})
    except Exception as e:
        raise CheckFailed(f"the trigger tool {NOTIFY_TOOL}({{uri}}) failed on {where}: {short(e)}") from e
    if result.is_error:
        raise CheckFailed(f"the trigger tool {NOTIFY_TOOL} reported an error on {where}: {result.text}")


async def next_update(sub: Subscription, uri: str, timeout: float) -> str | None:
    """Waits for `resources/updated` of `uri`: None when it came, else why not."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            note = await asyncio.wait_for(sub.next(), left)
        except TimeoutError:
            break
        except Exception as e:
            return f"the listen stream failed: {short(e)}"
        if note is None:
            return "the listen stream ended"
        if note.method == UPDATED and note.uri == uri:
            return None
    return f"no {UPDATED} for {uri} within {timeout:.0f} s"


async def expect_tool_names(client: ferromcp.Client) -> list[str]:
    return [tool.name for tool in await client.list_tools()]


# ----------------------------------------------------------------- checks

Check = Callable[["Cluster"], Awaitable[None]]


async def check_proxy(c: Cluster) -> None:
    """nginx proxies to the replicas: the client lists tools and calls one through it."""
    async with connect(c.lb_url) as client:
        names = await expect_tool_names(client)
        if "test_simple_text" not in names:
            raise CheckFailed(f"tools/list through nginx lacks test_simple_text: {names}")
        text = (await client.call_tool("test_simple_text")).text
        if "simple text" not in text.lower():
            raise CheckFailed(f"test_simple_text answered {text!r}")
    seen = {c.upstream_name(line.split()[2]) for line in c.access_log() if len(line.split()) > 2}
    if not seen & set(REPLICAS):
        raise CheckFailed(f"nginx's access log names no replica: {sorted(seen)}")


async def check_events(c: Cluster) -> None:
    """1. A listen stream on r1 receives resources/updated triggered by a call on r2."""
    async with (
        connect(c.url("r1"), timeout=None) as listener,
        connect(c.url("r2")) as trigger,
        listener.listen(resource_uris=[WATCHED]) as sub,
    ):
        acked = sub.acknowledged.get("resourceSubscriptions", [])
        if WATCHED not in acked:
            raise CheckFailed(f"listen did not acknowledge {WATCHED}: {sub.acknowledged}")
        await notify(trigger, "r2")
        why = await next_update(sub, WATCHED, 5.0)
        if why is not None:
            raise CheckFailed(f"stream held by r1, update triggered on r2: {why}")


async def check_mrtr_round_robin(c: Cluster) -> None:
    """2a. test_elicitation through nginx's round robin, 10 times."""
    before = len(c.access_log())
    async with connect(c.lb_url, on_elicitation=elicitation_answer) as client:
        for i in range(10):
            message = f"m{i}"
            try:
                text = (await client.call_tool("test_elicitation", {"message": message})).text
            except Exception as e:
                raise CheckFailed(f"round trip {i + 1} of 10 failed: {short(e)}") from e
            if f'"user-{message}"' not in text or "action=accept" not in text:
                raise CheckFailed(f"round trip {i + 1} answered {text!r}")
    calls = [line.split() for line in c.access_log()[before:] if " tools/call" in line]
    crossed = sum(1 for a, b in zip(calls[::2], calls[1::2], strict=False) if a[2] != b[2])
    if crossed == 0:
        raise CheckFailed(f"no retry landed on another replica (nginx log: {len(calls)} tools/call lines)")


async def check_mrtr_forced(c: Cluster) -> None:
    """2b. The first round on r1, the retry (with requestState) on r2, by hand."""
    args = {"name": "test_elicitation", "arguments": {"message": "forced"}}
    caps: dict[str, Any] = {"elicitation": {}}
    first = result_of("round 1 on r1", await arpc(c.replica_ports["r1"], "tools/call", args, capabilities=caps))
    if first.get("resultType") != "input_required":
        raise CheckFailed(f"round 1 on r1 did not ask for input: {json.dumps(first)[:200]}")
    requests = first.get("inputRequests") or {}
    if not requests:
        raise CheckFailed("round 1 on r1: input_required without inputRequests")
    answers = {
        key: {"action": "accept", "content": {"username": "forced-user", "email": "f@example.com"}} for key in requests
    }
    retry = {**args, "inputResponses": answers}
    if "requestState" in first:
        retry["requestState"] = first["requestState"]
    done = result_of(
        "the retry on r2", await arpc(c.replica_ports["r2"], "tools/call", retry, request_id=2, capabilities=caps)
    )
    text = " ".join(str(block.get("text", "")) for block in done.get("content", []))
    if done.get("resultType", "complete") != "complete" or "forced-user" not in text:
        raise CheckFailed(f"the retry on r2 answered {json.dumps(done)[:200]}")


async def check_cursor(c: Cluster) -> None:
    """3. A tools/list cursor from r1 pages on r2 (and on, across every replica)."""
    p = c.replica_ports
    page1 = result_of("tools/list page 1 on r1", await arpc(p["r1"], "tools/list", {}))
    names1 = [t["name"] for t in page1.get("tools", [])]
    cursor = page1.get("nextCursor")
    if len(names1) != PAGE_SIZE or not cursor:
        raise CheckFailed(
            f"page 1 on r1 has {len(names1)} tools and {'a' if cursor else 'no'} nextCursor "
            f"(EVERYTHING_PAGE_SIZE={PAGE_SIZE} not applied?)"
        )
    page2 = result_of(
        "tools/list page 2 on r2 with r1's cursor", await arpc(p["r2"], "tools/list", {"cursor": cursor}, request_id=2)
    )
    names2 = [t["name"] for t in page2.get("tools", [])]
    if not names2 or set(names2) & set(names1):
        raise CheckFailed(f"page 2 on r2 is {names2} after page 1 {names1}")

    # The whole walk, each page on the next replica, against r1 alone.
    async def walk(replicas: list[str]) -> list[str]:
        names: list[str] = []
        cursor: str | None = None
        for i in range(200):
            where = replicas[i % len(replicas)]
            params = {} if cursor is None else {"cursor": cursor}
            page = result_of(f"tools/list page {i + 1} on {where}", await arpc(p[where], "tools/list", params))
            names += [t["name"] for t in page.get("tools", [])]
            cursor = page.get("nextCursor")
            if not cursor:
                return names
        raise CheckFailed("tools/list did not end within 200 pages")

    alone, across = await walk(["r1"]), await walk(list(REPLICAS))
    if alone != across:
        raise CheckFailed(f"the walk across replicas ({len(across)} tools) differs from r1's ({len(alone)})")


async def check_tasks(c: Cluster) -> None:
    """4. A task created on r1 is read (tasks/get) on r2 and cancelled on r2, seen cancelled on r3."""
    async with connect(c.url("r1")) as a, connect(c.url("r2")) as b, connect(c.url("r3")) as d:
        try:
            task = await a.start_tool_task("slow_compute", {"seconds": 30, "label": "scale"})
        except Exception as e:
            raise CheckFailed(f"starting slow_compute as a task on r1: {short(e)}") from e
        if task.id is None:
            raise CheckFailed("r1 answered slow_compute at once instead of making a task")
        try:
            state = await b.tool_task(task.id).refresh()
        except Exception as e:
            raise CheckFailed(f"tasks/get on r2 of r1's task: {short(e)}") from e
        if state is None or state.status != "working":
            raise CheckFailed(f"tasks/get on r2: {state}")
        try:
            await b.tool_task(task.id).cancel()
        except Exception as e:
            raise CheckFailed(f"tasks/cancel on r2 of r1's task: {short(e)}") from e
        deadline = time.monotonic() + 10
        status = None
        while time.monotonic() < deadline:
            try:
                seen = await d.tool_task(task.id).refresh()
            except Exception as e:
                raise CheckFailed(f"tasks/get on r3 after the cancel: {short(e)}") from e
            status = None if seen is None else seen.status
            if status == "cancelled":
                return
            await asyncio.sleep(0.1)
        raise CheckFailed(f"the task is {status!r} on r3 10 s after the cancel on r2")


@dataclass
class Listener:
    """A listen stream through nginx, opened once: the client library
    opens it again when its replica goes away. An ending is recorded (and
    the stream opened again, so later checks still run) but is a failure."""

    url: str
    opened: int = 0
    received: list[float] = field(default_factory=list)
    endings: list[str] = field(default_factory=list)
    connected: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self) -> None:
        async with connect(self.url, timeout=None) as client:
            while True:
                try:
                    async with client.listen(resource_uris=[WATCHED]) as sub:
                        self.opened += 1
                        self.connected.set()
                        while (note := await sub.next()) is not None:
                            if note.method == UPDATED and note.uri == WATCHED:
                                self.received.append(time.monotonic())
                        self.endings.append("ended")
                except asyncio.CancelledError:
                    raise
                except Exception as e:
                    self.endings.append(short(e))
                self.connected.clear()
                await asyncio.sleep(0.2)


@dataclass
class Loop:
    """Idempotent calls through nginx, each sent once by the harness: the
    client library resends what failed before any answer."""

    url: str
    expected_tools: list[str]
    calls: int = 0
    wrong: list[str] = field(default_factory=list)
    unanswered: list[str] = field(default_factory=list)

    async def run(self, stop: asyncio.Event) -> None:
        async with connect(self.url, timeout=10) as client:
            while not stop.is_set():
                await self.one(client, self.calls % 2 == 0)
                self.calls += 1

    async def one(self, client: ferromcp.Client, list_tools: bool) -> None:
        try:
            if list_tools:
                names = await expect_tool_names(client)
                if names != self.expected_tools:
                    self.wrong.append(f"tools/list answered {len(names)} tools: {names[:4]}...")
            else:
                read = await client.read_resource(STATIC)
                texts = [item.text for item in read.contents]
                if texts != [STATIC_TEXT]:
                    self.wrong.append(f"resources/read answered {texts!r}")
        except Exception as e:
            self.unanswered.append(short(e))


async def python_load(url: str, stop: asyncio.Event) -> tuple[int, int]:
    """The load when mcp-bench cannot run: 8 callers of test_simple_text."""
    ok = errors = 0

    async def caller(client: ferromcp.Client) -> None:
        nonlocal ok, errors
        while not stop.is_set():
            try:
                await client.call_tool("test_simple_text")
                ok += 1
            except Exception:
                errors += 1
                await asyncio.sleep(0.05)

    async with connect(url, timeout=10) as client:
        await asyncio.gather(*(caller(client) for _ in range(8)))
    return ok, errors


async def check_failover(c: Cluster) -> None:
    """5. Under load, r1 SIGKILLed and r2 SIGTERMed: clients through nginx see no wrong answer."""
    problems: list[str] = []
    async with connect(c.lb_url) as probe:
        expected = await expect_tool_names(probe)
    # One listen stream per replica (round robin hands them out in turn).
    listeners = [Listener(c.lb_url) for _ in REPLICAS]
    listen_tasks: list[asyncio.Task[None]] = []
    for i, listener in enumerate(listeners):
        listen_tasks.append(asyncio.create_task(listener.run()))
        try:
            await asyncio.wait_for(listener.connected.wait(), 10)
        except TimeoutError:
            for task in listen_tasks:
                task.cancel()
            raise CheckFailed(f"listen stream {i + 1} through nginx did not open: {listener.endings}") from None
    stop = asyncio.Event()
    loop = Loop(c.lb_url, expected)
    loop_task = asyncio.create_task(loop.run(stop))
    duration = 10.0
    bench: Proc | None = None
    fallback: asyncio.Task[tuple[int, int]] | None = None
    bench_note = ""
    if c.bench.exists():
        bench = c._new(
            "mcp-bench", [str(c.bench), "http", c.lb_url, "--concurrency", "32", "--duration", str(duration)]
        )
    else:
        bench_note = f"mcp-bench not found at {c.bench}"
    try:
        await asyncio.sleep(1.5)
        if bench is not None and not bench.alive():
            bench_note = f"mcp-bench stopped at once: {read_head(bench.log_path)}"
        if bench_note:
            problems.append(f"{bench_note}; Python load used instead")
            fallback = asyncio.create_task(python_load(c.lb_url, stop))
        await asyncio.sleep(1.5)
        c.replicas["r1"].send(signal.SIGKILL)
        await asyncio.sleep(2.0)
        c.replicas["r2"].send(signal.SIGTERM)
        await asyncio.sleep(duration - 5.0 + 0.5)
        stop.set()
        await asyncio.wait_for(loop_task, 60)
        if fallback is not None:
            ok, errors = await asyncio.wait_for(fallback, 30)
            if ok == 0:
                problems.append(f"the Python load made no successful call ({errors} errors)")
        if bench is not None and bench_note == "":
            if await asyncio.to_thread(bench.wait, 30) is None:
                problems.append("mcp-bench did not finish")
            # Its calls are tools/call (not idempotent: a 502 for one that a
            # dying replica held is the expected failure). Each answer it
            # got was checked (the echoed text), so no answer was wrong.
            summary = re.search(r"(\d+) ok, (\d+) errors \((\d+) wrong answers\)", bench.tail(1000))
            if summary is None or int(summary.group(1)) == 0:
                problems.append(f"mcp-bench made no successful call: {bench.tail(2)}")
            elif int(summary.group(3)) > 0:
                problems.append(f"mcp-bench got {summary.group(3)} wrong answers: {bench.tail(3)}")
            else:
                vlog(f"mcp-bench: {summary.group(0)}")
        drained = await asyncio.to_thread(c.replicas["r2"].wait, 15)
        if drained is None:
            problems.append("r2 was still running 15 s after SIGTERM")
        if loop.unanswered:
            problems.append(
                f"{len(loop.unanswered)} of {loop.calls} calls never answered (last: {loop.unanswered[-1]})"
            )
        if loop.wrong:
            problems.append(f"{len(loop.wrong)} wrong answers (first: {loop.wrong[0]})")
        if loop.calls == 0:
            problems.append("the client loop made no call")
        # No stream ended: those on r1 and r2 were opened again by the
        # client; a later event reaches every one.
        ended = [f"stream {i + 1}: {li.endings}" for i, li in enumerate(listeners) if li.endings]
        if ended:
            problems.append(f"listen streams ended instead of listening again: {'; '.join(ended)}")
        for listener in listeners:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(listener.connected.wait(), 10)
        await asyncio.sleep(0.5)
        triggered = time.monotonic()
        try:
            async with connect(c.lb_url) as trigger:
                await notify(trigger, "nginx (r3 alone alive)")
        except CheckFailed as e:
            problems.append(f"no later event could be triggered: {e}")
            triggered = 0.0
        if triggered:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not all(any(t > triggered for t in li.received) for li in listeners):
                await asyncio.sleep(0.1)
            missed = [i for i, li in enumerate(listeners) if not any(t > triggered for t in li.received)]
            if missed:
                reasons = "; ".join(
                    f"stream {i + 1}: opened {listeners[i].opened}x, ended {listeners[i].endings}" for i in missed
                )
                problems.append(f"{len(missed)} of {len(listeners)} listen streams missed the later event ({reasons})")
    finally:
        stop.set()
        running: list[asyncio.Task[Any]] = [*listen_tasks, loop_task, *([fallback] if fallback else [])]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        if bench is not None:
            bench.stop(grace=1.0)
        vlog(f"failover: {loop.calls} calls; mcp-bench: {bench.tail(2) if bench else '-'}")
        # The killed replicas come back for the checks that follow.
        await asyncio.to_thread(c.heal)
    if problems:
        raise CheckFailed("; ".join(problems))


async def check_redis_restart(c: Cluster) -> None:
    """6. Redis killed and started again: a later event flows again to a listen stream."""
    async with (
        connect(c.url("r1"), timeout=None) as listener,
        connect(c.url("r2")) as trigger,
        listener.listen(resource_uris=[WATCHED]) as sub,
    ):
        await notify(trigger, "r2")
        why = await next_update(sub, WATCHED, 5.0)
        if why is not None:
            raise CheckFailed(f"before the restart already: {why} (see events)")
        await asyncio.to_thread(c.restart_redis)
        # Published while a replica is still reconnecting is lost: try
        # again each second for 15 s.
        deadline = time.monotonic() + 15
        why = "no attempt"
        while time.monotonic() < deadline:
            with contextlib.suppress(CheckFailed):
                await notify(trigger, "r2")
            why = await next_update(sub, WATCHED, 1.0) or ""
            if not why:
                return
            if "ended" in why or "failed" in why:
                raise CheckFailed(f"the stream opened before the restart: {why}")
        raise CheckFailed(f"15 s after Redis restarted: {why}")


async def check_health(c: Cluster) -> None:
    """7. /healthz and /readyz answer 200; during a SIGTERM drain /readyz is 503 before the port closes."""
    port = c.replica_ports["r3"]
    for path in ("/healthz", "/readyz"):
        status = await asyncio.to_thread(http_get, port, path)
        if status != 200:
            raise CheckFailed(f"GET {path} on r3 answered {status}")
    # A fourth replica outside nginx, drained with a delay of 1.5 s.
    drain_port = c.spare_ports[0]
    proc = await asyncio.to_thread(c.start_replica, "r4", drain_port, {"EVERYTHING_DRAIN_DELAY_MS": "1500"})
    try:
        async with (
            connect(f"http://127.0.0.1:{drain_port}/mcp", timeout=None) as client,
            client.listen(resource_uris=[WATCHED]),
        ):
            t0 = time.monotonic()
            proc.send(signal.SIGTERM)
            first_503: float | None = None
            closed: float | None = None
            while time.monotonic() - t0 < 15:
                try:
                    status = await asyncio.to_thread(http_get, drain_port, "/readyz", 0.5)
                except OSError:
                    closed = time.monotonic() - t0
                    break
                if status == 503 and first_503 is None:
                    first_503 = time.monotonic() - t0
                await asyncio.sleep(0.05)
            if first_503 is None:
                raise CheckFailed(f"/readyz never answered 503 after SIGTERM (port closed after {closed} s)")
            if first_503 > 0.5:
                raise CheckFailed(f"/readyz turned 503 only {first_503:.2f} s after SIGTERM")
            if closed is None:
                raise CheckFailed("the port still accepted 15 s after SIGTERM")
            if closed < 1.2:
                raise CheckFailed(f"the port closed {closed:.2f} s after SIGTERM, before the 1.5 s drain delay")
            # The stream ended gracefully on the replica's side; the client
            # tries to listen again (nobody answers: this replica is outside
            # nginx). Leaving the `async with` stops it.
        code = await asyncio.to_thread(proc.wait, 15)
        if code is None:
            raise CheckFailed("the drained replica was still running 15 s after SIGTERM")
    finally:
        await asyncio.to_thread(proc.stop, 2.0)


async def legacy_session(c: Cluster) -> str:
    """initialize + notifications/initialized through nginx; the session id."""
    init = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": CLIENT_INFO}
    reply = await arpc(c.nginx_port, "initialize", init, legacy=True)
    result_of("initialize through nginx", reply)
    session = reply[1].get("mcp-session-id")
    if not session:
        raise CheckFailed(f"initialize answered HTTP {reply[0]} without Mcp-Session-Id")
    status, _, _ = await arpc(c.nginx_port, "notifications/initialized", {}, legacy=True, session=session)
    if status not in (200, 202):
        raise CheckFailed(f"notifications/initialized answered HTTP {status}")
    return session


async def check_legacy_sticky(c: Cluster) -> None:
    """8. A 2025-11-25 session through nginx: its id starts with `rN.`, 5 requests succeed on its replica."""
    session = await legacy_session(c)
    before = len(c.access_log())
    failures = []
    for i in range(5):
        reply = await arpc(c.nginx_port, "tools/list", {}, legacy=True, session=session, request_id=10 + i)
        try:
            result_of(f"request {i + 1}", reply)
        except CheckFailed as e:
            failures.append(str(e))
    with contextlib.suppress(OSError):
        await asyncio.to_thread(delete_session, c.nginx_port, session)
    upstreams = {c.upstream_name(line.split()[2]) for line in c.access_log()[before:] if "tools/list" in line}
    problems = []
    if not LEGACY_SESSION.match(session):
        problems.append(f"session id {session!r} does not start with a replica name and a dot")
    if failures:
        problems.append(f"{len(failures)} of 5 requests failed (first: {failures[0]})")
    if len(upstreams) > 1:
        problems.append(f"the session's requests went to {sorted(upstreams)}")
    if problems:
        raise CheckFailed("; ".join(problems))


def delete_session(port: int, session: str) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("DELETE", "/mcp", headers={"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY})
        conn.getresponse().read()
    finally:
        conn.close()


async def check_legacy_failover(c: Cluster) -> None:
    """8b. When a session's replica dies, its next request answers 404 (a new session is needed), not 502."""
    session = await legacy_session(c)
    match = LEGACY_SESSION.match(session)
    if match is None or match.group(1) not in c.replicas:
        raise CheckFailed(f"session id {session!r} names no replica, nothing to fail over")
    name = match.group(1)
    c.replicas[name].send(signal.SIGKILL)
    await asyncio.to_thread(c.replicas[name].wait, 5)
    try:
        status, _, _ = await arpc(c.nginx_port, "tools/list", {}, legacy=True, session=session, request_id=5)
        if status != 404:
            raise CheckFailed(f"with {name} down, the session's request answered HTTP {status}, not 404")
        await legacy_session(c)
    finally:
        await asyncio.to_thread(c.heal)


CHECKS: list[tuple[str, Check, float]] = [
    ("proxy", check_proxy, 30),
    ("events", check_events, 30),
    ("mrtr-round-robin", check_mrtr_round_robin, 60),
    ("mrtr-forced", check_mrtr_forced, 30),
    ("cursor", check_cursor, 60),
    ("tasks", check_tasks, 40),
    ("failover-under-load", check_failover, 120),
    ("redis-restart", check_redis_restart, 60),
    ("health", check_health, 60),
    ("legacy-sticky", check_legacy_sticky, 30),
    ("legacy-failover", check_legacy_failover, 40),
]

VERBOSE = False


def vlog(message: str) -> None:
    if VERBOSE:
        log(message)


async def run_checks(c: Cluster, names: list[str]) -> tuple[int, int]:
    # SIGTERM and SIGHUP cancel the checks; main() then stops the processes.
    current = asyncio.current_task()
    if current is not None:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            asyncio.get_running_loop().add_signal_handler(sig, current.cancel)
    passed = failed = 0
    for name, check, limit in CHECKS:
        if names and name not in names:
            continue
        try:
            await asyncio.wait_for(check(c), limit)
            print(f"PASS {name}", flush=True)
            passed += 1
        except CheckFailed as e:
            print(f"FAIL {name}: {e}", flush=True)
            failed += 1
        except ferromcp.McpError as e:  # a client timeout is a TimeoutError too
            print(f"FAIL {name}: {short(e)}", flush=True)
            failed += 1
        except TimeoutError:
            print(f"FAIL {name}: did not finish within {limit:.0f} s", flush=True)
            failed += 1
        except Exception as e:
            print(f"FAIL {name}: {short(e)}", flush=True)
            failed += 1
        try:
            await asyncio.to_thread(c.heal)
        except Exception as e:
            print(f"FAIL {name}: the cluster could not be restored after it: {short(e)}", flush=True)
            failed += 1
            break
    return passed, failed


def main() -> int:
    global VERBOSE
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--server", type=Path, default=Path("target/bin/everything-server"))
    parser.add_argument("--bench", type=Path, default=Path("target/debug/mcp-bench"))
    parser.add_argument("--only", default="", help="comma-separated check names: " + ", ".join(n for n, _, _ in CHECKS))
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, nginx config)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    VERBOSE = args.verbose
    names = [n for n in args.only.split(",") if n]
    unknown = [n for n in names if n not in {name for name, _, _ in CHECKS}]
    if unknown:
        parser.error(f"unknown checks: {', '.join(unknown)}")
    for tool in ("redis-server",):
        if shutil.which(tool) is None:
            parser.error(f"{tool} not found (make system-tools-scale installs it)")
    if shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists():
        parser.error("nginx not found (make system-tools-scale installs it)")
    if not args.server.exists():
        parser.error(f"{args.server} not found (make build)")

    workdir = Path(tempfile.mkdtemp(prefix="ferromcp-scale-"))
    cluster = Cluster(args.server.resolve(), args.bench.resolve(), workdir)
    atexit.register(cluster.stop_all)

    def terminate(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGHUP, terminate)
    failed = 1
    try:
        try:
            cluster.start()
        except (KeyboardInterrupt, SystemExit):
            log("interrupted: stopping every process started")
            return 130
        except Exception as e:
            print(f"FAIL setup: {short(e)}", flush=True)
            print("0 passed, 1 failed", flush=True)
            return 1
        log(
            f"redis :{cluster.redis_port}, "
            + ", ".join(f"{r} :{p}" for r, p in cluster.replica_ports.items())
            + f", nginx :{cluster.nginx_port}, in {workdir}"
        )
        try:
            passed, failed = asyncio.run(run_checks(cluster, names))
        except (KeyboardInterrupt, asyncio.CancelledError, SystemExit):
            log("interrupted: stopping every process started")
            return 130
        print(f"{passed} passed, {failed} failed", flush=True)
        return 1 if failed else 0
    finally:
        cluster.stop_all()
        if args.keep or failed:
            log(f"logs kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
