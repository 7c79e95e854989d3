# --- Linux aarch64 (ARM64) under qemu-user (issue 51, item 4) ---------------
# aarch64-test builds the library for aarch64-unknown-linux-gnu with
# Debian's cross gcc as the linker (gcc-aarch64-linux-gnu, which brings the
# aarch64 glibc), then runs the library's unit tests and the executor's
# integration tests (cargo's runner: qemu-aarch64) and every C test (built
# by the cross gcc) under qemu-aarch64, as i686-test does natively for i686.
# The unoptimized library (dev profile), built once with the Rust test
# programs (see i686-test). Not in `make test` yet: its build alone took
# 11.5 minutes on this 2-core machine under load (`time make aarch64-lib`),
# and the C tests run 5-10 times slower under qemu; run it before a release.
AARCH64_TARGET    := aarch64-unknown-linux-gnu
AARCH64_CC        ?= aarch64-linux-gnu-gcc
AARCH64_SYSROOT   ?= /usr/aarch64-linux-gnu
AARCH64_LIBDIR     = target/$(AARCH64_TARGET)/debug
AARCH64_ENV       := CARGO_INCREMENTAL=0 CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=$(AARCH64_CC) \
                     CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L $(AARCH64_SYSROOT)" \
                     CC_aarch64_unknown_linux_gnu=$(AARCH64_CC)
AARCH64_RUST_TESTS := --test exec --test submit --test registry_rules
AARCH64_APT       := gcc-aarch64-linux-gnu qemu-user

.PHONY: aarch64-setup aarch64-lib aarch64-rust-test aarch64-c-test aarch64-test

aarch64-setup:
	@missing=; for p in $(AARCH64_APT); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then echo "aarch64-setup: apt-get install$$missing"; \
	    apt-get update -q && apt-get install -y -q $$missing; fi
	@rustup target list --installed | grep -qx $(AARCH64_TARGET) || rustup target add $(AARCH64_TARGET)

aarch64-lib: aarch64-setup
	$(AARCH64_ENV) $(CARGO) build --profile dev --lib --target $(AARCH64_TARGET) $(AARCH64_RUST_TESTS)
	@ln -sf libcapstan.so $(AARCH64_LIBDIR)/$(SONAME)
	@file -L $(AARCH64_LIBDIR)/libcapstan.so | grep -q "ARM aarch64" || { echo "aarch64-lib: not an aarch64 library"; exit 1; }

aarch64-rust-test:
	$(AARCH64_ENV) $(CARGO) test --target $(AARCH64_TARGET) -p capstan-core --lib
	$(AARCH64_ENV) $(CARGO) test --target $(AARCH64_TARGET) --lib $(AARCH64_RUST_TESTS)

$(BUILD)/aarch64/c/%: tests/c/%.c tests/c/check.h tests/c/support.h tests/c/queue.h include/capstan.h
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(CFLAGS_COMMON) $< -o $@ -L$(AARCH64_LIBDIR) -Wl,-rpath,$(abspath $(AARCH64_LIBDIR)) -lcapstan -pthread

aarch64-c-test: $(addprefix $(BUILD)/aarch64/c/,$(C_TESTS))
	@set -e; for t in $(C_TESTS); do echo "== $$t (aarch64, qemu)"; \
	  CAPSTAN_LIB=$(abspath $(AARCH64_LIBDIR)/libcapstan.so) qemu-aarch64 -L $(AARCH64_SYSROOT) $(BUILD)/aarch64/c/$$t; done

aarch64-test:
	+@$(MAKE) --no-print-directory aarch64-lib
	+@$(MAKE) --no-print-directory aarch64-rust-test
	+@$(MAKE) --no-print-directory aarch64-c-test
	@echo "aarch64-test: Rust and C tests pass on $(AARCH64_TARGET) under qemu-aarch64 (dev library)"
