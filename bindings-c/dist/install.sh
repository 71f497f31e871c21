#!/usr/bin/env bash
# Installs the ferromcp C library into PREFIX:
#
#   bindings-c/dist/install.sh LIB_DIR PREFIX VERSION
#
# LIB_DIR holds cargo's libferromcp.so and libferromcp.a (`make install`
# passes target/release or the dist build's directory). The layout, the same
# in `make install PREFIX=...` and in dist/ferromcp-<version>-linux-x86_64.tar.gz:
#
#   include/ferromcp.h
#   lib/libferromcp.so.<version>, libferromcp.so.<abi> -> it (the SONAME),
#       libferromcp.so -> libferromcp.so.<abi> (what -lferromcp finds)
#   lib/libferromcp.a
#   lib/pkgconfig/ferromcp.pc, ferromcp-static.pc
#   lib/cmake/ferromcp/ferromcp-config.cmake, ferromcp-config-version.cmake
#
# <abi> follows Cargo's semver rule as bindings-c/build.rs does for the
# SONAME: 0.<minor> before 1.0, <major> after.
set -euo pipefail
if [ $# -ne 3 ]; then sed -n '2,4p' "$0" >&2; exit 2; fi
lib_dir=$1 prefix=$2 version=$3
here=$(cd "$(dirname "$0")" && pwd)
major=${version%%.*}
rest=${version#*.}
minor=${rest%%.*}
if [ "$major" = 0 ]; then abi=0.$minor; else abi=$major; fi

for f in libferromcp.so libferromcp.a; do
  [ -f "$lib_dir/$f" ] || { echo "install.sh: $lib_dir/$f is missing (build it first)" >&2; exit 1; }
done
soname=$(readelf -d "$lib_dir/libferromcp.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" != "libferromcp.so.$abi" ]; then
  echo "install.sh: $lib_dir/libferromcp.so has SONAME '$soname', expected libferromcp.so.$abi" >&2
  exit 1
fi

install -d "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/ferromcp"
install -m 644 "$here/../include/ferromcp.h" "$prefix/include/ferromcp.h"
install -m 755 "$lib_dir/libferromcp.so" "$prefix/lib/libferromcp.so.$version"
ln -sfn "libferromcp.so.$version" "$prefix/lib/libferromcp.so.$abi"
ln -sfn "libferromcp.so.$abi" "$prefix/lib/libferromcp.so"
install -m 644 "$lib_dir/libferromcp.a" "$prefix/lib/libferromcp.a"
subst() { sed -e "s/@VERSION@/$version/g" -e "s/@ABI@/$abi/g" "$1" > "$2"; chmod 644 "$2"; }
subst "$here/ferromcp.pc.in" "$prefix/lib/pkgconfig/ferromcp.pc"
subst "$here/ferromcp-static.pc.in" "$prefix/lib/pkgconfig/ferromcp-static.pc"
subst "$here/ferromcp-config.cmake.in" "$prefix/lib/cmake/ferromcp/ferromcp-config.cmake"
subst "$here/ferromcp-config-version.cmake.in" "$prefix/lib/cmake/ferromcp/ferromcp-config-version.cmake"
