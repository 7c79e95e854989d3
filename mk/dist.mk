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
#   linux-i686      i686-lib (release; gcc -m32 links)
#   ios-aarch64,    the static library alone (no Apple SDK or Android NDK
#   android-aarch64 here to link a shared one): an app's toolchain links it
# Two flavours of each, one header: full (the default features) and core
# (--no-default-features: no MCP bridge, whose functions then answer
# UNSUPPORTED), built into $(DIST_CORE_DIR) by dist-core-<platform>. The C
# SDK archives carry both (lib/ and lib/core/); the language packages the
# full one.
# The artifacts, per platform:
#   native/<rid>/           the library (and libcapstan.a; capstan.dll's import
#                           library): .NET's runtimes/<rid>/native layout
#   native-core/<rid>/      the same of the core flavour
#   c/capstan-V-P.tar.gz    the C SDK: lib, .a, capstan.h and the C++ headers,
#                           pkg-config and CMake files (relocatable), LICENSE
#   python/*.whl            py3-none-<tag>: manylinux_2_X for the glibc floor the
#                           library's symbols need, macosx_<min>_<arch> from its
#                           Mach-O header, win_amd64
#   npm/capstan-V.tgz       the main package (optionalDependencies on each
#                           platform's package) and @capstan-rt/<os>-<cpu> packages
#   java/capstan-V.jar      the binding with dev/capstan/native/<platform>/ inside,
#                           and its pom (io.github.capstan-rt:capstan)
#   python/capstan_rt-V.tar.gz  the sdist (`make dist-sdist`; builds with cargo)
# cargo-zigbuild and zig (PyPI: cargo-zigbuild, ziglang, pinned by
# packaging/dist/requirements.txt) live in $(DIST_VENV), made by `make
# dist-setup`; `make test` does not need them.
# dist-host: the linux-x86_64 artifacts alone, from `make lib`'s library; the
# dist-test suite of `make test` packs them into $(BUILD)/dist-test/dist and
# installs them as users do (tests/install/dist_test.sh). dist-cross-test
# checks the cross artifacts of `make dist` (tests/install/dist_cross_test.py).
DIST            ?= dist
DIST_PLATFORMS  := linux-x86_64 linux-aarch64 linux-i686 macos-aarch64 macos-x86_64 windows-x86_64 \
                   ios-aarch64 android-aarch64
DIST_CORE_DIR   := target/core
# What dist-lib-<platform> adds to its cargo command: nothing for the full
# flavour; dist-core-<platform> sets the core's.
DIST_CARGO_FLAGS :=
DIST_CORE_FLAGS := --no-default-features --target-dir $(DIST_CORE_DIR)
DIST_GLIBC      := 2.34
DIST_VENV       := $(BUILD)/dist-venv
DIST_VENV_STAMP := $(DIST_VENV)/.setup-stamp
DIST_PY         := $(PYTHON) tools/dist/dist.py
DIST_ZIG        := PATH="$(abspath $(DIST_VENV))/bin:$$PATH" CARGO_INCREMENTAL=0 cargo-zigbuild
DIST_RUSTUP     := aarch64-unknown-linux-gnu aarch64-apple-darwin x86_64-apple-darwin $(WIN_TARGET) $(I686_TARGET) \
                   aarch64-apple-ios aarch64-linux-android
DIST_FRAMEWORKS := $(abspath $(BUILD)/dist-frameworks)
LLVM_STRIP      ?= $(firstword $(shell command -v llvm-strip 2>/dev/null) $(wildcard /usr/lib/llvm-*/bin/llvm-strip) llvm-strip)
# The shared and static library of each platform, as cargo leaves them.
DIST_SRC_linux-x86_64   := $(LIBDIR)
DIST_SRC_linux-aarch64  := target/aarch64-unknown-linux-gnu/release
DIST_SRC_macos-aarch64  := target/aarch64-apple-darwin/release
DIST_SRC_macos-x86_64   := target/x86_64-apple-darwin/release
DIST_SRC_windows-x86_64 := target/$(WIN_TARGET)/release
DIST_SRC_linux-i686     := target/$(I686_TARGET)/release
DIST_SRC_ios-aarch64    := target/aarch64-apple-ios/release
DIST_SRC_android-aarch64 := target/aarch64-linux-android/release
# The core flavour's: the same under $(DIST_CORE_DIR).
DIST_CORE_SRC_linux-x86_64 := $(DIST_CORE_DIR)/release
$(foreach p,$(filter-out linux-x86_64,$(DIST_PLATFORMS)),$(eval DIST_CORE_SRC_$(p) := $(patsubst target/%,$(DIST_CORE_DIR)/%,$(DIST_SRC_$(p)))))
DIST_TOP        = $(abspath $(DIST))

# Not the pattern rules' targets (dist-lib-macos-%, dist-native-%, dist-sdk-%):
# make looks up no pattern rule for a phony target.
.PHONY: dist dist-setup dist-libs dist-pack dist-host dist-test dist-cross-test dist-clean dist-sizes \
        dist-sdist dist-sdist-test dist-lib-linux-x86_64 dist-lib-linux-aarch64 dist-lib-linux-i686 \
        dist-lib-windows-x86_64 dist-lib-ios-aarch64 dist-lib-android-aarch64

$(DIST_VENV_STAMP): packaging/dist/requirements.txt
	@mk/setup.sh venv $(DIST_VENV) $(SETUP_PYTHON) packaging/dist/requirements.txt
	@touch $@

dist-setup: $(DIST_VENV_STAMP) $(VENV_STAMP) $(JAVA_STAMP)
	@mk/setup.sh rustup $(addprefix target:,$(DIST_RUSTUP))

dist-lib-linux-x86_64:
	$(CARGO) $(LIB_BUILD) $(DIST_CARGO_FLAGS)

dist-lib-linux-aarch64: dist-setup
	$(DIST_ZIG) rustc --release --lib --crate-type cdylib,staticlib --target aarch64-unknown-linux-gnu.$(DIST_GLIBC) $(DIST_CARGO_FLAGS)

dist-lib-linux-i686:
	$(I686_CARGO) $(LIB_BUILD) --target $(I686_TARGET) $(DIST_CARGO_FLAGS)

# Static libraries only, unlinked: rustc needs no linker for them.
dist-lib-ios-aarch64 dist-lib-android-aarch64: dist-lib-%-aarch64:
	CARGO_INCREMENTAL=0 $(CARGO) rustc --release --lib --crate-type staticlib \
	  --target $(if $(filter ios,$*),aarch64-apple-ios,aarch64-linux-android) $(DIST_CARGO_FLAGS)

# The core flavour of a platform: its dist-lib rule with the core's flags.
dist-core-%:
	+@$(MAKE) --no-print-directory dist-lib-$* DIST_CARGO_FLAGS="$(DIST_CORE_FLAGS)"

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
	  $(DIST_ZIG) rustc --release --lib --crate-type cdylib,staticlib --target $$t $(DIST_CARGO_FLAGS) \
	  -- -C link-arg=-Wl,-install_name,@rpath/libcapstan.dylib

# As windows-lib (a cargo build: no fat LTO, see the sizes).
dist-lib-windows-x86_64:
	$(CARGO) build --release --lib --target $(WIN_TARGET) $(DIST_CARGO_FLAGS)

# One after the other: each is a release build of the whole dependency tree.
dist-libs: lib
	+@for p in $(filter-out linux-x86_64,$(DIST_PLATFORMS)); do $(MAKE) --no-print-directory dist-lib-$$p || exit 1; done
	+@for p in $(DIST_PLATFORMS); do $(MAKE) --no-print-directory dist-core-$$p || exit 1; done

# The natives of one platform into $(DIST)/native/<rid>/; dist-pack strips
# them as `make install` does (llvm-strip reads every format), but not the
# Mach-O files: the linker signed them (arm64 macOS loads only signed code),
# and a strip would break the signature.
# The core flavour is packed when it was built (dist-host packs none).
dist-native-%:
	@for f in full core; do \
	  if [ $$f = full ]; then src=$(DIST_SRC_$*); else src=$(DIST_CORE_SRC_$*); [ -f $$src/libcapstan.a ] || continue; fi; \
	  case $* in \
	  windows-*) $(DIST_PY) native $(DIST) $* $$f $$src/capstan.dll $$src/libcapstan.a $$src/libcapstan.dll.a ;; \
	  macos-*) $(DIST_PY) native $(DIST) $* $$f $$src/libcapstan.dylib $$src/libcapstan.a ;; \
	  ios-*|android-*) $(DIST_PY) native $(DIST) $* $$f - $$src/libcapstan.a ;; \
	  *) $(DIST_PY) native $(DIST) $* $$f $$src/libcapstan.so $$src/libcapstan.a ;; esac || exit 1; done

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
	@set -e; for f in $(DIST)/native*/*/libcapstan.so $(DIST)/native*/*/capstan.dll; do \
	  [ ! -f $$f ] || $(LLVM_STRIP) --strip-unneeded $$f; done; \
	  for f in $(DIST)/native*/linux-*/libcapstan.a $(DIST)/native*/win-*/libcapstan.a $(DIST)/native*/android-*/libcapstan.a; do \
	  [ ! -f $$f ] || $(LLVM_STRIP) --strip-debug $$f; done
	+@set -e; for p in $(DIST_PLATFORMS); do $(MAKE) --no-print-directory dist-sdk-$$p; done
	@set -e; for p in $(DIST_PLATFORMS); do $(DIST_PY) wheel $(DIST) $$p $(CRATE_VERSION) $(PYTHON); done
	$(DIST_PY) npm $(DIST) $(CRATE_VERSION) $(DIST_PLATFORMS)
	@jdk="$(JAVA_JDK)"; [ -n "$$jdk" ] || { echo "dist: the jar needs a JDK >= 22 (mk/find-jdk.sh)"; exit 1; }; \
	  cd $(JAVA_DIR) && JAVA_HOME="$$jdk" $(MVN) $(MVN_FLAGS) -o package dependency:build-classpath -DskipTests \
	    -Dmdep.includeScope=runtime -Dmdep.outputFile=$(abspath $(BUILD))/dist-java-classpath.txt
	$(DIST_PY) jar $(DIST) $(CRATE_VERSION) $(JAVA_DIR)/target/capstan-$(CRATE_VERSION).jar $(DIST_PLATFORMS)
	@[ "$(DIST_PLATFORMS)" = linux-x86_64 ] || $(PYTHON) tools/dist/sdist.py $(DIST)/python $(CRATE_VERSION)
	$(DIST_PY) manifest $(DIST) $(CRATE_VERSION)
	@$(DIST_PY) sizes $(DIST)

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
	JDK="$(JAVA_JDK)" \
	  NODE_MODULES=$(abspath bindings/node/node_modules) SETUP_PYTHON=$(SETUP_PYTHON) VENV_PYTHON=$(PYTHON) \
	  tests/install/dist_test.sh $(DIST_TEST)/dist $(CRATE_VERSION)

# After `make dist`: the aarch64 C SDK and wheel run a tool call under
# qemu-aarch64, the wheel's Python package too, imported by Debian's arm64
# Python ($(AARCH64_PYTHON), tools/dist/aarch64_python.sh); the i686 SDK's
# programs run here (gcc -m32); the Mach-O and PE libraries export exactly the
# header's functions, with the right architecture and install name; the iOS
# and Android static libraries hold objects of their target defining them;
# every SDK archive carries the core flavour (tests/install/dist_cross_test.py).
# DIST_CROSS_PLATFORMS= checks fewer platforms (of a partial dist/).
AARCH64_PYTHON := $(BUILD)/aarch64-python
DIST_CROSS_PLATFORMS ?=
$(AARCH64_PYTHON)/usr/bin/python3.11:
	tools/dist/aarch64_python.sh $(AARCH64_PYTHON)

dist-cross-test: $(DIST_VENV_STAMP) $(VENV_STAMP) $(AARCH64_PYTHON)/usr/bin/python3.11
	PATH="$(abspath $(DIST_VENV))/bin:$$PATH" AARCH64_PYTHON_ROOT=$(abspath $(AARCH64_PYTHON)) AUDITWHEEL_PYTHON=$(PYTHON) \
	  $(DIST_VENV)/bin/python tests/install/dist_cross_test.py $(abspath $(DIST)) $(CRATE_VERSION) $(DIST_GLIBC) $(DIST_CROSS_PLATFORMS)

# Sizes of every library in $(DIST) (stripped as packed), per platform and
# flavour: the table of docs/platforms-and-packaging.md.
dist-sizes:
	@$(DIST_PY) sizes $(DIST)

# The Python sdist (tools/dist/sdist.py): the binding and the Rust workspace;
# pip builds the library from it with cargo. dist-sdist-test installs it as a
# user would, in an empty directory into a fresh venv (pip fetches hatchling
# from PyPI: no --no-index), and makes a tool call. Not in `make test`: it is
# a release build of the library (CARGO_TARGET_DIR=$(abspath target) by
# default, so cargo reuses this tree's dependencies; SDIST_TARGET_DIR= for a
# cold one, as a user has).
SDIST_TARGET_DIR ?= $(abspath target)
dist-sdist:
	$(PYTHON) tools/dist/sdist.py $(DIST)/python $(CRATE_VERSION)

dist-sdist-test: $(VENV_STAMP)
	+@$(MAKE) --no-print-directory dist-sdist DIST=$(BUILD)/dist-sdist
	SETUP_PYTHON=$(SETUP_PYTHON) SDIST_TARGET_DIR=$(SDIST_TARGET_DIR) \
	  tests/install/sdist_test.sh $(abspath $(BUILD))/dist-sdist/python/capstan_rt-$(CRATE_VERSION).tar.gz $(CRATE_VERSION)

dist-clean:
	rm -rf $(DIST) $(BUILD)/dist-stage $(BUILD)/dist-test
