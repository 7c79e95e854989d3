# capstan: `make demo` builds and runs the demo; `make test` runs every test.

CARGO            ?= cargo
CC               ?= cc
CBINDGEN_VERSION := 0.29.4
LIBDIR           := target/release
LIB              := $(LIBDIR)/libcapstan.so
BUILD            := build
CFLAGS_COMMON    := -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude -g -O1 -pthread
LDFLAGS_COMMON   := -L$(LIBDIR) -Wl,-rpath,$(abspath $(LIBDIR)) -lcapstan -pthread
SAN_FLAGS        := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# Valgrind runs one thread at a time; --fair-sched=yes keeps a spinning tool
# from starving the timer threads (a 2 ms timeout then took over 5 s).
VALGRIND         := valgrind --fair-sched=yes --leak-check=full --error-exitcode=1 --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect --suppressions=tests/c/valgrind.supp --quiet

C_TESTS   := $(patsubst tests/c/%.c,%,$(wildcard tests/c/test_*.c))
EXAMPLES  := $(patsubst examples/c/%.c,%,$(wildcard examples/c/*.c))

.PHONY: all lib demo game-loop run-examples python-test python-bench test rust-test clippy fmt-check header header-check cbindgen \
        c-tests c-test-plain c-test-asan c-test-valgrind examples bench clean \
        cpp-test cpp-examples swift-modulemap-check

all: lib

lib:
	$(CARGO) build --release --lib

# --- examples ---------------------------------------------------------------
$(BUILD)/examples/%: examples/c/%.c include/capstan.h lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $< -o $@ $(LDFLAGS_COMMON)

examples: $(addprefix $(BUILD)/examples/,$(EXAMPLES))

demo: $(BUILD)/examples/demo
	$(BUILD)/examples/demo

game-loop: $(BUILD)/examples/game_loop
	$(BUILD)/examples/game_loop

# The README's snippets and the game loop, compiled and run (each exits
# non-zero if its output is wrong).
run-examples: $(BUILD)/examples/quickstart $(BUILD)/examples/agent_turn $(BUILD)/examples/game_loop
	$(BUILD)/examples/quickstart
	$(BUILD)/examples/agent_turn
	$(BUILD)/examples/game_loop > $(BUILD)/game_loop.out || (cat $(BUILD)/game_loop.out; exit 1)
	@tail -1 $(BUILD)/game_loop.out

# --- header -----------------------------------------------------------------
cbindgen:
	@cbindgen --version 2>/dev/null | grep -q "$(CBINDGEN_VERSION)" || \
	  $(CARGO) install cbindgen --version $(CBINDGEN_VERSION) --locked

header: cbindgen
	cbindgen --config cbindgen.toml --crate capstan --output include/capstan.h

header-check: cbindgen
	@mkdir -p $(BUILD)
	cbindgen --config cbindgen.toml --crate capstan --output $(BUILD)/capstan.h
	@diff -u include/capstan.h $(BUILD)/capstan.h || \
	  (echo "include/capstan.h is stale: run 'make header' and commit it" && exit 1)
	@echo "header-check: include/capstan.h matches cbindgen $(CBINDGEN_VERSION)"

# --- C tests ------------------------------------------------------------------
$(BUILD)/c/plain/%: tests/c/%.c tests/c/check.h tests/c/support.h include/capstan.h lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $< -o $@ $(LDFLAGS_COMMON)

$(BUILD)/c/asan/%: tests/c/%.c tests/c/check.h tests/c/support.h include/capstan.h lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) $< -o $@ $(LDFLAGS_COMMON)

c-test-plain: $(addprefix $(BUILD)/c/plain/,$(C_TESTS))
	@set -e; for t in $(C_TESTS); do echo "== $$t (plain)"; $(BUILD)/c/plain/$$t; done

c-test-asan: $(addprefix $(BUILD)/c/asan/,$(C_TESTS))
	@set -e; for t in $(C_TESTS); do echo "== $$t (asan+ubsan)"; \
	  ASAN_OPTIONS=detect_leaks=1 CAPSTAN_TEST_SCALE=small $(BUILD)/c/asan/$$t; done

c-test-valgrind: $(addprefix $(BUILD)/c/plain/,$(C_TESTS))
	@set -e; for t in $(C_TESTS); do echo "== $$t (valgrind)"; \
	  CAPSTAN_TEST_SCALE=small $(VALGRIND) $(BUILD)/c/plain/$$t; done

c-tests: c-test-plain c-test-asan c-test-valgrind

# --- Python binding -----------------------------------------------------------
PYTHON ?= python3

python-test: lib
	$(PYTHON) -m pip install --quiet './bindings/python[test]'
	CAPSTAN_LIB=$(abspath $(LIB)) $(PYTHON) -m pytest -q bindings/python/tests

python-bench: lib
	CAPSTAN_LIB=$(abspath $(LIB)) $(PYTHON) bindings/python/bench/bench.py

# --- C++ wrapper and Swift module map (issue 13) -----------------------------
# bindings/cpp/capstan.hpp is header-only. cpp-test builds every test as C++17
# and as C++20 under ASan/UBSan (test_no_exceptions with -fno-exceptions: the
# try_ API only) and runs them. cpp-examples builds and runs
# examples/cpp/quickstart.cpp (the README's program) and game_loop.cpp.
# swift-modulemap-check imports the Swift package's C module through its
# module map with clang -fmodules (there is no Swift toolchain here) and
# checks that capstan.h's constants have shapes Swift imports.
CXX              ?= g++
CLANG            ?= clang
CXXFLAGS_COMMON  := -Wall -Wextra -Werror -pedantic -Iinclude -Ibindings/cpp -g -O1 -pthread
CPP_TESTS        := $(patsubst bindings/cpp/tests/%.cpp,%,$(wildcard bindings/cpp/tests/test_*.cpp))
CPP_DEPS         := bindings/cpp/capstan.hpp bindings/cpp/tests/check.hpp include/capstan.h

# `| lib`: the library is linked dynamically, so a rebuilt libcapstan.so
# needs no relink; the binaries are rebuilt when a header or test changes.
$(BUILD)/cpp/17/%: bindings/cpp/tests/%.cpp $(CPP_DEPS) | lib
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(CXXFLAGS_COMMON) $(SAN_FLAGS) $(if $(findstring no_exceptions,$*),-fno-exceptions) $< -o $@ $(LDFLAGS_COMMON)

$(BUILD)/cpp/20/%: bindings/cpp/tests/%.cpp $(CPP_DEPS) | lib
	@mkdir -p $(dir $@)
	$(CXX) -std=c++20 $(CXXFLAGS_COMMON) $(SAN_FLAGS) $(if $(findstring no_exceptions,$*),-fno-exceptions) $< -o $@ $(LDFLAGS_COMMON)

cpp-test: $(addprefix $(BUILD)/cpp/17/,$(CPP_TESTS)) $(addprefix $(BUILD)/cpp/20/,$(CPP_TESTS))
	@set -e; for std in 17 20; do for t in $(CPP_TESTS); do echo "== $$t (C++$$std, asan+ubsan)"; \
	  ASAN_OPTIONS=detect_leaks=1 $(BUILD)/cpp/$$std/$$t; done; done

$(BUILD)/examples/cpp/%: examples/cpp/%.cpp bindings/cpp/capstan.hpp include/capstan.h | lib
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(CXXFLAGS_COMMON) -O2 $< -o $@ $(LDFLAGS_COMMON)

cpp-examples: $(BUILD)/examples/cpp/quickstart $(BUILD)/examples/cpp/game_loop
	$(BUILD)/examples/cpp/quickstart
	$(BUILD)/examples/cpp/game_loop > $(BUILD)/cpp_game_loop.out || (cat $(BUILD)/cpp_game_loop.out; exit 1)
	@tail -3 $(BUILD)/cpp_game_loop.out

SWIFT_MODULEMAP := bindings/swift/Sources/CCapstan/module.modulemap

swift-modulemap-check: include/capstan.h | lib
	@mkdir -p $(BUILD)/swift
	$(CLANG) -std=c11 -Wall -Wextra -Werror -fmodules -fmodules-cache-path=$(BUILD)/swift/module-cache \
	  -fmodule-map-file=$(SWIFT_MODULEMAP) -Iinclude \
	  bindings/swift/check/import_module.c -o $(BUILD)/swift/import_module $(LDFLAGS_COMMON)
	$(BUILD)/swift/import_module
	$(CLANG) -E -dM -Iinclude $(dir $(SWIFT_MODULEMAP))shim.h > $(BUILD)/swift/macros.txt
	$(PYTHON) bindings/swift/check/swift_macros.py $(BUILD)/swift/macros.txt

# --- everything -------------------------------------------------------------
rust-test:
	$(CARGO) test --all-targets

clippy:
	$(CARGO) clippy --all-targets -- -D warnings

fmt-check:
	$(CARGO) fmt --check

test: fmt-check clippy rust-test header-check c-tests examples run-examples python-test cpp-test cpp-examples swift-modulemap-check
	@echo "make test: all suites passed"

# Figures of issue #6 (BENCHMARKS.md): criterion benches of the core, the
# floor, then the ABI table with the default pool and with 1 and 2 threads.
# The floor runs right before the ABI table so that their ratio comes from
# one run. Not part of `make test`.
bench: lib
	@mkdir -p $(BUILD)/bench
	$(CC) $(CFLAGS_COMMON) -O2 bench/c/abi_bench.c -o $(BUILD)/bench/abi_bench $(LDFLAGS_COMMON)
	$(CARGO) bench --no-run --bench core --bench floor
	$(CARGO) bench --bench core
	CAPSTAN_FLOOR_OUT=$(abspath $(BUILD)/bench/floor_ns) $(CARGO) bench --bench floor
	$(BUILD)/bench/abi_bench --floor-ns-file $(BUILD)/bench/floor_ns
	$(BUILD)/bench/abi_bench --threads 1 --scaling
	$(BUILD)/bench/abi_bench --threads 2 --scaling

clean:
	rm -rf $(BUILD)
	$(CARGO) clean
