# Node binding: `make build-node`, `make test-node`, `make lint-node`,
# `make regen-node`. Included by the top Makefile, which defines NODE,
# PROFILE_DIR and the cargo-build target; run from the repository root.
#
# The addon (libferromcp_node.so) comes from the top Makefile's one
# workspace build and is copied to the name the loader (native.js) requires.
# The napi CLI is not used to build: it always passes `--target <triple>`,
# which compiles every dependency again into target/<triple>/. It only
# regenerates the committed loader and typings (`make regen-node`), after a
# change to the exported Rust API.
#
# `make build-node` also links node_modules/ferromcp -> bindings-node at the
# repository root, so that any script in the repository (the README's
# examples) can `import { Server } from 'ferromcp'`.

NODE_DIR := bindings-node
NODE_ADDON := $(NODE_DIR)/ferromcp.linux-x64-gnu.node
# npm ci wipes node_modules, so a stamp kept there is wiped with it.
NODE_NPM_STAMP := $(NODE_DIR)/node_modules/.ferromcp-npm-installed

.PHONY: build-node test-node lint-node regen-node

build-node: cargo-build
	cp -f target/$(PROFILE_DIR)/libferromcp_node.so $(NODE_ADDON)
	@mkdir -p node_modules
	@ln -sfn ../$(NODE_DIR) node_modules/ferromcp

# The dev tools (napi CLI, typescript, @types/node), pinned in package-lock.json.
$(NODE_NPM_STAMP): $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json
	cd $(NODE_DIR) && npm ci --no-audit --no-fund
	@touch $@

test-node: build-node $(NODE_NPM_STAMP)
	$(NODE) --test $(NODE_DIR)/test/

# tsc --strict over a file that uses the public typings (index.d.ts,
# index.d.mts, native.d.ts) and the JS example; see test-support/tsconfig.json.
lint-node: $(NODE_NPM_STAMP)
	$(NODE) $(NODE_DIR)/node_modules/typescript/bin/tsc --strict --noEmit \
		--project $(NODE_DIR)/test-support/tsconfig.json

regen-node: $(NODE_NPM_STAMP)
	cd $(NODE_DIR) && $(NODE) node_modules/@napi-rs/cli/dist/cli.js build --platform \
		--js native.js --dts native.d.ts
