"""Installs the ferromcp Python package into the running interpreter's
environment in editable mode, from an extension cargo already built.

Usage (from the repository root, with the venv's interpreter):

    .venv/bin/python scripts/python_develop.py target/debug/libferromcp_python.so

It does what `maturin develop` does for this project, without compiling:
copies the extension to bindings-python/python/ferromcp/_native.abi3.so,
compiles the package's bytecode, puts bindings-python/python on the path
with a .pth file, writes the dist-info that importlib.metadata and pip
read (``ferromcp.__version__`` itself is compiled into the extension) and
the console scripts of pyproject.toml's ``[project.scripts]`` (the
``ferromcp`` command), as pip does.
The top Makefile explains why cargo, not maturin, builds the extension.
"""

from __future__ import annotations

import compileall
import os
import re
import shutil
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON_SOURCE = ROOT / "bindings-python" / "python"
NAME = "ferromcp"


def workspace_version() -> str:
    """The version every crate and package inherits from Cargo.toml's [workspace.package]."""
    text = (ROOT / "Cargo.toml").read_text(encoding="utf-8")
    section = re.search(r"^\[workspace\.package\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    version = section and re.search(r'^version\s*=\s*"([^"]+)"', section.group(1), re.M)
    if not version:
        raise SystemExit("python_develop: no version in Cargo.toml [workspace.package]")
    return version.group(1)


def console_scripts() -> dict[str, str]:
    """pyproject.toml's ``[project.scripts]``: command name -> ``module:function``
    (read without tomllib, which Python 3.10 lacks)."""
    text = (ROOT / "bindings-python" / "pyproject.toml").read_text(encoding="utf-8")
    section = re.search(r"^\[project\.scripts\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if not section:
        return {}
    return dict(re.findall(r'^([A-Za-z0-9_.-]+)\s*=\s*"([^"]+)"', section.group(1), re.M))


def entry_points_txt(scripts: dict[str, str]) -> str:
    """The dist-info's ``entry_points.txt`` for ``scripts``."""
    if not scripts:
        return ""
    return "[console_scripts]\n" + "".join(f"{name} = {target}\n" for name, target in sorted(scripts.items()))


def write_script(folder: Path, name: str, target: str) -> Path:
    """A console script as pip writes it on POSIX: the interpreter, then a
    call of ``module:function`` whose result is the exit status."""
    module, _, function = target.partition(":")
    script = folder / name
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"from {module} import {function}\n"
        "if __name__ == '__main__':\n"
        f"    sys.exit({function}())\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def copy_if_changed(source: Path, destination: Path) -> None:
    if destination.exists() and destination.read_bytes() == source.read_bytes():
        return
    # Replace, never overwrite in place: a running interpreter may have the old file mapped.
    temporary = destination.with_suffix(".tmp")
    shutil.copyfile(source, temporary)
    temporary.replace(destination)


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    extension = Path(sys.argv[1])
    if not extension.is_file():
        raise SystemExit(f"python_develop: {extension} does not exist (cargo build first)")
    copy_if_changed(extension, PYTHON_SOURCE / NAME / "_native.abi3.so")
    # Bytecode, as `pip install` writes it: without it every start compiles
    # the package again whenever bytecode is not written (PYTHONDONTWRITEBYTECODE,
    # a read-only tree), which doubled a server's cold start.
    compileall.compile_dir(PYTHON_SOURCE / NAME, quiet=1)

    version = workspace_version()
    site = Path(sysconfig.get_paths()["purelib"])
    for old in site.glob(f"{NAME}-*.dist-info"):
        shutil.rmtree(old)
    (site / f"{NAME}.pth").write_text(f"{PYTHON_SOURCE}\n", encoding="utf-8")
    dist_info = site / f"{NAME}-{version}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n", encoding="utf-8")
    (dist_info / "INSTALLER").write_text("ferromcp-make\n", encoding="utf-8")
    scripts = console_scripts()
    installed = [f"{NAME}.pth"]
    if scripts:
        (dist_info / "entry_points.txt").write_text(entry_points_txt(scripts), encoding="utf-8")
        installed.append(f"{dist_info.name}/entry_points.txt")
        # Windows needs pip's .exe launchers; the dev setup writes POSIX scripts only.
        if os.name != "nt":
            folder = Path(sysconfig.get_paths()["scripts"])
            for name, target in scripts.items():
                script = write_script(folder, name, target)
                installed.append(os.path.relpath(script, site))
    (dist_info / "RECORD").write_text(
        "".join(
            f"{path},,\n"
            for path in (*installed, *(f"{dist_info.name}/{f}" for f in ("METADATA", "INSTALLER", "RECORD")))
        ),
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
