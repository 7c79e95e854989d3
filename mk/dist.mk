# --- release artifacts: `make dist` (issue 51) ---------------------------------
# Every package a user installs without Rust, into $(DIST)/ (dist/), with
# $(DIST)/manifest.json (name, platform, size, SHA-256 of each file) and
# SHA256SUMS. tools/dist/dist.py packs; this file builds the libraries:
#   linux-x86_64    `make lib` (the host's release library, fat LTO)
#   linux-aarch64   cargo-zigbuild for aarch64-unknown-linux-gnu.$(DIST_GLIBC):
#                   zig links against that glibc version's symbols, so the
#                   library loads on glibc >= $(DIST_GLIBC) (manylinux_2_34)
#   macos-aarch64,  cargo-zigbuild, default features, with no Apple SDK: the
#   macos-x86_64    one framework the default build links, CoreFoundation
#                   (iana-time-zone, through chrono: the local time zone's
#                   name), is found as packaging/macos/CoreFoundation.tbd, a
#                   text stub of the functions it calls with the framework's
#                   real install name (the real framework is on every Mac).
#                   `mcp-https` (Security framework) is not built for macOS.
#   windows-x86_64  windows-lib (mingw-w64, release)
# The artifacts, per platform:
#   native/<rid>/           the library (and libcapstan.a; capstan.dll's import
#                           library): .NET's runtimes/<rid>/native layout
#   c/capstan-V-P.tar.gz    the C SDK: lib, .a, capstan.h and the C++ headers,
#                           pkg-config and CMake files (relocatable), LICENSE
#   python/*.whl            py3-none-<tag>: manylinux_2_X for the glibc floor the
#                           library's symbols need, macosx_<min>_<arch> from its
#                           Mach-O header, win_amd64
#   npm/capstan-V.tgz       the main package (optionalDependencies on each
#                           platform's package) and @capstan/<os>-<cpu> packages
#   java/capstan-V.jar      the binding with dev/capstan/native/<platform>/ inside
# cargo-zigbuild and zig (PyPI: cargo-zigbuild, ziglang, pinned by
# packaging/dist/requirements.txt) live in $(DIST_VENV), made by `make
# dist-setup`; `make test` does not need them.
# dist-host: the linux-x86_64 artifacts alone, from `make lib`'s library; the
# dist-test suite of `make test` packs them into $(BUILD)/dist-test/dist and
# installs them as users do (tests/install/dist_test.sh). dist-cross-test
# checks the cross artifacts of `make dist` (tests/install/dist_cross_test.py).
DIST            ?= dist
DIST_PLATFORMS  := linux-x86_64 linux-aarch64 macos-aarch64 macos-x86_64 windows-x86_64
DIST_GLIBC      := 2.34
DIST_VENV       := $(BUILD)/dist-venv
DIST_VENV_STAMP := $(DIST_VENV)/.setup-stamp
DIST_PY         := $(PYTHON) tools/dist/dist.py
DIST_ZIG        := PATH="$(abspath $(DIST_VENV))/bin:$$PATH" CARGO_INCREMENTAL=0 cargo-zigbuild
DIST_RUSTUP     := aarch64-unknown-linux-gnu aarch64-apple-darwin x86_64-apple-darwin $(WIN_TARGET)
DIST_FRAMEWORKS := $(abspath $(BUILD)/dist-frameworks)
LLVM_STRIP      ?= $(firstword $(shell command -v llvm-strip 2>/dev/null) $(wildcard /usr/lib/llvm-*/bin/llvm-strip) llvm-strip)
# The shared and static library of each platform, as cargo leaves them.
DIST_SRC_linux-x86_64   := $(LIBDIR)
DIST_SRC_linux-aarch64  := target/aarch64-unknown-linux-gnu/release
DIST_SRC_macos-aarch64  := target/aarch64-apple-darwin/release
DIST_SRC_macos-x86_64   := target/x86_64-apple-darwin/release
DIST_SRC_windows-x86_64 := target/$(WIN_TARGET)/release
DIST_TOP        = $(abspath $(DIST))

# Not the pattern rules' targets (dist-lib-macos-%, dist-native-%, dist-sdk-%):
# make looks up no pattern rule for a phony target.
.PHONY: dist dist-setup dist-libs dist-pack dist-host dist-test dist-cross-test dist-clean \
        dist-lib-linux-aarch64 dist-lib-windows-x86_64

$(DIST_VENV_STAMP): packaging/dist/requirements.txt
	@mk/setup.sh venv $(DIST_VENV) $(SETUP_PYTHON) packaging/dist/requirements.txt
	@touch $@

dist-setup: $(DIST_VENV_STAMP) $(VENV_STAMP) $(JAVA_STAMP)
	@mk/setup.sh rustup $(addprefix target:,$(DIST_RUSTUP))

dist-lib-linux-aarch64: dist-setup
	$(DIST_ZIG) rustc --release --lib --crate-type cdylib,staticlib --target aarch64-unknown-linux-gnu.$(DIST_GLIBC)

# -F: where zig looks for frameworks (CoreFoundation.framework/CoreFoundation.tbd).
# MACOSX_DEPLOYMENT_TARGET: rustc's own minimum for the target, which zig
# would otherwise replace by its SDK's (15.0: the dylib would refuse older
# Macs). -install_name: rustc names the dylib by its build path unless asked
# (-C rpath); @rpath/libcapstan.dylib lets a host find it beside itself. Both
# only for the final link (after --), so the dependencies are not rebuilt.
DIST_MACOS_MIN_aarch64 := 11.0
DIST_MACOS_MIN_x86_64  := 10.12
dist-lib-macos-%: dist-setup
	@mkdir -p $(DIST_FRAMEWORKS)/CoreFoundation.framework
	@cp packaging/macos/CoreFoundation.tbd $(DIST_FRAMEWORKS)/CoreFoundation.framework/CoreFoundation.tbd
	t=$*-apple-darwin; \
	  env "CARGO_TARGET_$$(echo $$t | tr a-z- A-Z_)_RUSTFLAGS=-C link-arg=-F$(DIST_FRAMEWORKS)" \
	  MACOSX_DEPLOYMENT_TARGET=$(DIST_MACOS_MIN_$*) \
	  $(DIST_ZIG) rustc --release --lib --crate-type cdylib,staticlib --target $$t \
	  -- -C link-arg=-Wl,-install_name,@rpath/libcapstan.dylib

dist-lib-windows-x86_64:
	+@$(MAKE) --no-print-directory windows-lib WIN_PROFILE=release

# One after the other: each is a release build of the whole dependency tree.
dist-libs: lib
	+@for p in $(filter-out linux-x86_64,$(DIST_PLATFORMS)); do $(MAKE) --no-print-directory dist-lib-$$p || exit 1; done

# The natives of one platform into $(DIST)/native/<rid>/; dist-pack strips
# them as `make install` does (llvm-strip reads every format), but not the
# Mach-O files: the linker signed them (arm64 macOS loads only signed code),
# and a strip would break the signature.
dist-native-%:
	@src=$(DIST_SRC_$*); case $* in \
	  windows-*) $(DIST_PY) native $(DIST) $* $$src/capstan.dll $$src/libcapstan.a $$src/libcapstan.dll.a ;; \
	  macos-*) $(DIST_PY) native $(DIST) $* $$src/libcapstan.dylib $$src/libcapstan.a ;; \
	  *) $(DIST_PY) native $(DIST) $* $$src/libcapstan.so $$src/libcapstan.a ;; esac

# The C SDK of one platform: Linux through `make install` (the files it
# installs, made relocatable by dist.py), the others by dist.py.
dist-sdk-linux-%:
	rm -rf $(BUILD)/dist-stage/$*
	$(MAKE) --no-print-directory install INSTALL_BUILD= LIBDIR=$(DIST_SRC_linux-$*) LIB=$(DIST_SRC_linux-$*)/libcapstan.so \
	  STRIP=$(LLVM_STRIP) PREFIX=/capstan DESTDIR=$(abspath $(BUILD)/dist-stage/$*) >/dev/null
	$(DIST_PY) sdk $(DIST) linux-$* $(CRATE_VERSION) $(BUILD)/dist-stage/$*/capstan
dist-sdk-%:
	$(DIST_PY) sdk $(DIST) $* $(CRATE_VERSION)

# Packs every platform of DIST_PLATFORMS whose library is built.
dist-pack: $(VENV_STAMP) $(JAVA_STAMP)
	rm -rf $(DIST) && mkdir -p $(DIST)
	+@set -e; for p in $(DIST_PLATFORMS); do $(MAKE) --no-print-directory dist-native-$$p; done
	@set -e; for f in $(DIST)/native/*/libcapstan.so $(DIST)/native/*/capstan.dll; do \
	  [ ! -f $$f ] || $(LLVM_STRIP) --strip-unneeded $$f; done; \
	  for f in $(DIST)/native/linux-*/libcapstan.a $(DIST)/native/win-*/libcapstan.a; do \
	  [ ! -f $$f ] || $(LLVM_STRIP) --strip-debug $$f; done
	+@set -e; for p in $(DIST_PLATFORMS); do $(MAKE) --no-print-directory dist-sdk-$$p; done
	@set -e; for p in $(DIST_PLATFORMS); do $(DIST_PY) wheel $(DIST) $$p $(CRATE_VERSION) $(PYTHON); done
	$(DIST_PY) npm $(DIST) $(CRATE_VERSION) $(DIST_PLATFORMS)
	@jdk="$(JAVA_JDK)"; [ -n "$$jdk" ] || { echo "dist: the jar needs a JDK >= 22 (mk/find-jdk.sh)"; exit 1; }; \
	  cd $(JAVA_DIR) && JAVA_HOME="$$jdk" $(MVN) $(MVN_FLAGS) -o package dependency:build-classpath -DskipTests \
	    -Dmdep.includeScope=runtime -Dmdep.outputFile=$(abspath $(BUILD))/dist-java-classpath.txt
	$(DIST_PY) jar $(DIST) $(CRATE_VERSION) $(JAVA_DIR)/target/capstan-$(CRATE_VERSION).jar $(DIST_PLATFORMS)
	$(DIST_PY) manifest $(DIST) $(CRATE_VERSION)

dist: dist-libs
	+@$(MAKE) --no-print-directory dist-pack
	@echo "dist: $(DIST)/ holds the artifacts of $(DIST_PLATFORMS) (manifest.json)"

dist-host: lib
	+@$(MAKE) --no-print-directory dist-pack DIST_PLATFORMS=linux-x86_64

# In `make test`: the x86-64 Linux artifacts, from `make lib`'s library (no
# other build), installed from their files in an empty directory outside the
# tree by pip, npm, java and a C compiler through pkg-config and CMake.
DIST_TEST := $(abspath $(BUILD)/dist-test)
dist-test: lib $(VENV_STAMP) $(NODE_BINDING_STAMP) $(JAVA_STAMP)
	+@$(MAKE) --no-print-directory dist-host DIST=$(DIST_TEST)/dist
	JDK="$(JAVA_JDK)" JAVA_CLASSPATH_FILE=$(abspath $(BUILD))/dist-java-classpath.txt \
	  NODE_MODULES=$(abspath bindings/node/node_modules) SETUP_PYTHON=$(SETUP_PYTHON) VENV_PYTHON=$(PYTHON) \
	  tests/install/dist_test.sh $(DIST_TEST)/dist $(CRATE_VERSION)

# After `make dist`: the aarch64 C SDK and wheel run a tool call under
# qemu-aarch64; the Mach-O and PE libraries export exactly the header's
# functions, with the right architecture and install name.
dist-cross-test: $(DIST_VENV_STAMP)
	PATH="$(abspath $(DIST_VENV))/bin:$$PATH" $(DIST_VENV)/bin/python tests/install/dist_cross_test.py $(abspath $(DIST)) $(CRATE_VERSION) $(DIST_GLIBC)

dist-clean:
	rm -rf $(DIST) $(BUILD)/dist-stage $(BUILD)/dist-test
