"""Writes the ferromcp wheel from an extension module cargo already built
(Python >= 3.11 runs it: it reads pyproject.toml with tomllib).

Usage (from the repository root):

    .venv/bin/python scripts/dist_wheel.py EXTENSION OUT_DIR PLATFORM_TAG

e.g. ``scripts/dist_wheel.py target/x86_64-unknown-linux-gnu/release/libferromcp_python.so
dist manylinux_2_17_x86_64.manylinux2014_x86_64``.

`make dist` builds the three bindings' libraries in one cargo-zigbuild
invocation (one release dependency tree, linked against glibc 2.17); letting
maturin build the wheel would compile `-p ferromcp-python` alone, a second
dependency tree with other features (see the top Makefile). This script only
does the packaging half of ``maturin build``: the package's Python files and
the extension as ``ferromcp/_native.abi3.so`` (``_native.pyd`` on Windows), and the ``.dist-info``
(METADATA from pyproject.toml, WHEEL with the abi3 tag, entry_points.txt with
``[project.scripts]``, from which pip makes the ``ferromcp`` command, the
licences, RECORD with hashes). The tag is what the caller asserts; `make dist` checks it with
``auditwheel show`` afterwards. The sdist is maturin's (``maturin sdist``):
building from it compiles everything anyway.

Entries are written in a fixed order with a fixed timestamp
(``SOURCE_DATE_EPOCH`` when set), so the same inputs give the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import os
import sys
import time
import zipfile
from pathlib import Path

import tomllib
from python_develop import entry_points_txt, workspace_version

ROOT = Path(__file__).resolve().parent.parent
BINDING = ROOT / "bindings-python"
PACKAGE = BINDING / "python" / "ferromcp"
# abi3 built against the Python 3.10 limited API (pyo3's abi3-py310 feature).
PYTHON_TAG = "cp310"
ABI_TAG = "abi3"
# The package's own files: sources, stubs and the PEP 561 marker; never a
# stale extension copied in by `make build-python`, never bytecode.
PACKAGE_SUFFIXES = (".py", ".pyi", ".typed")
LICENSES = ("LICENSE-APACHE", "LICENSE-MIT")


def record_hash(data: bytes) -> str:
    """RECORD's hash column: urlsafe base64 sha256 without padding (PEP 376/427)."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode('ascii')}"


def metadata(version: str) -> str:
    """Core metadata 2.4 from pyproject.toml's [project] table."""
    project = tomllib.loads((BINDING / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lines = [
        "Metadata-Version: 2.4",
        f"Name: {project['name']}",
        f"Version: {version}",
        f"Summary: {project['description']}",
        f"Requires-Python: {project['requires-python']}",
        f"License-Expression: {project['license']}",
        *(f"License-File: {name}" for name in LICENSES),
        *(f"Classifier: {c}" for c in project.get("classifiers", [])),
        *(f"Project-URL: {k}, {v}" for k, v in project.get("urls", {}).items()),
    ]
    for dependency in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {dependency}")
    for extra, dependencies in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines.extend(f'Requires-Dist: {d}; extra == "{extra}"' for d in dependencies)
    lines.append("Description-Content-Type: text/markdown; charset=UTF-8; variant=GFM")
    readme: str = (BINDING / project["readme"]).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + readme


def entry_points() -> str:
    """``entry_points.txt``: pyproject.toml's ``[project.scripts]`` as console
    scripts (pip writes a ``ferromcp`` command calling ``ferromcp.cli:main``)."""
    project = tomllib.loads((BINDING / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    scripts: dict[str, str] = project.get("scripts", {})
    return entry_points_txt(scripts)


def wheel_file(platform_tag: str) -> str:
    """The WHEEL file: one Tag line per platform of a compressed tag set."""
    tags = [f"Tag: {PYTHON_TAG}-{ABI_TAG}-{p}" for p in platform_tag.split(".")]
    head = ["Wheel-Version: 1.0", "Generator: ferromcp scripts/dist_wheel.py", "Root-Is-Purelib: false"]
    return "\n".join([*head, *tags]) + "\n"


def write_zip(path: Path, entries: list[tuple[str, bytes, int]]) -> None:
    """A reproducible zip: entries (name, bytes, mode) in the given order, all
    stamped ``SOURCE_DATE_EPOCH`` (or 1980-01-01, zip's earliest), deflated.
    Wheels and the Windows C archive (scripts/dist.py) are written with it."""
    stamp = max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)
    date_time = time.gmtime(stamp)[:6]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, date_time=date_time)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)


def extension_name(platform_tag: str) -> str:
    """What CPython imports as ``ferromcp._native``: a stable-ABI module is
    ``.abi3.so`` on POSIX, and on Windows plain ``.pyd`` (CPython's Windows
    loader knows no ``.abi3`` suffix)."""
    return "_native.pyd" if platform_tag.startswith("win") else "_native.abi3.so"


def main() -> None:
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    extension, out_dir, platform_tag = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    if not extension.is_file():
        raise SystemExit(f"dist_wheel: {extension} does not exist (build it first)")
    version = workspace_version()
    dist_info = f"ferromcp-{version}.dist-info"

    files: list[tuple[str, bytes]] = []
    for path in sorted(PACKAGE.iterdir()):
        if path.is_file() and path.suffix in PACKAGE_SUFFIXES:
            files.append((f"ferromcp/{path.name}", path.read_bytes()))
    files.append((f"ferromcp/{extension_name(platform_tag)}", extension.read_bytes()))
    files.append((f"{dist_info}/METADATA", metadata(version).encode()))
    files.append((f"{dist_info}/WHEEL", wheel_file(platform_tag).encode()))
    if scripts := entry_points():
        files.append((f"{dist_info}/entry_points.txt", scripts.encode()))
    for name in LICENSES:
        files.append((f"{dist_info}/licenses/{name}", (ROOT / name).read_bytes()))
    record = "".join(f"{name},{record_hash(data)},{len(data)}\n" for name, data in files)
    record += f"{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode()))

    out_dir.mkdir(parents=True, exist_ok=True)
    wheel = out_dir / f"ferromcp-{version}-{PYTHON_TAG}-{ABI_TAG}-{platform_tag}.whl"
    temporary = wheel.with_suffix(".tmp")
    # rw-r--r-- for files, rwxr-xr-x for the extension, as pip installs them.
    write_zip(temporary, [(n, d, 0o755 if n.endswith((".so", ".pyd")) else 0o644) for n, d in files])
    temporary.replace(wheel)
    print(wheel)


if __name__ == "__main__":
    main()
