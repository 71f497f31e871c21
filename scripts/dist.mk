# Installable packages: `make dist`, `make install PREFIX=...`, `make test-dist`.
# Included by the top Makefile (VENV, NODE, NODE_NPM_STAMP come from it);
# run from the repository root.
#
#   make dist     dist/ferromcp-<v>-cp310-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
#                 dist/ferromcp-<v>.tar.gz                      (Python sdist, maturin)
#                 dist/ferromcp-<v>.tgz, dist/ferromcp-linux-x64-gnu-<v>.tgz   (npm)
#                 dist/ferromcp-<v>-linux-x86_64.tar.gz         (C: header, .so, .a,
#                                                               pkg-config, CMake)
#   make install PREFIX=/usr/local   the C library, in the tarball's layout
#   make test-dist                   installs each of them outside the repository
#                                    and runs fixtures and examples from there
#
# One release build for all three libraries: one cargo-zigbuild invocation
# selecting the three binding crates, so cargo resolves features once and
# compiles one optimised dependency tree (see the top of the Makefile for why
# one selection matters). cargo-zigbuild links with zig against glibc
# $(DIST_GLIBC) symbols, so the wheel is manylinux2014 and the Node addon
# and libferromcp.so load on Ubuntu 18.04+, Debian 10+, RHEL/CentOS 7+ and
# Amazon Linux 2; a build linked by the system's cc here would need glibc 2.34+
# (manylinux_2_34). The output goes to target/$(DIST_TARGET)/release/, beside
# and not in place of the debug tree.

DIST_DIR := dist
DIST_TARGET := x86_64-unknown-linux-gnu
DIST_GLIBC := 2.17
DIST_LIB_DIR := target/$(DIST_TARGET)/release
DIST_WHEEL_PLATFORM := manylinux_2_17_x86_64.manylinux2014_x86_64
# The version every crate and package inherits ([workspace.package]).
DIST_VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
DIST_C_NAME := ferromcp-$(DIST_VERSION)-linux-x86_64
PREFIX ?= /usr/local

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
DIST_TOOLS := ziglang==$(ZIGLANG_VERSION) cargo-zigbuild==$(CARGO_ZIGBUILD_VERSION) \
	maturin==$(MATURIN_VERSION) auditwheel==$(AUDITWHEEL_VERSION) cmake==$(CMAKE_PY_VERSION) \
	pkgconf==$(PKGCONF_VERSION)
DIST_TOOLS_STAMP := $(VENV)/.dist-tools-zig$(ZIGLANG_VERSION)-zigbuild$(CARGO_ZIGBUILD_VERSION)-maturin$(MATURIN_VERSION)-auditwheel$(AUDITWHEEL_VERSION)-cmake$(CMAKE_PY_VERSION)-pkgconf$(PKGCONF_VERSION)
DIST_PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: dist dist-build dist-python dist-node dist-c install test-dist

# The core library built for the platforms the packages are for (issue 26):
# Linux aarch64 and musl, macOS arm64, Windows x64 (MinGW ABI). Only the
# `ferromcp` crate for now: it keeps Linux-only code (epoll, eventfd,
# MSG_NOSIGNAL, signals, /proc) behind fallbacks that must keep compiling.
# The bindings' cdylibs do not link for these targets yet (see the README's
# Install section); their builds join this list as they do. zig (from the
# dist tools) is the C compiler and linker for ring's C code.
CHECK_PLATFORMS := aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-apple-darwin \
	x86_64-pc-windows-gnu
CHECK_PLATFORMS_DIR := target/platforms

.PHONY: check-platforms
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

# The one optimised build (see above).
dist-build: $(DIST_TOOLS_STAMP)
	PATH="$(DIST_PATH)" cargo zigbuild --release --target $(DIST_TARGET).$(DIST_GLIBC) \
		-p ferromcp-python -p ferromcp-node -p ferromcp-c --lib

dist: dist-python dist-node dist-c
	@ls -l $(DIST_DIR)

# The wheel from the built extension (scripts/dist_wheel.py explains why not
# maturin build), checked by auditwheel: it must fit manylinux_2_17 and
# depend on no library outside the manylinux policy. The sdist is maturin's.
dist-python: dist-build
	@mkdir -p $(DIST_DIR)
	rm -f $(DIST_DIR)/ferromcp-*.whl $(DIST_DIR)/ferromcp-$(DIST_VERSION).tar.gz
	$(VENV)/bin/python scripts/dist_wheel.py $(DIST_LIB_DIR)/libferromcp_python.so $(DIST_DIR) \
		$(DIST_WHEEL_PLATFORM)
	$(VENV)/bin/auditwheel show $(DIST_DIR)/ferromcp-$(DIST_VERSION)-*.whl | tee target/dist-auditwheel.txt
	@grep -q '"manylinux_2_17_x86_64"' target/dist-auditwheel.txt || \
		{ echo "make dist: the wheel is not manylinux_2_17 (see above)" >&2; exit 1; }
	PATH="$(DIST_PATH)" maturin sdist -m bindings-python/Cargo.toml -o $(DIST_DIR)

dist-node: dist-build
	@mkdir -p $(DIST_DIR)
	rm -f $(DIST_DIR)/ferromcp-$(DIST_VERSION).tgz $(DIST_DIR)/ferromcp-linux-*.tgz
	$(NODE) scripts/dist_npm.mjs $(DIST_LIB_DIR)/libferromcp_node.so $(DIST_DIR)

# Staged with the same script as `make install`, then archived with fixed
# owners, order and times.
dist-c: dist-build
	@mkdir -p $(DIST_DIR)
	rm -rf target/dist/c && mkdir -p target/dist/c
	bash bindings-c/dist/install.sh $(DIST_LIB_DIR) target/dist/c/$(DIST_C_NAME) $(DIST_VERSION)
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$${SOURCE_DATE_EPOCH:-315532800} \
		-C target/dist/c -czf $(DIST_DIR)/$(DIST_C_NAME).tar.gz $(DIST_C_NAME)

install: dist-build
	bash bindings-c/dist/install.sh $(DIST_LIB_DIR) "$(DESTDIR)$(PREFIX)" $(DIST_VERSION)

# Installs every package of dist/ outside the repository and runs from there
# (scripts/test_dist.sh). Set DIST_SKIP_SDIST=1 to skip the sdist -> wheel
# build (a second, complete release compile).
test-dist: dist $(DIST_TOOLS_STAMP)
	PATH="$(DIST_PATH)" bash scripts/test_dist.sh $(DIST_DIR) $(DIST_VERSION)
