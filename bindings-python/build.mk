# Python binding: `make build-python`, `make test-python`.
# Included by the top Makefile, run from the repository root; uses VENV,
# RELEASE and PROFILE_DIR from it.
#
# `maturin develop` builds ferromcp._native into bindings-python/python/ferromcp/
# and installs the package into $(VENV) in editable mode, so edits to the
# .py files need no rebuild. A stamp keeps `make build-python` instant when
# no Rust source, manifest or the profile changed.

PY_BINDING_DIR := bindings-python
PY_NATIVE_INPUTS := $(shell find core/src $(PY_BINDING_DIR)/src -name '*.rs') \
	Cargo.toml Cargo.lock core/Cargo.toml $(PY_BINDING_DIR)/Cargo.toml $(PY_BINDING_DIR)/pyproject.toml
PY_NATIVE_STAMP := $(VENV)/.ferromcp-native
PY_PROFILE_MARK := $(VENV)/.ferromcp-profile

.PHONY: build-python test-python

build-python: $(PY_NATIVE_STAMP)

# Rewritten only when the profile differs from the last build's, so that
# switching RELEASE rebuilds and repeating it does not.
$(PY_PROFILE_MARK): bindings-python-always | $(VENV)/.ready
	@echo "$(PROFILE_DIR)" | cmp -s - $@ || echo "$(PROFILE_DIR)" > $@

bindings-python-always: ;

$(PY_NATIVE_STAMP): $(VENV)/.ready $(PY_NATIVE_INPUTS) $(PY_PROFILE_MARK)
	VIRTUAL_ENV="$(abspath $(VENV))" "$(abspath $(VENV))/bin/maturin" develop \
		--manifest-path $(PY_BINDING_DIR)/Cargo.toml $(if $(filter 1,$(RELEASE)),--release)
	@touch $@

test-python: build-python
	$(VENV)/bin/python -m pytest -q $(PY_BINDING_DIR)/tests
