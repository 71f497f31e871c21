"""Checks a library built for a platform nothing here can run (macOS) or
whose loader is not CPython's (a Windows ``.pyd``): what the loader there
will look at, read from the file with lief.

Usage: .venv/bin/python scripts/inspect_binary.py PLATFORM FILE [--python] [--install-name NAME]

- macOS (``darwin-*``): a Mach-O dynamic library for the platform's CPU, a
  minimum macOS of 11.0 or older (LC_BUILD_VERSION), every library it loads
  under ``/usr/lib`` or ``/System/Library`` (what every Mac has), an ad hoc
  signature on arm64 (which runs no unsigned code), and, with
  ``--install-name``, that install name. A Python extension (``--python``)
  must not load any libpython (it resolves ``Py*`` from the interpreter).
- Windows (``win32-*``): a PE32+ DLL for x86_64 that imports only DLLs every
  Windows 10 has, and with ``--python`` exactly one Python DLL, the stable
  ABI's ``python3.dll`` (so one wheel serves CPython 3.10 and later).

Exits 1 naming every problem; prints what it read.
"""

from __future__ import annotations

import argparse
import sys

import lief

MACOS_MINIMUM = (11, 0)
MACOS_SYSTEM_PREFIXES = ("/usr/lib/", "/System/Library/")
# DLLs of every Windows 10 installation that our libraries import (the
# api-ms-win-* API sets resolve to them).
WINDOWS_SYSTEM_DLLS = {
    "advapi32.dll",
    "bcrypt.dll",
    "bcryptprimitives.dll",
    "crypt32.dll",
    "dbghelp.dll",
    "kernel32.dll",
    "msvcrt.dll",
    "ncrypt.dll",
    "ntdll.dll",
    "secur32.dll",
    "userenv.dll",
    "ws2_32.dll",
}


def check_macos(platform: str, path: str, python: bool, install_name: str | None) -> list[str]:
    binary = lief.MachO.parse(path)
    if binary is None:
        return [f"{path} is not a Mach-O file"]
    macho = binary.at(0)
    if macho is None:
        return [f"{path} holds no Mach-O binary"]
    problems = []
    cpu = {"darwin-arm64": lief.MachO.Header.CPU_TYPE.ARM64, "darwin-x64": lief.MachO.Header.CPU_TYPE.X86_64}[platform]
    print(f"{path}: {macho.header.cpu_type}, {macho.header.file_type}")
    if macho.header.cpu_type != cpu:
        problems.append(f"CPU {macho.header.cpu_type}, expected {cpu}")
    if macho.header.file_type != lief.MachO.Header.FILE_TYPE.DYLIB:
        problems.append(f"file type {macho.header.file_type}, expected a dynamic library")
    version = macho.build_version
    minos = tuple(version.minos[:2]) if version is not None else None
    print(f"  minimum macOS: {minos}")
    if minos is None or minos > MACOS_MINIMUM:
        problems.append(f"minimum macOS {minos}, expected {MACOS_MINIMUM} or older")
    own = None
    for command in macho.commands:
        if isinstance(command, lief.MachO.DylibCommand) and command.command == lief.MachO.LoadCommand.TYPE.ID_DYLIB:
            own = command.name
    print(f"  install name: {own}")
    if install_name is not None and own != install_name:
        problems.append(f"install name {own!r}, expected {install_name!r}")
    for library in macho.libraries:
        if library.name == own:
            continue
        print(f"  loads {library.name}")
        if not library.name.startswith(MACOS_SYSTEM_PREFIXES):
            problems.append(f"loads {library.name}, which is not a system library")
        if python and "python" in library.name.lower():
            problems.append(f"loads {library.name}: an extension module must not link libpython")
    # arm64 macOS runs no unsigned code (the linker signs ad hoc); Intel Macs do.
    if platform == "darwin-arm64" and not macho.has_code_signature:
        problems.append("no code signature (arm64 macOS refuses unsigned code)")
    return problems


def check_windows(path: str, python: bool) -> list[str]:
    binary = lief.PE.parse(path)
    if binary is None:
        return [f"{path} is not a PE file"]
    problems = []
    print(f"{path}: {binary.header.machine}, {binary.optional_header.magic}")
    if binary.header.machine != lief.PE.Header.MACHINE_TYPES.AMD64:
        problems.append(f"machine {binary.header.machine}, expected AMD64")
    if not binary.header.has_characteristic(lief.PE.Header.CHARACTERISTICS.DLL):
        problems.append("not a DLL")
    pythons = []
    for entry in binary.imports:
        raw = entry.name
        shown = raw if isinstance(raw, str) else raw.decode("latin-1")
        name = shown.lower()
        print(f"  imports {shown}")
        if name.startswith("python"):
            pythons.append(name)
        elif name not in WINDOWS_SYSTEM_DLLS and not name.startswith("api-ms-win-"):
            problems.append(f"imports {shown}, which is not a system DLL")
    if python and pythons != ["python3.dll"]:
        problems.append(f"imports Python DLLs {pythons}, expected only the stable ABI's python3.dll")
    if not python and pythons:
        problems.append(f"imports {pythons}: only the Python extension may")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("platform")
    parser.add_argument("file")
    parser.add_argument("--python", action="store_true", help="the file is the Python extension module")
    parser.add_argument("--install-name")
    args = parser.parse_args()
    lief.logging.disable()
    if args.platform.startswith("darwin-"):
        problems = check_macos(args.platform, args.file, args.python, args.install_name)
    elif args.platform.startswith("win32-"):
        problems = check_windows(args.file, args.python)
    else:
        raise SystemExit(f"inspect_binary: no inspection for {args.platform} (Linux files are run, not inspected)")
    for problem in problems:
        print(f"inspect_binary: {args.file}: {problem}", file=sys.stderr)
    if problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
