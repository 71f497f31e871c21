#!/usr/bin/env bash
# Installs the ferromcp C library into PREFIX:
#
#   bindings-c/dist/install.sh LIB_DIR PREFIX VERSION [linux|macos|windows]
#
# LIB_DIR holds what cargo built for the platform (`make install` passes the
# release directory of this machine; scripts/dist.py each platform's). The
# layout, the same in `make install PREFIX=...` and in the archives of dist/:
#
#   include/ferromcp.h                                     (every platform)
#   linux:   lib/libferromcp.so.<version>, libferromcp.so.<abi> -> it (the
#            SONAME), libferromcp.so -> libferromcp.so.<abi> (what -lferromcp finds)
#   macos:   lib/libferromcp.<abi>.dylib (install name @rpath/libferromcp.<abi>.dylib),
#            lib/libferromcp.dylib -> it
#   windows: bin/ferromcp.dll, lib/libferromcp.dll.a (its import library)
#   lib/libferromcp.a                                      (the static library)
#   lib/pkgconfig/ferromcp.pc, ferromcp-static.pc
#   lib/cmake/ferromcp/ferromcp-config.cmake, ferromcp-config-version.cmake
#
# <abi> follows Cargo's semver rule as bindings-c/build.rs does for the
# SONAME and install name: 0.<minor> before 1.0, <major> after.
set -euo pipefail
if [ $# -lt 3 ] || [ $# -gt 4 ]; then sed -n '2,4p' "$0" >&2; exit 2; fi
lib_dir=$1 prefix=$2 version=$3 os=${4:-linux}
here=$(cd "$(dirname "$0")" && pwd)
major=${version%%.*}
rest=${version#*.}
minor=${rest%%.*}
if [ "$major" = 0 ]; then abi=0.$minor; else abi=$major; fi

# What a program linking the static library needs besides it: the system
# libraries rustc reports (`--print native-static-libs`), and dropping unused
# sections so a program keeps only the parts of the archive it calls.
case $os in
  linux)
    shared=libferromcp.so
    # libgcc_s: the unwinder, which gcc adds by itself and clang or zig do not.
    static_libs="-lgcc_s -lpthread -ldl -lm" cmake_static_libs='gcc_s;Threads::Threads;${CMAKE_DL_LIBS};m'
    gc="-Wl,--gc-sections" cmake_gc="LINKER:--gc-sections" ;;
  macos)
    shared=libferromcp.dylib
    static_libs="-framework Security -framework CoreFoundation -liconv -lm"
    cmake_static_libs='-framework Security;-framework CoreFoundation;iconv;m'
    gc="-Wl,-dead_strip" cmake_gc="LINKER:-dead_strip" ;;
  windows)
    shared=ferromcp.dll
    static_libs="-lws2_32 -luserenv -lntdll -lbcrypt -ladvapi32 -lkernel32 -lcrypt32 -lncrypt -lsecur32 -ldbghelp"
    cmake_static_libs='ws2_32;userenv;ntdll;bcrypt;advapi32;kernel32;crypt32;ncrypt;secur32;dbghelp'
    gc="-Wl,--gc-sections" cmake_gc="LINKER:--gc-sections" ;;
  *) echo "install.sh: unknown platform kind '$os' (linux, macos or windows)" >&2; exit 2 ;;
esac

for f in "$shared" libferromcp.a; do
  [ -f "$lib_dir/$f" ] || { echo "install.sh: $lib_dir/$f is missing (build it first)" >&2; exit 1; }
done

install -d "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/ferromcp"
install -m 644 "$here/../include/ferromcp.h" "$prefix/include/ferromcp.h"
case $os in
  linux)
    soname=$(readelf -d "$lib_dir/libferromcp.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    if [ "$soname" != "libferromcp.so.$abi" ]; then
      echo "install.sh: $lib_dir/libferromcp.so has SONAME '$soname', expected libferromcp.so.$abi" >&2
      exit 1
    fi
    install -m 755 "$lib_dir/libferromcp.so" "$prefix/lib/libferromcp.so.$version"
    ln -sfn "libferromcp.so.$version" "$prefix/lib/libferromcp.so.$abi"
    ln -sfn "libferromcp.so.$abi" "$prefix/lib/libferromcp.so"
    shared_location="lib/libferromcp.so.$abi" shared_name="libferromcp.so.$abi" implib="" ;;
  macos)
    install -m 755 "$lib_dir/libferromcp.dylib" "$prefix/lib/libferromcp.$abi.dylib"
    ln -sfn "libferromcp.$abi.dylib" "$prefix/lib/libferromcp.dylib"
    shared_location="lib/libferromcp.$abi.dylib" shared_name="@rpath/libferromcp.$abi.dylib" implib="" ;;
  windows)
    [ -f "$lib_dir/libferromcp.dll.a" ] || { echo "install.sh: $lib_dir/libferromcp.dll.a is missing" >&2; exit 1; }
    install -d "$prefix/bin"
    install -m 755 "$lib_dir/ferromcp.dll" "$prefix/bin/ferromcp.dll"
    install -m 644 "$lib_dir/libferromcp.dll.a" "$prefix/lib/libferromcp.dll.a"
    shared_location="bin/ferromcp.dll" shared_name="ferromcp.dll" implib="lib/libferromcp.dll.a" ;;
esac
install -m 644 "$lib_dir/libferromcp.a" "$prefix/lib/libferromcp.a"
subst() {
  sed -e "s|@VERSION@|$version|g" -e "s|@ABI@|$abi|g" -e "s|@STATIC_LIBS@|$static_libs|g" \
    -e "s|@GC@|$gc|g" -e "s|@CMAKE_STATIC_LIBS@|$cmake_static_libs|g" -e "s|@CMAKE_GC@|$cmake_gc|g" \
    -e "s|@SHARED_LOCATION@|$shared_location|g" -e "s|@SHARED_NAME@|$shared_name|g" \
    -e "s|@IMPLIB@|$implib|g" "$1" > "$2"
  chmod 644 "$2"
}
subst "$here/ferromcp.pc.in" "$prefix/lib/pkgconfig/ferromcp.pc"
subst "$here/ferromcp-static.pc.in" "$prefix/lib/pkgconfig/ferromcp-static.pc"
subst "$here/ferromcp-config.cmake.in" "$prefix/lib/cmake/ferromcp/ferromcp-config.cmake"
subst "$here/ferromcp-config-version.cmake.in" "$prefix/lib/cmake/ferromcp/ferromcp-config-version.cmake"
