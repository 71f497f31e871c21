#!/usr/bin/env bash
# `make test-dist`: installs what `make dist` wrote, outside the repository,
# the way a user would, and runs fixtures and examples from those installs.
#
#   scripts/test_dist.sh DIST_DIR VERSION      (from the repository root)
#
# - Python: the wheel into a fresh venv; the Python conformance legs run the
#   fixtures with that venv's interpreter, from a copy of examples/ outside the
#   repository (CONFORMANCE_PYTHON / CONFORMANCE_EXAMPLES_DIR, see
#   scripts/conformance.sh); the installed client drives the echo examples.
#   Then the sdist is built into a wheel (maturin, a full release compile;
#   DIST_SKIP_SDIST=1 skips it) and that wheel is installed and used too.
# - Node: the npm tarballs into a fresh directory; the Node conformance legs
#   run the copied fixtures (their imports rewritten to `ferromcp`), the ESM
#   echo example and a CommonJS server are called by the installed Python
#   client; without the platform package the loader's error names the platform.
# - C: the tarball unpacked to a temporary prefix; a program that serves a
#   tool is built with pkg-config and with CMake (find_package), shared and
#   static, and each build is run.
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,6p' "$0" >&2; exit 2; }
root=$PWD
dist=$(cd "$1" && pwd)
version=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ferromcp-dist-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
step() { printf '\n== test-dist: %s\n' "$*"; }
fail() { echo "test-dist: FAILED: $*" >&2; exit 1; }

# The examples, outside the repository. The Node ones import the source tree
# by relative path; a user's copy imports the package.
examples=$tmp/examples
mkdir -p "$examples"
cp -r examples/python examples/node examples/skills "$examples/"
sed -i "s#'\.\./\.\./bindings-node/index\.mjs'#'ferromcp'#g" "$examples"/node/*.mjs
if grep -rn "bindings-node\|bindings-python" "$examples" >/dev/null; then
  grep -rn "bindings-node\|bindings-python" "$examples" >&2
  fail "an example still reaches into the source tree"
fi

# A client of the installed wheel: calls `echo` on the stdio server given as
# argv and checks the answer. Run from $tmp, so nothing of the repository is
# importable.
cat >"$tmp/call_echo.py" <<'PY'
import sys

import ferromcp

with ferromcp.SyncClient.stdio(sys.argv[1], sys.argv[2:]) as client:
    names = [tool.name for tool in client.list_tools()]
    result = client.call_tool("echo", {"text": "from the installed wheel"})
    assert "echo" in names, names
    assert result.text == "from the installed wheel", result.text
    print(f"echo via {sys.argv[-1]}: ok ({ferromcp.__file__})")
PY

check_glibc() { # file -> fails if it needs glibc symbols newer than 2.17
  local newest
  newest=$(objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
  [ "$(printf '%s\n2.17\n' "$newest" | sort -V | tail -n 1)" = 2.17 ] \
    || fail "$1 needs glibc $newest (> 2.17)"
  echo "$(basename "$1"): newest glibc symbol version $newest"
}

########## Python
step "Python: wheel into a fresh venv"
wheel=$(ls "$dist"/ferromcp-"$version"-cp310-abi3-manylinux_2_17_x86_64*.whl)
python3 -m venv "$tmp/venv"
# --no-index: the wheel needs nothing else (pydantic is an optional extra).
"$tmp/venv/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel"
(cd "$tmp" && "$tmp/venv/bin/python" -c '
import ferromcp, importlib.metadata as m, sys
assert ferromcp.__file__.startswith(sys.prefix), ferromcp.__file__
print("ferromcp", m.version("ferromcp"), "from", ferromcp.__file__)')
python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract('ferromcp/_native.abi3.so', sys.argv[2])" "$wheel" "$tmp/wheel-so"
check_glibc "$tmp/wheel-so/ferromcp/_native.abi3.so"
(cd "$tmp" && "$tmp/venv/bin/python" call_echo.py "$tmp/venv/bin/python" "$examples/python/echo_server.py")
# The wheel's `ferromcp` command (pip made it from entry_points.txt): the Rust
# command line calling the echo example served by `ferromcp run`.
"$tmp/venv/bin/ferromcp" --version
(cd "$tmp" && "$tmp/venv/bin/ferromcp" call --stdio "$tmp/venv/bin/ferromcp run $examples/python/echo_server.py" \
  echo '{"text":"from the ferromcp command"}') | grep -q '"from the ferromcp command"' \
  || fail "the wheel's ferromcp command did not call the echo example"

step "Python: conformance fixtures from the installed wheel"
CONFORMANCE_LANGS=python CONFORMANCE_PYTHON="$tmp/venv/bin/python" CONFORMANCE_EXAMPLES_DIR="$examples" \
  bash scripts/conformance.sh

########## Node
step "Node: npm tarballs into a fresh directory"
npm_dir=$tmp/node-app
mkdir -p "$npm_dir"
echo '{"name": "ferromcp-dist-test", "private": true}' >"$npm_dir/package.json"
# --offline: the platform package must come from dist/, never from a registry.
(cd "$npm_dir" && npm install --offline --no-audit --no-fund --loglevel=error \
  "$dist/ferromcp-linux-x64-gnu-$version.tgz" "$dist/ferromcp-$version.tgz")
addon=$npm_dir/node_modules/ferromcp-linux-x64-gnu/ferromcp.linux-x64-gnu.node
[ -f "$addon" ] || fail "the platform package did not install its addon"
[ -z "$(find "$npm_dir/node_modules/ferromcp" -name '*.node')" ] || fail "the main package carries an addon"
check_glibc "$addon"
ls -l "$addon"
# The examples import `ferromcp`: resolved from $tmp/node_modules upward.
ln -s "$npm_dir/node_modules" "$tmp/node_modules"
cat >"$tmp/echo-cjs.cjs" <<'JS'
// CommonJS: require() of the installed package.
const { Server } = require('ferromcp');
if (!require.resolve('ferromcp').startsWith(process.argv[2])) throw new Error(require.resolve('ferromcp'));
const server = new Server({ name: 'cjs-echo', version: '1.0.0' });
server.tool('echo', {
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
}, ({ text }) => text);
server.serveStdio();
JS
(cd "$tmp" && "$tmp/venv/bin/python" call_echo.py node "$examples/node/echo-server.mjs")
(cd "$tmp" && "$tmp/venv/bin/python" call_echo.py node "$tmp/echo-cjs.cjs" "$npm_dir/node_modules/" "(CommonJS)")

step "Node: conformance fixtures from the installed package (ESM)"
CONFORMANCE_LANGS=node CONFORMANCE_EXAMPLES_DIR="$examples" bash scripts/conformance.sh

step "Node: the loader's error without a prebuilt addon"
rm -rf "$npm_dir/node_modules/ferromcp-linux-x64-gnu"
if out=$(cd "$tmp" && node -e "require('ferromcp')" 2>&1); then
  fail "ferromcp loaded without its platform package"
fi
grep -q "cannot load the native addon for linux-x64-gnu" <<<"$out" || { echo "$out" >&2; fail "the error does not name the platform"; }
grep -q "make build-node RELEASE=1" <<<"$out" || { echo "$out" >&2; fail "the error does not say how to build from source"; }
echo "without ferromcp-linux-x64-gnu: $(grep -o 'ferromcp: cannot load[^.]*' <<<"$out" | head -n 1)"

########## C
step "C: tarball to a temporary prefix"
prefix=$tmp/c-prefix
mkdir -p "$prefix"
tar -xzf "$dist/ferromcp-$version-linux-x86_64.tar.gz" -C "$prefix" --strip-components=1
for f in include/ferromcp.h lib/libferromcp.so lib/libferromcp.a lib/pkgconfig/ferromcp.pc \
  lib/cmake/ferromcp/ferromcp-config.cmake; do
  [ -e "$prefix/$f" ] || fail "the C tarball has no $f"
done
readelf -d "$prefix/lib/libferromcp.so" | grep SONAME
check_glibc "$prefix/lib/libferromcp.so"
app=$tmp/c-app
mkdir -p "$app"
# Serves one tool over stdio; call_echo.py calls it.
cp "$root/scripts/dist-check/echo_app.c" "$app/app.c"
cat >"$app/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(ferromcp_dist_test C)
find_package(ferromcp 0.1 REQUIRED)
add_executable(app app.c)
target_link_libraries(app PRIVATE ferromcp::ferromcp)
CMAKE
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
echo "pkg-config: $(command -v pkg-config) $(pkg-config --version); cmake: $(command -v cmake)"
run_app() { # label binary
  (cd "$tmp" && "$tmp/venv/bin/python" call_echo.py "$2") || fail "$1"
  echo "$1: ok"
}
cc -std=c11 -Wall -Werror "$app/app.c" $(pkg-config --cflags --libs ferromcp) \
  -Wl,-rpath,"$prefix/lib" -o "$app/app-pkgconfig-shared"
grep -q "libferromcp.so.0" <<<"$(ldd "$app/app-pkgconfig-shared")" || fail "the shared build does not load libferromcp.so.<abi>"
run_app "pkg-config, shared" "$app/app-pkgconfig-shared"
grep -q -- "--gc-sections" <<<"$(pkg-config --libs ferromcp-static)" || fail "ferromcp-static.pc does not link with --gc-sections"
cc -std=c11 -Wall -Werror "$app/app.c" $(pkg-config --cflags --libs ferromcp-static) -o "$app/app-pkgconfig-static"
! grep -q libferromcp <<<"$(ldd "$app/app-pkgconfig-static")" || fail "the static build links libferromcp.so"
run_app "pkg-config, static" "$app/app-pkgconfig-static"
for mode in shared static; do
  static=OFF; [ $mode = static ] && static=ON
  cmake -S "$app" -B "$app/build-$mode" -DCMAKE_PREFIX_PATH="$prefix" -DFERROMCP_USE_STATIC_LIBS=$static \
    -DCMAKE_BUILD_RPATH="$prefix/lib" >"$app/cmake-$mode.log" 2>&1 || { cat "$app/cmake-$mode.log"; fail "cmake ($mode)"; }
  cmake --build "$app/build-$mode" --verbose >>"$app/cmake-$mode.log" 2>&1 || { cat "$app/cmake-$mode.log"; fail "cmake build ($mode)"; }
  if [ $mode = shared ]; then
    grep -q libferromcp.so <<<"$(ldd "$app/build-$mode/app")" || fail "CMake shared build does not link libferromcp.so"
  else
    ! grep -q libferromcp <<<"$(ldd "$app/build-$mode/app")" || fail "CMake static build links libferromcp.so"
    # The static target's link option: the program keeps only what it calls.
    grep -q -- "--gc-sections" "$app/cmake-$mode.log" || { cat "$app/cmake-$mode.log"; fail "CMake static build links without --gc-sections"; }
  fi
  run_app "CMake, $mode" "$app/build-$mode/app"
done

########## Python sdist
if [ "${DIST_SKIP_SDIST:-}" = 1 ]; then
  step "Python sdist: skipped (DIST_SKIP_SDIST=1)"
else
  step "Python sdist: builds into a working wheel"
  sdist=$dist/ferromcp-$version.tar.gz
  # Built as pip builds an sdist (unpacked, then the PEP 517 backend: maturin
  # from the pinned tools, no build isolation, so no download). The compile
  # keeps its target directory in the repository (warm on the next run); the
  # sdist's files all carry one fixed old mtime, so they are touched first, or
  # cargo would take a changed source for the one it compiled last time.
  mkdir -p "$tmp/sdist-src"
  tar -xzf "$sdist" -C "$tmp/sdist-src"
  find "$tmp/sdist-src" -type f -exec touch {} +
  CARGO_TARGET_DIR=$root/target/sdist-check "$root/.venv/bin/pip" wheel --quiet --disable-pip-version-check \
    --no-cache-dir --no-deps --no-build-isolation "$tmp/sdist-src/ferromcp-$version" -w "$tmp/sdist-wheel"
  python3 -m venv "$tmp/venv-sdist"
  "$tmp/venv-sdist/bin/pip" install --quiet --disable-pip-version-check --no-index "$tmp"/sdist-wheel/ferromcp-*.whl
  (cd "$tmp" && "$tmp/venv-sdist/bin/python" call_echo.py "$tmp/venv-sdist/bin/python" "$examples/python/echo_server.py")
fi

step "all installs passed"
