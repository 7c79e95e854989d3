# --- Java binding (issue #35) -------------------------------------------------
# bindings/java is a Maven module using java.lang.foreign: it needs a JDK >= 22
# (mk/find-jdk.sh: JAVA_HOME if it is one, else the newest under /usr/lib/jvm)
# and Maven (Debian's `maven`, in SETUP_APT_PACKAGES). `make setup` fetches the
# module's dependencies and Maven plugins once ($(JAVA_STAMP)): java-test then
# runs Maven offline (-o). The tests load $(LIB) through CAPSTAN_LIB; nothing is
# installed.
JAVA_JDK   = $(shell mk/find-jdk.sh)
MVN       ?= mvn
MVN_FLAGS ?= -B -q
JAVA_DIR  := bindings/java

.PHONY: java-test java-bench java-deps

# Dependencies, plugins and surefire's JUnit provider with what it runs on
# (resolved only when tests really run: go-offline misses them, and so does
# a run selecting no test, as a fresh CI machine showed). So setup runs one
# test class for real, before the library exists: the tests that need it
# error, which is ignored (output in $(BUILD)/java/setup-surefire.log);
# what matters is that every artifact the provider needs is then in ~/.m2.
# Without a JDK >= 22 (which setup cannot install on Debian bookworm) setup
# says so and goes on: java-test then fails with find-jdk's message.
$(JAVA_STAMP): $(JAVA_DIR)/pom.xml
	@jdk="$(JAVA_JDK)"; if [ -z "$$jdk" ]; then echo "setup: skipped $(JAVA_DIR)'s Maven dependencies (no JDK >= 22)"; exit 0; fi; \
	  echo "setup: Maven dependencies of $(JAVA_DIR) (JDK $$jdk)"; \
	  mkdir -p $(BUILD)/java && log=$(abspath $(BUILD))/java/setup-surefire.log; \
	  cd $(JAVA_DIR) && JAVA_HOME="$$jdk" $(MVN) $(MVN_FLAGS) dependency:go-offline && \
	  { JAVA_HOME="$$jdk" $(MVN) $(MVN_FLAGS) test -Dtest=SchemasTest -Dsurefire.failIfNoSpecifiedTests=false \
	      -Dmaven.test.failure.ignore=true > "$$log" 2>&1 || { cat "$$log"; exit 1; }; }
	@if [ -n "$(JAVA_JDK)" ]; then mkdir -p $(dir $@) && touch $@; fi

java-deps: $(JAVA_STAMP)

java-test: lib $(JAVA_STAMP)
	@jdk="$(JAVA_JDK)"; [ -n "$$jdk" ] || exit 1; \
	  cd $(JAVA_DIR) && JAVA_HOME="$$jdk" CAPSTAN_LIB=$(abspath $(LIB)) $(MVN) $(MVN_FLAGS) -o test
	@echo "java-test: bindings/java's JUnit suite passed against $(LIB)"
	@old=$$(ls -d /usr/lib/jvm/java-17-openjdk-* 2>/dev/null | head -1); \
	  if [ -z "$$old" ]; then echo "java-test: no JDK 17 here: the older-JDK message is not checked"; exit 0; fi; \
	  log=$(abspath $(BUILD))/java/jdk17.log; mkdir -p $(dir $(abspath $(BUILD))/java/x); \
	  if (cd $(JAVA_DIR) && JAVA_HOME="$$old" $(MVN) $(MVN_FLAGS) -o validate) >"$$log" 2>&1; then \
	    echo "java-test: a build with $$old was not refused"; exit 1; fi; \
	  grep -q "needs a JDK 22 or newer" "$$log" || { cat "$$log"; echo "java-test: JDK 17 failed without saying a JDK 22 is needed"; exit 1; }; \
	  echo "java-test: a build with $$old is refused, saying a JDK 22 or newer is needed"

# Benchmark (not a test; not in make test): bindings/java/bench next to
# langchain4j's tool execution, one call and batches of 100. Installs the
# binding into the local Maven repository first (the bench module depends on it).
java-bench: lib
	@jdk="$(JAVA_JDK)"; [ -n "$$jdk" ] || exit 1; \
	  cd $(JAVA_DIR) && JAVA_HOME="$$jdk" $(MVN) $(MVN_FLAGS) install -DskipTests && \
	  cd bench && JAVA_HOME="$$jdk" $(MVN) $(MVN_FLAGS) compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt && \
	  "$$jdk/bin/java" --enable-native-access=ALL-UNNAMED -Dcapstan.lib=$(abspath $(LIB)) \
	    -cp "target/classes:$$(cat target/cp.txt)" dev.capstan.bench.ToolBench
