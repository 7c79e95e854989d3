# --- C# binding (issue 50) ---------------------------------------------------
# bindings/csharp: P/Invoke over the C ABI for Unity, Godot and .NET hosts,
# built here with Mono's mcs (Debian's mono-devel; no .NET SDK or NuGet is
# reachable) and tested twice against $(LIB): under Mono's JIT, then under
# `mono --full-aot`, the closest this machine has to IL2CPP (it refuses to
# call native code back into anything but a static [MonoPInvokeCallback]
# method). AotGuard.exe is the run's negative control: a lambda callback that
# full AOT must refuse. mscorlib is AOT-compiled once into $(CSHARP_AOT).
SETUP_APT_PACKAGES += mono-devel
MCS         ?= mcs
MONO        ?= mono
CSHARP_DIR  := bindings/csharp
CSHARP      := $(BUILD)/csharp
CSHARP_AOT  := $(CSHARP)/aot
CSHARP_SRC  := $(wildcard $(CSHARP_DIR)/src/*.cs)
MONO_LIB    ?= /usr/lib/mono/4.5

.PHONY: csharp-test

$(CSHARP)/Capstan.dll: $(CSHARP_SRC)
	@mkdir -p $(dir $@)
	$(MCS) -nologo -warnaserror -target:library -out:$@ $(CSHARP_SRC)

CSHARP_TESTS := $(CSHARP_DIR)/tests/Tests.cs $(CSHARP_DIR)/tests/ParityTests.cs

$(CSHARP)/CapstanTests.exe: $(CSHARP_TESTS) $(CSHARP)/Capstan.dll
	$(MCS) -nologo -warnaserror -r:$(CSHARP)/Capstan.dll -out:$@ $(CSHARP_TESTS)

$(CSHARP)/AotGuard.exe: $(CSHARP_DIR)/tests/AotGuard.cs
	@mkdir -p $(dir $@)
	$(MCS) -nologo -warnaserror -out:$@ $<

$(CSHARP_AOT)/mscorlib.dll.so:
	@mkdir -p $(CSHARP_AOT)
	cp $(MONO_LIB)/mscorlib.dll $(CSHARP_AOT)/
	MONO_PATH=$(abspath $(CSHARP_AOT)) $(MONO) --aot=full $(CSHARP_AOT)/mscorlib.dll > $(CSHARP_AOT)/mscorlib.aot.log 2>&1 || \
	  { cat $(CSHARP_AOT)/mscorlib.aot.log; exit 1; }

csharp-test: lib $(CSHARP)/CapstanTests.exe $(CSHARP)/AotGuard.exe $(CSHARP_AOT)/mscorlib.dll.so
	@command -v $(MONO) >/dev/null || { echo "csharp-test: needs Mono (apt-get install mono-devel, or make setup)"; exit 1; }
	cd $(CSHARP) && CAPSTAN_FIXTURES=$(abspath tests/fixtures) LD_LIBRARY_PATH=$(abspath $(LIBDIR)) $(MONO) --debug CapstanTests.exe
	cp $(CSHARP)/Capstan.dll $(CSHARP)/CapstanTests.exe $(CSHARP)/AotGuard.exe $(CSHARP_AOT)/
	cd $(CSHARP_AOT) && for a in Capstan.dll CapstanTests.exe AotGuard.exe; do \
	  MONO_PATH=$(abspath $(CSHARP_AOT)) $(MONO) --aot=full $$a > $$a.aot.log 2>&1 || { cat $$a.aot.log; exit 1; }; done
	@echo "csharp-test: the same suite under mono --full-aot (no JIT, IL2CPP's callback rule)"
	cd $(CSHARP_AOT) && CAPSTAN_FIXTURES=$(abspath tests/fixtures) CAPSTAN_TEST_AOT=1 LD_LIBRARY_PATH=$(abspath $(LIBDIR)) MONO_PATH=$(abspath $(CSHARP_AOT)) $(MONO) --full-aot CapstanTests.exe
	@cd $(CSHARP_AOT) && if MONO_PATH=$(abspath $(CSHARP_AOT)) $(MONO) --full-aot AotGuard.exe > guard.log 2>&1; then \
	  cat guard.log; echo "csharp-test: full AOT ran a lambda callback: the AOT run checks nothing"; exit 1; fi; \
	  grep -q "Attempting to JIT compile" guard.log || { cat guard.log; echo "csharp-test: the guard failed for another reason"; exit 1; }; \
	  echo "csharp-test: full AOT refuses a lambda callback, as IL2CPP does (the guard)"
