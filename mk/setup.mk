# --- set-up (issue #27): what the suites need, installed once ---------------
# `make setup`, the first step of `make test`, installs what is missing, pinned,
# and nothing else: a second run installs nothing. Each step says what it
# installs, or prints one line when there is nothing to do (mk/setup.sh):
#   1. Debian packages, SETUP_APT_PACKAGES: apt-get as root, or sudo when it
#      can ask for a password (or needs none); otherwise it stops with the
#      command to run. SETUP_SYSTEM=skip leaves them to you (on systems
#      without apt-get it only warns: install the equivalents yourself).
#   2. Go >= 1.$(GO_MIN_MINOR) for bindings/go: $(GO), else Debian's golang-go.
#   3. rustup components (clippy, rustfmt) and SETUP_RUSTUP_TARGETS.
#   4. pinned cargo tools: cbindgen $(CBINDGEN_VERSION), cargo-fuzz $(CARGO_FUZZ_VERSION).
#   5. build/venv, a Python venv inside the build tree with the Python tests'
#      packages (PYTHON_REQUIREMENTS, each pinned by tests/python-constraints.txt):
#      every suite that runs Python uses it (PYTHON, CAPSTAN_TEST_PYTHON), never
#      the system interpreter.
#   6. tests/mcp/node_modules: `npm ci` of tests/mcp/package-lock.json, and
#      bindings/node/node_modules: `npm ci` of bindings/node/package-lock.json
#      (koffi, whose prebuilt binaries are per-platform optional packages: --ignore-scripts).
#   7. bindings/java's Maven dependencies, into ~/.m2 (mk/java.mk; needs a
#      JDK >= 22, which Debian bookworm does not package: mk/find-jdk.sh).
# 5, 6 and 7 are stamp files, redone when their inputs change; the suites that
# need them depend on the stamps, so `make python-test` also works alone.
# Suites extend the lists: `SETUP_APT_PACKAGES += pkg`, `SETUP_RUSTUP_TARGETS
# += triple`, `SETUP_STAMPS += file` (with a rule that makes the file).
SETUP_APT_PACKAGES    := valgrind gcc g++ make cmake pkgconf binutils python3-venv clang nodejs npm \
                         mingw-w64 wine64 gcc-multilib abigail-tools maven nlohmann-json3-dev
SETUP_RUST_COMPONENTS := clippy rustfmt
SETUP_RUSTUP_TARGETS  :=
SETUP_PYTHON          ?= python3
GO_MIN_MINOR          := 24
CBINDGEN_VERSION      := 0.29.4
CARGO_FUZZ_VERSION    := 0.13.2

VENV                := $(BUILD)/venv
VENV_STAMP          := $(VENV)/.setup-stamp
PYTHON_REQUIREMENTS := tests/python-requirements.txt tests/mcp/requirements.txt
NPM_STAMP           := tests/mcp/node_modules/.setup-stamp
NODE_BINDING_STAMP  := bindings/node/node_modules/.setup-stamp
# bindings/java's Maven dependencies (mk/java.mk has the rule).
JAVA_STAMP          := $(BUILD)/java/.setup-stamp
SETUP_STAMPS        := $(VENV_STAMP) $(NPM_STAMP) $(NODE_BINDING_STAMP) $(JAVA_STAMP)

# Python for every suite: the venv's (absolute: tests run it from other
# directories). CAPSTAN_TEST_PYTHON is what tests/mcp_client.rs and
# tests/mcp/test_mcp_client.c start tests/mcp/fastmcp_server.py with.
PYTHON ?= $(abspath $(VENV))/bin/python
export CAPSTAN_TEST_PYTHON ?= $(abspath $(VENV))/bin/python
# bindings/go builds with the Go it finds and never downloads another.
export GOTOOLCHAIN ?= local
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)

.PHONY: setup setup-system setup-tools setup-deps cbindgen cargo-fuzz mcp-deps

# One step after the other, also under -j (the venv needs python3-venv, npm ci needs npm).
setup:
	@$(MAKE) --no-print-directory setup-system
	@$(MAKE) --no-print-directory setup-tools
	@$(MAKE) --no-print-directory setup-deps

# What the tree itself holds: the venv and node_modules (no system change).
setup-deps: $(SETUP_STAMPS)
	@echo "setup: $(VENV), tests/mcp/node_modules, bindings/node/node_modules and bindings/java's Maven dependencies up to date"

setup-system:
	@mk/setup.sh apt $(SETUP_APT_PACKAGES)
	@mk/setup.sh go $(GO) $(GO_MIN_MINOR)

setup-tools: cbindgen cargo-fuzz
	@mk/setup.sh rustup $(SETUP_RUST_COMPONENTS) $(addprefix target:,$(SETUP_RUSTUP_TARGETS))

cbindgen:
	@CARGO=$(CARGO) mk/setup.sh cargo-tool cbindgen $(CBINDGEN_VERSION)

cargo-fuzz:
	@CARGO=$(CARGO) mk/setup.sh cargo-tool cargo-fuzz $(CARGO_FUZZ_VERSION)

$(VENV_STAMP): $(PYTHON_REQUIREMENTS) tests/python-constraints.txt
	@mk/setup.sh venv $(VENV) $(SETUP_PYTHON) $(PYTHON_REQUIREMENTS)
	@touch $@

# npm's cache stays in the tree too (tests/mcp/.npm-cache).
$(NPM_STAMP): tests/mcp/package.json tests/mcp/package-lock.json
	@echo "setup: npm ci into tests/mcp/node_modules: $$(sed -n 's/^    "\(@*[a-z][^"]*\)": "\([0-9^~][^"]*\)".*/\1@\2/p' tests/mcp/package.json | tr '\n' ' ')(pinned by package-lock.json)"
	cd tests/mcp && npm ci --no-audit --no-fund --loglevel=error --cache "$(abspath tests/mcp/.npm-cache)"
	@touch $@

# The Node.js binding's dependencies (koffi; typescript, a devDependency, for
# the type test). npm's cache stays in the tree. The bench's `ai` and `zod`
# are bindings/node/bench's own, installed by `make node-bench` only.
$(NODE_BINDING_STAMP): bindings/node/package.json bindings/node/package-lock.json
	@echo "setup: npm ci into bindings/node/node_modules (pinned by package-lock.json)"
	cd bindings/node && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error --cache "$(abspath bindings/node/.npm-cache)"
	@touch $@

# The MCP peers (the name the CI used before `make setup`).
mcp-deps: setup-deps
