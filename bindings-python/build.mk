# Python binding: `make build-python`, `make test-python`, `make lint-python`.
# Included by the top Makefile, run from the repository root; uses VENV,
# PROFILE_DIR and the cargo-build target from it.
#
# cargo builds the extension (libferromcp_python.so) in the top Makefile's
# one workspace build; scripts/python_develop.py copies it into
# bindings-python/python/ferromcp/ as _native.abi3.so and installs the
# package into $(VENV) in editable mode (a .pth file and the dist-info that
# importlib.metadata and pip read, and the package's bytecode), so edits to
# the .py files need no rebuild.
# maturin (the build backend in pyproject.toml) is what makes wheels; it is
# not used here because it would build `-p ferromcp-python` alone, with
# other dependency features, i.e. a second dependency tree.

PY_BINDING_DIR := bindings-python
PY_PACKAGE_DIR := $(PY_BINDING_DIR)/python/ferromcp

.PHONY: build-python test-python lint-python

build-python: cargo-build $(VENV)/.ready
	$(VENV)/bin/python scripts/python_develop.py target/$(PROFILE_DIR)/libferromcp_python.so

test-python: build-python $(PY_TOOLS_STAMP)
	$(VENV)/bin/python -m pytest -q $(PY_BINDING_DIR)/tests

# ruff and mypy --strict over the package, the examples and scripts/; stubtest checks
# the hand-written _native.pyi against the compiled module.
lint-python: build-python $(PY_TOOLS_STAMP)
	$(VENV)/bin/ruff check $(PY_BINDING_DIR) examples/python scripts tests/scale tests/proxy
	$(VENV)/bin/mypy --strict $(PY_PACKAGE_DIR) examples/python scripts tests/scale/run.py tests/proxy/proxy_checks.py
	$(VENV)/bin/python -m mypy.stubtest ferromcp._native
