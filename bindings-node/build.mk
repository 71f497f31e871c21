# Node binding: `make build-node` installs the npm dev tools (pinned in
# package-lock.json) and builds the addon with the napi CLI, which also
# regenerates the loader (native.js) and its typings (native.d.ts);
# `make test-node` runs the node:test suite. Included by the top Makefile,
# which defines NODE, CARGO_PROFILE_FLAG and PROFILE_DIR; run from the repo root.

NODE_DIR := bindings-node
# npm ci wipes node_modules, so stamps kept there are wiped with it.
NODE_NPM_STAMP := $(NODE_DIR)/node_modules/.ferromcp-npm-installed
# One stamp per profile: building the other profile removes it, so switching
# RELEASE back and forth always copies the right addon.
NODE_BUILD_STAMP := $(NODE_DIR)/node_modules/.ferromcp-built-$(PROFILE_DIR)
# Everything the addon is compiled from; cargo's own check would be exact,
# but the napi CLI costs seconds even when cargo has nothing to do.
NODE_RUST_INPUTS := $(shell find core/src $(NODE_DIR)/src -name '*.rs' 2>/dev/null) \
	core/Cargo.toml $(NODE_DIR)/Cargo.toml $(NODE_DIR)/build.rs Cargo.toml Cargo.lock
# A deleted addon must be rebuilt even when the stamp survived.
NODE_ADDON_GONE := $(if $(wildcard $(NODE_DIR)/ferromcp.*.node),,node-addon-missing)

.PHONY: build-node test-node node-addon-missing

build-node: $(NODE_BUILD_STAMP)

$(NODE_NPM_STAMP): $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json
	cd $(NODE_DIR) && npm ci --no-audit --no-fund
	@touch $@

$(NODE_BUILD_STAMP): $(NODE_NPM_STAMP) $(NODE_RUST_INPUTS) $(NODE_ADDON_GONE)
	cd $(NODE_DIR) && $(NODE) node_modules/@napi-rs/cli/dist/cli.js build --platform $(CARGO_PROFILE_FLAG) --js native.js --dts native.d.ts
	@rm -f $(NODE_DIR)/node_modules/.ferromcp-built-*
	@touch $@

test-node: build-node
	$(NODE) --test $(NODE_DIR)/test/
