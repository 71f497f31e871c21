"""The `ferromcp` command of the package (`ferromcp.cli`): the Rust command
line run in-process, and `ferromcp run FILE.py` serving a Server a Python
file defines, over stdio, HTTP, and behind `proxy --reload`."""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import ferromcp
import pytest
from conftest import REPO, SERVERS, TIMEOUT, free_port, wait_for_port

FIXTURE = SERVERS / "cli_fixture.py"
NO_SERVER = SERVERS / "no_server.py"
T = TypeVar("T")


def ferromcp_command(*args: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    """`python -m ferromcp ARGS`, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "ferromcp", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def eventually(check: Callable[[], T | None], what: str) -> T:
    """Polls `check` until it returns something (errors count as not yet)."""
    deadline = time.monotonic() + TIMEOUT
    last: object = None
    while time.monotonic() < deadline:
        try:
            value = check()
        except ferromcp.McpError as e:
            value, last = None, e
        if value is not None:
            return value
        time.sleep(0.2)
    raise AssertionError(f"{what} did not happen in {TIMEOUT} s (last error: {last!r})")


def test_version() -> None:
    done = ferromcp_command("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ferromcp {ferromcp.__version__}"


def test_help_names_the_rust_commands_and_run() -> None:
    done = ferromcp_command("--help")
    assert done.returncode == 0, done.stderr
    for command in ("tools", "call", "read", "prompts", "discover", "login", "logout", "proxy", "run"):
        assert f"\n  {command} " in done.stdout, command
    run_help = ferromcp_command("run", "--help")
    assert run_help.returncode == 0
    assert "Usage: ferromcp run [OPTIONS]" in run_help.stdout


def test_unknown_command_is_a_usage_error() -> None:
    done = ferromcp_command("no-such-command")
    assert done.returncode == 2
    assert "no-such-command" in done.stderr
    assert done.stdout == ""


def test_run_usage_errors_exit_2() -> None:
    for args in (["run"], ["run", "--http", "eighty", str(FIXTURE)], ["run", "--host", "0.0.0.0", str(FIXTURE)]):
        done = ferromcp_command(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("error: "), done.stderr


def test_the_installed_command_is_the_same() -> None:
    """`pip install` (here `make build-python`) writes the `ferromcp`
    script from the distribution's console_scripts entry point."""
    [entry] = importlib.metadata.entry_points(group="console_scripts", name="ferromcp")
    assert entry.value == "ferromcp.cli:main"
    script = Path(sysconfig.get_path("scripts")) / ("ferromcp.exe" if sys.platform == "win32" else "ferromcp")
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ferromcp {ferromcp.__version__}"


def test_the_wheel_declares_the_command(tmp_path: Path) -> None:
    """scripts/dist_wheel.py (what `make dist` packs wheels with) writes
    the entry point pip makes the `ferromcp` command from."""
    fake_extension = tmp_path / "libferromcp_python.so"
    fake_extension.write_bytes(b"not a real extension")
    built = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "dist_wheel.py"), str(fake_extension), str(tmp_path), "linux_x86_64"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=TIMEOUT,
    )
    assert built.returncode == 0, built.stderr
    with zipfile.ZipFile(built.stdout.strip()) as wheel:
        names = wheel.namelist()
        [entry_points] = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        assert wheel.read(entry_points).decode() == "[console_scripts]\nferromcp = ferromcp.cli:main\n"
        assert "ferromcp/cli.py" in names and "ferromcp/__main__.py" in names
        record = wheel.read(entry_points.replace("entry_points.txt", "RECORD")).decode()
        assert entry_points in record


def test_run_serves_the_file_over_stdio() -> None:
    with ferromcp.SyncClient.stdio(sys.executable, ["-m", "ferromcp", "run", str(FIXTURE)]) as client:
        assert [t.name for t in client.list_tools()] == ["greet"]
        assert client.call_tool("greet", {"name": "ada"}).text == "hello ada (v1)"


def test_run_names_the_server(tmp_path: Path) -> None:
    """`FILE:NAME` picks one of several Servers; without it `run` says
    which it found."""
    two = tmp_path / "two_servers.py"
    two.write_text(
        "import ferromcp\n"
        "first = ferromcp.Server('first')\n"
        "second = ferromcp.Server('second')\n"
        "second.tool(name='which')(lambda: 'second')\n"
    )
    with ferromcp.SyncClient.stdio(sys.executable, ["-m", "ferromcp", "run", f"{two}:second"]) as client:
        assert client.call_tool("which").text == "second"
    done = ferromcp_command("run", str(two))
    assert done.returncode == 1
    assert "several Servers (first, second)" in done.stderr


def test_run_serves_a_module(tmp_path: Path) -> None:
    """`MODULE:NAME`, found from the current folder."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    shutil.copy(FIXTURE, package / "tools.py")
    with ferromcp.SyncClient.stdio(sys.executable, ["-m", "ferromcp", "run", "pkg.tools:mcp"], cwd=tmp_path) as client:
        assert client.call_tool("greet", {"name": "bo"}).text == "hello bo (v1)"


def test_run_serves_http() -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ferromcp", "run", str(FIXTURE), "--http", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_port(port, proc)  # type: ignore[arg-type]
        with ferromcp.SyncClient.http(f"http://127.0.0.1:{port}/mcp") as client:
            assert client.call_tool("greet", {"name": "cy"}).text == "hello cy (v1)"
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    assert f"serving cli-fixture at http://127.0.0.1:{port}/mcp" in stderr
    # Over HTTP stdout is the program's: the fixture's print is there.
    assert "cli_fixture: imported" in stdout


def test_call_through_the_command_line() -> None:
    """The Rust command line's `call`, spawning `ferromcp run` over stdio:
    its stdout is the result alone (the fixture's print went to stderr)."""
    server = f"{sys.executable} -m ferromcp run {FIXTURE}"
    if " " in str(FIXTURE) or " " in sys.executable:
        pytest.skip("--stdio splits its command on whitespace")
    done = ferromcp_command("call", "--stdio", server, "greet", '{"name": "di"}')
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["content"] == [{"type": "text", "text": "hello di (v1)"}]
    assert "cli_fixture: imported" in done.stderr


def test_a_file_without_a_server_is_refused() -> None:
    done = ferromcp_command("run", str(NO_SERVER))
    assert done.returncode == 1
    assert done.stdout == ""
    message = done.stderr.strip()
    assert message.startswith(f"ferromcp run: {NO_SERVER} defines no ferromcp.Server"), message
    # What it found, so the user sees why.
    assert "TOOLS (list)" in message and "make_server (function)" in message


def test_a_missing_file_and_a_failing_import(tmp_path: Path) -> None:
    done = ferromcp_command("run", str(tmp_path / "absent.py"))
    assert done.returncode == 1
    assert "no such file" in done.stderr
    broken = tmp_path / "broken.py"
    broken.write_text("import ferromcp\nraise RuntimeError('boom at import')\n")
    done = ferromcp_command("run", str(broken))
    assert done.returncode == 1
    assert f"cannot load {broken}" in done.stderr
    assert "RuntimeError: boom at import" in done.stderr


@pytest.fixture
def reloading(tmp_path: Path) -> Iterator[tuple[Path, ferromcp.SyncClient]]:
    served = tmp_path / "served" / "cli_fixture.py"
    served.parent.mkdir()
    shutil.copy(FIXTURE, served)
    with ferromcp.SyncClient.stdio(sys.executable, ["-m", "ferromcp", "run", "--reload", str(served)]) as client:
        yield served, client


def test_reload_keeps_the_client_connected(reloading: tuple[Path, ferromcp.SyncClient]) -> None:
    served, client = reloading
    assert client.call_tool("greet", {"name": "ed"}).text == "hello ed (v1)"
    source = served.read_text()
    served.write_text(
        source.replace('ANSWER = "v1"', 'ANSWER = "v2"').replace(
            'if __name__ == "__main__":',
            '@mcp.tool\ndef farewell() -> str:\n    """Added while serving."""\n    return "bye"\n\n\n'
            'if __name__ == "__main__":',
        )
    )

    def answered() -> str | None:
        text = client.call_tool("greet", {"name": "ed"}).text
        return text if "v2" in text else None

    assert eventually(answered, "the edited file answering") == "hello ed (v2)"

    def listed() -> list[str] | None:
        names = [t.name for t in client.list_tools()]
        return names if "farewell" in names else None

    assert sorted(eventually(listed, "the new tool being listed")) == ["farewell", "greet"]
    assert client.call_tool("farewell").text == "bye"
