# --- C# binding (issue 50) ---------------------------------------------------
# bindings/csharp: P/Invoke over the C ABI for Unity, Godot and .NET hosts,
# built here with Mono's mcs (Debian's mono-devel; no .NET SDK or NuGet is
# reachable) and tested twice against $(LIB): under Mono's JIT, then under
# `mono --full-aot`, the closest this machine has to IL2CPP (it refuses to
# call native code back into anything but a static [MonoPInvokeCallback]
# method). AotGuard.exe is the run's negative control: a lambda callback that
# full AOT must refuse. mscorlib is AOT-compiled once into $(CSHARP_AOT).
# zip packs the .nupkg (a zip file; no NuGet client can be had here).
# libnewtonsoft-json-cil-dev: Debian's Json.NET, for the optional
# Capstan.Newtonsoft.dll adapter and its test (the binding itself needs none).
SETUP_APT_PACKAGES += mono-devel zip libnewtonsoft-json-cil-dev
NEWTONSOFT_DLL ?= /usr/lib/cli/Newtonsoft.Json-5.0/Newtonsoft.Json.dll
MCS         ?= mcs
MONO        ?= mono
CSHARP_DIR  := bindings/csharp
CSHARP      := $(BUILD)/csharp
CSHARP_AOT  := $(CSHARP)/aot
CSHARP_SRC  := $(wildcard $(CSHARP_DIR)/src/*.cs)
MONO_LIB    ?= /usr/lib/mono/4.5

.PHONY: csharp-test csharp-nuget csharp-upm csharp-package-test csharp-bench

# The version the packages carry: the crate's.
CSHARP_VERSION ?= $(CRATE_VERSION)
# The natives the packages carry, RID:PATH each: make lib's library for
# linux-x64, and every library a dist build left in $(CSHARP_DIST)/<rid>/
# (a static library only for iOS, which links plugins statically). Set
# CSHARP_NATIVES to package another set.
CSHARP_DIST ?= dist/native
CSHARP_DIST_FILES := $(wildcard $(CSHARP_DIST)/*/*.so $(CSHARP_DIST)/*/*.dylib $(CSHARP_DIST)/*/*.dll $(CSHARP_DIST)/ios-*/*.a)
CSHARP_DIST_NATIVES := $(foreach f,$(CSHARP_DIST_FILES),$(notdir $(patsubst %/,%,$(dir $(f)))):$(f))
CSHARP_NATIVES ?= linux-x64:$(LIB) $(filter-out linux-x64:%,$(CSHARP_DIST_NATIVES))
CSHARP_NUPKG  = $(CSHARP)/Capstan.$(CSHARP_VERSION).nupkg
CSHARP_UPM    = $(CSHARP)/io.github.capstan-rt.capstan-$(CSHARP_VERSION).tgz
CSHARP_LAYOUT := python3 $(CSHARP_DIR)/packaging/layout.py

$(CSHARP)/Capstan.dll: $(CSHARP_SRC)
	@mkdir -p $(dir $@)
	$(MCS) -nologo -warnaserror -target:library -out:$@ $(CSHARP_SRC)

CSHARP_TESTS := $(CSHARP_DIR)/tests/Tests.cs $(CSHARP_DIR)/tests/ParityTests.cs $(CSHARP_DIR)/tests/TestOs.cs \
  $(CSHARP_DIR)/tests/McpHostTests.cs $(CSHARP_DIR)/tests/JournalTests.cs $(CSHARP_DIR)/tests/HostJournalTests.cs \
  $(CSHARP_DIR)/tests/QuickTests.cs \
  $(CSHARP_DIR)/tests/BehaviourTests.cs

$(CSHARP)/CapstanTests.exe: $(CSHARP_TESTS) $(CSHARP)/Capstan.dll
	$(MCS) -nologo -warnaserror -r:$(CSHARP)/Capstan.dll -out:$@ $(CSHARP_TESTS)

$(CSHARP)/GameLoop.exe: $(CSHARP_DIR)/examples/GameLoop.cs $(CSHARP)/Capstan.dll
	$(MCS) -nologo -warnaserror -r:$(CSHARP)/Capstan.dll -out:$@ $<

$(CSHARP)/Capstan.Newtonsoft.dll: $(CSHARP_DIR)/adapters/NewtonsoftJsonAdapter.cs $(CSHARP)/Capstan.dll
	$(MCS) -nologo -warnaserror -target:library -r:$(CSHARP)/Capstan.dll -r:$(NEWTONSOFT_DLL) -out:$@ $<

$(CSHARP)/NewtonsoftTests.exe: $(CSHARP_DIR)/tests/NewtonsoftTests.cs $(CSHARP)/Capstan.Newtonsoft.dll
	$(MCS) -nologo -warnaserror -r:$(CSHARP)/Capstan.dll -r:$(CSHARP)/Capstan.Newtonsoft.dll -r:$(NEWTONSOFT_DLL) -out:$@ $<

$(CSHARP)/FirstTool.exe: $(CSHARP_DIR)/examples/FirstTool.cs $(CSHARP)/Capstan.dll
	$(MCS) -nologo -warnaserror -r:$(CSHARP)/Capstan.dll -out:$@ $<

$(CSHARP)/HostJournal.exe: $(CSHARP_DIR)/examples/HostJournal.cs $(CSHARP)/Capstan.dll
	$(MCS) -nologo -warnaserror -r:$(CSHARP)/Capstan.dll -out:$@ $<

$(CSHARP)/AotGuard.exe: $(CSHARP_DIR)/tests/AotGuard.cs
	@mkdir -p $(dir $@)
	$(MCS) -nologo -warnaserror -out:$@ $<

# The assembly the Unity package enables for iOS: DllImport("__Internal").
$(CSHARP)/ios/Capstan.dll: $(CSHARP_SRC)
	@mkdir -p $(dir $@)
	$(MCS) -nologo -warnaserror -target:library -define:CAPSTAN_STATIC -out:$@ $(CSHARP_SRC)

$(CSHARP)/PackageSmoke.exe: $(CSHARP_DIR)/tests/PackageSmoke.cs $(CSHARP)/Capstan.dll
	$(MCS) -nologo -warnaserror -r:$(CSHARP)/Capstan.dll -out:$@ $<

# NuGet: Capstan.nuspec, lib/netstandard2.1/Capstan.dll, runtimes/<rid>/native/.
csharp-nuget: lib $(CSHARP)/Capstan.dll
	$(CSHARP_LAYOUT) nuget --out $(CSHARP)/nuget --version "$(CSHARP_VERSION)" --dll $(CSHARP)/Capstan.dll \
	  --nuspec $(CSHARP_DIR)/packaging/Capstan.nuspec.in $(addprefix --native ,$(CSHARP_NATIVES))
	rm -f $(CSHARP_NUPKG)
	cd $(CSHARP)/nuget && zip -q -X -r $(abspath $(CSHARP_NUPKG)) .
	@echo "csharp-nuget: $(CSHARP_NUPKG)"

# Unity (UPM): package.json, Runtime/ (the two assemblies, link.xml,
# Plugins/<platform>/), a .meta beside each; a tarball with package/ at its root.
csharp-upm: lib $(CSHARP)/Capstan.dll $(CSHARP)/ios/Capstan.dll
	$(CSHARP_LAYOUT) upm --out $(CSHARP)/upm/package --version "$(CSHARP_VERSION)" --dll $(CSHARP)/Capstan.dll \
	  --ios-dll $(CSHARP)/ios/Capstan.dll --package-json $(CSHARP_DIR)/packaging/package.json.in \
	  --link-xml $(CSHARP_DIR)/packaging/link.xml --readme $(CSHARP_DIR)/README.md $(addprefix --native ,$(CSHARP_NATIVES))
	rm -f $(CSHARP_UPM)
	tar -czf $(CSHARP_UPM) -C $(CSHARP)/upm package
	@echo "csharp-upm: $(CSHARP_UPM)"

csharp-package-test: csharp-nuget csharp-upm $(CSHARP)/PackageSmoke.exe
	python3 $(CSHARP_DIR)/packaging/check_packages.py --nupkg $(CSHARP_NUPKG) --upm $(CSHARP_UPM) \
	  --version "$(CSHARP_VERSION)" --dll $(CSHARP)/Capstan.dll --ios-dll $(CSHARP)/ios/Capstan.dll \
	  --smoke $(CSHARP)/PackageSmoke.exe --mono $(MONO) $(addprefix --native ,$(CSHARP_NATIVES))

$(CSHARP_AOT)/mscorlib.dll.so:
	@mkdir -p $(CSHARP_AOT)
	cp $(MONO_LIB)/mscorlib.dll $(CSHARP_AOT)/
	MONO_PATH=$(abspath $(CSHARP_AOT)) $(MONO) --aot=full $(CSHARP_AOT)/mscorlib.dll > $(CSHARP_AOT)/mscorlib.aot.log 2>&1 || \
	  { cat $(CSHARP_AOT)/mscorlib.aot.log; exit 1; }

csharp-test: lib csharp-package-test $(CSHARP)/CapstanTests.exe $(CSHARP)/GameLoop.exe $(CSHARP)/FirstTool.exe $(CSHARP)/HostJournal.exe $(CSHARP)/NewtonsoftTests.exe $(CSHARP)/AotGuard.exe $(CSHARP_AOT)/mscorlib.dll.so
	@command -v $(MONO) >/dev/null || { echo "csharp-test: needs Mono (apt-get install mono-devel, or make setup)"; exit 1; }
	cd $(CSHARP) && CAPSTAN_FIXTURES=$(abspath tests/fixtures) LD_LIBRARY_PATH=$(abspath $(LIBDIR)) $(MONO) --debug CapstanTests.exe
	cd $(CSHARP) && LD_LIBRARY_PATH=$(abspath $(LIBDIR)) $(MONO) --debug NewtonsoftTests.exe
	python3 $(CSHARP_DIR)/tests/check_readme.py
	cp $(CSHARP)/Capstan.dll $(CSHARP)/CapstanTests.exe $(CSHARP)/GameLoop.exe $(CSHARP)/FirstTool.exe $(CSHARP)/HostJournal.exe $(CSHARP)/AotGuard.exe $(CSHARP_AOT)/
	cd $(CSHARP_AOT) && for a in Capstan.dll CapstanTests.exe GameLoop.exe FirstTool.exe HostJournal.exe AotGuard.exe; do \
	  MONO_PATH=$(abspath $(CSHARP_AOT)) $(MONO) --aot=full $$a > $$a.aot.log 2>&1 || { cat $$a.aot.log; exit 1; }; done
	@echo "csharp-test: the same suite under mono --full-aot (no JIT, IL2CPP's callback rule)"
	cd $(CSHARP_AOT) && CAPSTAN_FIXTURES=$(abspath tests/fixtures) CAPSTAN_TEST_AOT=1 LD_LIBRARY_PATH=$(abspath $(LIBDIR)) MONO_PATH=$(abspath $(CSHARP_AOT)) $(MONO) --full-aot CapstanTests.exe
	@echo "csharp-test: the examples, under full AOT"
	cd $(CSHARP_AOT) && for e in FirstTool.exe GameLoop.exe HostJournal.exe; do \
	  LD_LIBRARY_PATH=$(abspath $(LIBDIR)) MONO_PATH=$(abspath $(CSHARP_AOT)) $(MONO) --full-aot $$e || exit 1; done
	@cd $(CSHARP_AOT) && if MONO_PATH=$(abspath $(CSHARP_AOT)) $(MONO) --full-aot AotGuard.exe > guard.log 2>&1; then \
	  cat guard.log; echo "csharp-test: full AOT ran a lambda callback: the AOT run checks nothing"; exit 1; fi; \
	  grep -q "Attempting to JIT compile" guard.log || { cat guard.log; echo "csharp-test: the guard failed for another reason"; exit 1; }; \
	  echo "csharp-test: full AOT refuses a lambda callback, as IL2CPP does (the guard)"

$(CSHARP)/Bench.exe: $(CSHARP_DIR)/bench/Bench.cs $(CSHARP)/Capstan.dll
	$(MCS) -nologo -warnaserror -optimize+ -r:$(CSHARP)/Capstan.dll -out:$@ $<

# Outside make test: prints figures, asserts nothing about time.
csharp-bench: lib $(CSHARP)/Bench.exe
	cd $(CSHARP) && LD_LIBRARY_PATH=$(abspath $(LIBDIR)) $(MONO) --optimize=all Bench.exe
