# C binding: libferromcp + the C example + the C tests.
# Included by the top-level Makefile, which defines RELEASE,
# CARGO_PROFILE_FLAG and PROFILE_DIR; every recipe runs from the repo root.
#
#   make build-c       build target/$(PROFILE_DIR)/libferromcp.a, target/bin/echo-server-c
#                      target/bin/everything-server-c and target/bin/everything-client-c
#                      (the conformance fixtures), target/bin/oauth-client-c
#   make test-c        the C tests and the C example under valgrind
#   make regen-header  rewrite bindings-c/include/ferromcp.h from the sources
#
# The library comes from the top Makefile's one workspace build
# (cargo-build), and the crate's Rust tests (the header check among them)
# run in `make test-rust` (`cargo test --workspace`): `cargo test -p
# ferromcp-c` would resolve dependency features for this crate alone and
# compile the dependency tree again.

C_CC ?= cc
C_WARNINGS := -std=c11 -Wall -Wextra -Werror
C_OPT := $(if $(RELEASE),-O2,-O0 -g)
C_INCLUDE := -Ibindings-c/include
C_LIB := target/$(PROFILE_DIR)/libferromcp.a
# What a Rust staticlib needs from the system on Linux/glibc, and
# --gc-sections: the archive holds the whole API (client, OAuth, TLS), and a
# program that links it keeps only the functions it reaches. The echo
# server's code shrinks from 14 to 9 MB and its peak RSS by about 2 MB.
C_LDLIBS := -lpthread -ldl -lm -Wl,--gc-sections
C_BIN_DIR := target/bin
C_TEST_DIR := target/c-tests
C_TESTS := test_api test_http test_server test_sigpipe test_shutdown test_client test_hostile test_oauth test_auth test_tasks test_mount test_in_memory test_telemetry test_logs \
	test_middleware test_visibility test_client_middleware test_notification_middleware
# Run under AddressSanitizer instead of valgrind (see test-c).
C_TESTS_ASAN := test_server_tls
# The header's C++ face: compiled as C++17 and run like the C tests.
C_CXX ?= c++
C_CXX_WARNINGS := -std=c++17 -Wall -Wextra -Werror -pedantic
# Any invalid access or definitely/possibly lost block fails the run. The
# suppressions cover only blocks owned by the process-wide tokio runtime,
# whose threads are still parked when main() returns (see the file).
C_VALGRIND ?= valgrind --quiet --leak-check=full \
	--error-exitcode=1 --suppressions=bindings-c/tests/valgrind.supp

.PHONY: build-c test-c regen-header

build-c: cargo-build
	@mkdir -p $(C_BIN_DIR)
	$(C_CC) $(C_WARNINGS) $(C_OPT) $(C_INCLUDE) examples/c/echo_server.c $(C_LIB) $(C_LDLIBS) \
		-o $(C_BIN_DIR)/echo-server-c
	$(C_CC) $(C_WARNINGS) $(C_OPT) $(C_INCLUDE) examples/c/everything_server.c $(C_LIB) $(C_LDLIBS) \
		-o $(C_BIN_DIR)/everything-server-c
	$(C_CC) $(C_WARNINGS) $(C_OPT) $(C_INCLUDE) examples/c/everything_client.c $(C_LIB) $(C_LDLIBS) \
		-o $(C_BIN_DIR)/everything-client-c
	$(C_CC) $(C_WARNINGS) $(C_OPT) $(C_INCLUDE) examples/c/oauth_client.c $(C_LIB) $(C_LDLIBS) \
		-o $(C_BIN_DIR)/oauth-client-c

test-c: build-c
	@mkdir -p $(C_TEST_DIR)
	@set -e; for t in $(C_TESTS); do \
		echo "$(C_CC) bindings-c/tests/$$t.c -> $(C_TEST_DIR)/$$t"; \
		$(C_CC) $(C_WARNINGS) -O0 -g $(C_INCLUDE) bindings-c/tests/$$t.c $(C_LIB) $(C_LDLIBS) \
			-o $(C_TEST_DIR)/$$t; \
		echo "valgrind $(C_TEST_DIR)/$$t"; \
		$(C_VALGRIND) $(C_TEST_DIR)/$$t; \
	done
	@# TLS tests run under ASan, not valgrind: ring's assembly (AES-GCM)
	@# writes bytes memcheck cannot see initialised, so valgrind would flag
	@# every TLS record sent.
	@set -e; for t in $(C_TESTS_ASAN); do \
		echo "$(C_CC) -fsanitize=address bindings-c/tests/$$t.c -> $(C_TEST_DIR)/$$t"; \
		$(C_CC) $(C_WARNINGS) -O0 -g -fsanitize=address -fno-omit-frame-pointer $(C_INCLUDE) \
			bindings-c/tests/$$t.c $(C_LIB) $(C_LDLIBS) -o $(C_TEST_DIR)/$$t; \
		$(C_TEST_DIR)/$$t; \
	done
	$(C_CXX) $(C_CXX_WARNINGS) -O0 -g $(C_INCLUDE) bindings-c/tests/test_cpp.cpp $(C_LIB) $(C_LDLIBS) \
		-o $(C_TEST_DIR)/test_cpp
	$(C_VALGRIND) $(C_TEST_DIR)/test_cpp
	C_VALGRIND="$(C_VALGRIND)" python3 bindings-c/tests/echo_example_stdio.py $(C_BIN_DIR)/echo-server-c
	C_VALGRIND="$(C_VALGRIND)" python3 bindings-c/tests/everything_example_stdio.py $(C_BIN_DIR)/everything-server-c

regen-header:
	FERROMCP_BLESS=1 cargo test --workspace --test header
