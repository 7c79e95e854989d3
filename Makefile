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
        c-tests c-test-plain c-test-asan c-test-valgrind examples bench clean

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

# --- everything -------------------------------------------------------------
rust-test:
	$(CARGO) test --all-targets

clippy:
	$(CARGO) clippy --all-targets -- -D warnings

fmt-check:
	$(CARGO) fmt --check

test: fmt-check clippy rust-test header-check c-tests examples run-examples python-test
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

# --- validation helper (issue 17): bounded costs -----------------------------
# The figures behind README "Limits": each hostile input's time and peak heap.
# tests/limits.rs (part of rust-test) asserts the same bounds loosely. Not
# part of `make test`.
.PHONY: bench-limits
bench-limits:
	$(CARGO) bench --bench limits

clean:
	rm -rf $(BUILD)
	$(CARGO) clean
