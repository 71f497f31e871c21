"""Installs this platform's packages from a dist directory and calls them,
with nothing but Python 3.10+, Node 20+ with npm, and a C compiler: the check
each native runner of .github/workflows/release.yml makes (macOS, Windows,
Linux arm64), and that `make test-dist-host` makes here so it cannot rot.

Usage: python scripts/smoke_installed.py DIST PLATFORM   (PLATFORM: a key of
scripts/platforms.json, the platform this runs on)

- Python: the platform's wheel into a fresh venv; its client calls the
  Python echo example over stdio.
- Node: the main npm package and the platform package into a fresh
  directory (npm picks the platform package itself); a Node client calls
  the Node echo example over stdio, and the Python client calls it too.
- C: the archive unpacked; scripts/dist-check/echo_app.c built with
  the system compiler (``CC``, else cc / gcc) against the shared library and
  called by the Python client.
"""

from __future__ import annotations

import json
import os
import platform as host
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WINDOWS = os.name == "nt"

CALL_ECHO = """
import sys
import ferromcp
with ferromcp.SyncClient.stdio(sys.argv[1], sys.argv[2:], timeout=120) as client:
    result = client.call_tool("echo", {"text": "smoke"})
    assert result.text == "smoke", result.text
    print(f"python client: echo via {sys.argv[-1]}: ok")
"""

CALL_ECHO_NODE = """
import { Client } from 'ferromcp';
const [command, ...args] = process.argv.slice(2);
const client = await Client.stdio({ command, args, timeout: 120_000 });
const result = await client.callTool('echo', { text: 'smoke' });
if (result.content?.[0]?.text !== 'smoke') throw new Error(JSON.stringify(result));
await client.close();
console.log(`node client on ${process.platform}-${process.arch}: echo via ${args.at(-1)}: ok`);
"""


def run(*command: str | Path, cwd: Path | None = None) -> None:
    print("+", " ".join(str(c) for c in command), flush=True)
    subprocess.run([str(c) for c in command], check=True, cwd=cwd)


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    dist, platform = Path(sys.argv[1]).resolve(), sys.argv[2]
    spec = json.loads((ROOT / "scripts" / "platforms.json").read_text())[platform]
    version = re.search(r'^version = "([^"]+)"', (ROOT / "Cargo.toml").read_text(), re.M)
    if version is None:
        raise SystemExit("smoke: no version in Cargo.toml")
    v = version.group(1)
    print(f"smoke: {platform} on {host.system()} {host.machine()}")
    with tempfile.TemporaryDirectory(prefix="ferromcp-smoke-") as scratch:
        tmp = Path(scratch)
        examples = tmp / "examples"
        shutil.copytree(ROOT / "examples" / "python", examples / "python")
        shutil.copytree(ROOT / "examples" / "node", examples / "node")
        for script in (examples / "node").glob("*.mjs"):
            script.write_text(script.read_text().replace("'../../bindings-node/index.mjs'", "'ferromcp'"))
        (tmp / "call_echo.py").write_text(CALL_ECHO)

        # Python
        venv.create(tmp / "venv", with_pip=True)
        python = tmp / "venv" / ("Scripts" if WINDOWS else "bin") / ("python.exe" if WINDOWS else "python")
        wheel = next(dist.glob(f"ferromcp-{v}-cp310-abi3-{spec['wheel']}.whl"))
        run(python, "-m", "pip", "install", "--quiet", "--no-index", wheel)
        run(python, "call_echo.py", python, examples / "python" / "echo_server.py", cwd=tmp)

        # Node
        app = tmp / "node-app"
        app.mkdir()
        (app / "package.json").write_text('{"name": "smoke", "private": true, "type": "module"}')
        (app / "call-echo.mjs").write_text(CALL_ECHO_NODE)
        npm = shutil.which("npm") or "npm"
        run(
            npm,
            "install",
            "--offline",
            "--no-audit",
            "--no-fund",
            dist / f"ferromcp-{platform}-{v}.tgz",
            dist / f"ferromcp-{v}.tgz",
            cwd=app,
        )
        shutil.copytree(examples / "node", app / "examples")
        node = shutil.which("node") or "node"
        run(node, "call-echo.mjs", node, app / "examples" / "echo-server.mjs", cwd=app)
        run(python, tmp / "call_echo.py", node, app / "examples" / "echo-server.mjs", cwd=app)

        # C
        shutil.copyfile(ROOT / "scripts" / "dist-check" / "echo_app.c", tmp / "app.c")
        prefix = tmp / "c"
        name = f"ferromcp-{v}-{spec['c']}"
        if WINDOWS:
            zipfile.ZipFile(dist / f"{name}.zip").extractall(prefix)
        else:
            with tarfile.open(dist / f"{name}.tar.gz") as archive:
                if hasattr(tarfile, "data_filter"):  # Python 3.12+, and 3.10/3.11 security releases
                    archive.extractall(prefix, filter="data")
                else:
                    archive.extractall(prefix)
        prefix = prefix / name
        cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or "cc"
        exe = tmp / ("app.exe" if WINDOWS else "app")
        rpath = [] if WINDOWS else [f"-Wl,-rpath,{prefix / 'lib'}"]
        run(
            cc,
            "-std=c11",
            tmp / "app.c",
            f"-I{prefix / 'include'}",
            f"-L{prefix / 'lib'}",
            "-lferromcp",
            *rpath,
            "-o",
            exe,
        )
        if WINDOWS:  # the DLL is found on PATH, as a user installs it
            os.environ["PATH"] = f"{prefix / 'bin'}{os.pathsep}{os.environ['PATH']}"
        run(python, "call_echo.py", exe, cwd=tmp)
    print(f"smoke: {platform}: Python, Node and C packages installed and called")


if __name__ == "__main__":
    main()
