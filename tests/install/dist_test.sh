#!/usr/bin/env bash
# dist-test (issue 51): the x86-64 Linux artifacts of `make dist` installed as
# users install them, from their files alone, in an empty directory outside
# the tree, with no CAPSTAN_LIB, LD_LIBRARY_PATH or repository on any path,
# each making one real tool call (add(2, 3) = 5):
#   C SDK archive   unpacked; a program built through its pkg-config file
#                   (shared and static) and through its CMake package
#   Python wheel    `pip install` into a fresh venv; auditwheel agrees with its tag
#   npm             `npm install --offline` of the two .tgz files (and of koffi,
#                   the binding's one dependency, packed from the node_modules
#                   `make setup` installed); without the platform package the
#                   error names it
#   Java jar        installed with its pom into a fresh local Maven repository
#                   (maven-install-plugin's install-file), on which a consumer
#                   project builds offline (-o) and resolves it with Jackson;
#                   `java` on that class path: the library is extracted to the
#                   user's cache once, also by three JVMs starting at the same time
#
#   tests/install/dist_test.sh DIST VERSION
# Environment: JDK (a JDK >= 22), MAVEN_REPO (the local Maven repository
# `make setup` filled: plugins and Jackson, copied for the consumer), NODE_MODULES (bindings/node's), SETUP_PYTHON (makes the
# fresh venv), VENV_PYTHON (build/venv's, for auditwheel).
set -euo pipefail
dist=$1
version=$2
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/capstan-dist-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0
pass() { echo "ok: $*"; passed=$((passed + 1)); }
fail() { echo "FAILED: $*" >&2; exit 1; }
only() { # the one file matching a glob
  [ $# = 1 ] && [ -f "$1" ] || fail "expected one file, found: $*"
  echo "$1"
}
case $work in "$repo"/*) fail "the work directory $work is inside the repository" ;; esac

maven_repo=${MAVEN_REPO:-$HOME/.m2/repository}
unset CAPSTAN_LIB LD_LIBRARY_PATH PYTHONPATH NODE_PATH NODE_OPTIONS CLASSPATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH \
  JAVA_TOOL_OPTIONS
export HOME=$work/home XDG_CACHE_HOME=$work/cache
mkdir -p "$HOME"
cp "$here/consumer.c" "$work/consumer.c"
cd "$work"

# Where the dynamic linker finds libcapstan for a program (ldd): the test's
# proof that it is the SDK's copy.
check_resolves_to() { # WHAT PROGRAM EXPECTED-DIRECTORY
  local lib
  lib=$(ldd "$2" | sed -n 's/.*libcapstan[^ ]* => \([^ ]*\).*/\1/p')
  case $lib in "$3"/*) ;; *) fail "$1 resolves libcapstan to '$lib', not the copy in $3" ;; esac
}

# --- C SDK archive ---------------------------------------------------------------
sdk_archive=$(only "$dist"/c/capstan-"$version"-linux-x86_64.tar.gz)
mkdir sdk && tar -xzf "$sdk_archive" -C sdk
sdk=$work/sdk/capstan-$version-linux-x86_64
for f in include/capstan.h include/capstan.hpp lib/libcapstan.a lib/pkgconfig/capstan.pc \
  lib/cmake/capstan/capstanConfig.cmake share/licenses/capstan/LICENSE; do
  [ -f "$sdk/$f" ] || fail "the SDK archive has no $f"
done
export PKG_CONFIG_PATH=$sdk/lib/pkgconfig
[ "$(pkg-config --modversion capstan)" = "$version" ] || fail "pkg-config --modversion capstan: $(pkg-config --modversion capstan)"
# shellcheck disable=SC2046
${CC:-cc} -std=c11 -Wall -Wextra -Werror consumer.c -o c_shared $(pkg-config --cflags --libs capstan)
./c_shared "$version" >c_shared.out || { cat c_shared.out; fail "the pkg-config (shared) program"; }
check_resolves_to "the pkg-config program" ./c_shared "$sdk/lib"
pass "C: built through the SDK's capstan.pc, runs a tool call with the SDK's library ($(cat c_shared.out | head -c 60)...)"
# shellcheck disable=SC2046
${CC:-cc} -std=c11 -Wall -Wextra -Werror consumer.c -o c_static -Wl,-Bstatic $(pkg-config --cflags --libs-only-L capstan) \
  -lcapstan -Wl,-Bdynamic $(pkg-config --static --libs-only-l capstan | sed 's/-lcapstan//')
./c_static "$version" >/dev/null || fail "the pkg-config --static program"
! ldd ./c_static | grep -q libcapstan || fail "the static program needs libcapstan.so"
pass "C: linked statically through pkg-config --static, runs a tool call"
mkdir cmake-src
cp consumer.c cmake-src/
cat >cmake-src/CMakeLists.txt <<EOF
cmake_minimum_required(VERSION 3.16)
project(dist_consumer C)
find_package(capstan $version EXACT CONFIG REQUIRED)
add_executable(consumer consumer.c)
target_link_libraries(consumer PRIVATE capstan::capstan)
EOF
cmake -S cmake-src -B cmake-build -DCMAKE_PREFIX_PATH="$sdk" -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >cmake.log 2>&1 ||
  { cat cmake.log; fail "cmake configure against the SDK"; }
cmake --build cmake-build >>cmake.log 2>&1 || { cat cmake.log; fail "cmake build against the SDK"; }
cmake-build/consumer "$version" >/dev/null || fail "the CMake program"
check_resolves_to "the CMake program" cmake-build/consumer "$sdk/lib"
pass "C: built through the SDK's CMake package (find_package EXACT), runs a tool call"

# --- Python wheel -------------------------------------------------------------------
wheel=$(only "$dist"/python/capstan_rt-"$version"-py3-none-manylinux_*_x86_64.whl)
tag=$(basename "$wheel" .whl)
tag=${tag#capstan_rt-"$version"-py3-none-}
"$VENV_PYTHON" -m auditwheel show "$wheel" >auditwheel.out 2>&1 || { cat auditwheel.out; fail "auditwheel show"; }
tr -s ' \n' ' ' <auditwheel.out | grep -q "consistent with the following platform tag: \"$tag\"" ||
  { cat auditwheel.out; fail "auditwheel does not find the wheel consistent with its tag $tag"; }
pass "Python: auditwheel finds the wheel consistent with its tag $tag"
"$SETUP_PYTHON" -m venv venv
venv/bin/python -m pip install --quiet --no-index --disable-pip-version-check "$wheel"
venv/bin/python - "$version" "$work/venv" >python.out <<'PY'
import sys
from pathlib import Path

import capstan
from capstan import ToolCall, ToolRegistry, tool
from capstan._lib import lib

version, venv = sys.argv[1], Path(sys.argv[2]).resolve()
loaded = Path(lib().path).resolve()
assert venv in loaded.parents, f"loaded {loaded}, not the copy inside the venv {venv}"
assert capstan.version() == version, capstan.version()


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


with ToolRegistry([add]) as registry:
    result = registry.execute(ToolCall("add", {"a": 2, "b": 3}))
assert result.data == 5, result
print(f"add(2, 3) = {result.data} with {loaded}")
PY
pass "Python: pip install of the wheel into a fresh venv runs a tool call ($(cat python.out))"

# --- npm ------------------------------------------------------------------------------
main_tgz=$(only "$dist"/npm/capstan-"$version".tgz)
platform_tgz=$(only "$dist"/npm/capstan-rt-linux-x64-"$version".tgz)
# koffi, the binding's one dependency, and its package for this platform,
# packed from what `make setup` installed (npm ci of bindings/node's lock
# file): offline, npm takes them from these files as it would from the
# registry. Its other platforms' packages, like capstan's, are optional
# dependencies that npm skips when it cannot fetch them.
mkdir npm-files
for d in "$NODE_MODULES/koffi" "$NODE_MODULES/@koromix/koffi-linux-x64"; do
  (cd "$d" && npm pack --update-notifier=false --loglevel=error --pack-destination "$work/npm-files" >/dev/null) || fail "npm pack $d"
done
npm_install() { # DIR TGZ...
  local dir=$1
  shift
  mkdir "$dir"
  (cd "$dir" && echo '{"name":"consumer","version":"1.0.0","private":true}' >package.json &&
    npm install --offline --no-audit --no-fund --update-notifier=false --loglevel=error --cache "$work/npm-cache" "$work"/npm-files/*.tgz "$@") \
    >"$dir.log" 2>&1 ||
    { cat "$dir.log"; fail "npm install --offline $* in $dir"; }
}
node_call() { # DIR: requires capstan there and makes one tool call
  (cd "$1" && node - <<'JS'
const capstan = require('capstan');
const registry = new capstan.Registry();
registry.tool(
  { name: 'add', description: 'Add two integers.',
    parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] } },
  ({ a, b }) => a + b,
);
registry.execute({ id: '1', name: 'add', arguments: { a: 2, b: 3 } }).then(([result]) => {
  registry.close();
  if (String(result.content) !== '5' || result.outcome !== 'ok') throw new Error(`add(2, 3): ${JSON.stringify(result)}`);
  console.log(`add(2, 3) = ${result.content} with ${capstan.libraryPath}`);
});
JS
  )
}
npm_install node "$main_tgz" "$platform_tgz"
node_call node >node.out || fail "the npm-installed package's tool call"
grep -q " with $work/node/node_modules/@capstan-rt/linux-x64/libcapstan.so$" node.out ||
  fail "the npm package did not load @capstan-rt/linux-x64's library: $(cat node.out)"
pass "npm: the two packages installed offline run a tool call ($(cat node.out))"
# CAPSTAN_LIB still wins over the platform package.
mkdir other && cp "$sdk/lib/libcapstan.so.$version" other/libcapstan.so
CAPSTAN_LIB=$work/other/libcapstan.so node_call node >node-env.out || fail "the npm package with CAPSTAN_LIB set"
grep -q " with $work/other/libcapstan.so$" node-env.out || fail "CAPSTAN_LIB did not override the platform package: $(cat node-env.out)"
pass "npm: CAPSTAN_LIB overrides the platform package"
# The main package alone (optional dependencies omitted): a clear error.
npm_install node-alone "$main_tgz"
if ls /usr/lib/libcapstan.so /usr/local/lib/libcapstan.so >/dev/null 2>&1; then
  echo "skipped: the missing-package error (this machine has a libcapstan.so installed in /usr/lib or /usr/local/lib)"
else
  node_call node-alone >node-alone.out 2>&1 && fail "capstan loaded with no platform package and no library: $(cat node-alone.out)"
  grep -q "the package for this platform (linux-x64-glibc), @capstan-rt/linux-x64, is not installed" node-alone.out ||
    { cat node-alone.out; fail "the error without a platform package does not name the platform and the package"; }
  pass "npm: without @capstan-rt/linux-x64 the error names the platform and the package"
fi

# --- Java -------------------------------------------------------------------------------
jar=$(only "$dist"/java/capstan-"$version".jar)
pom=$(only "$dist"/java/capstan-"$version".pom)
# A local repository of its own: what `make setup` put in ~/.m2 (Maven's
# plugins, Jackson) without any capstan, plus the dist jar and its pom
# installed by the maven-install-plugin; the consumer builds offline on it.
cp -a "$maven_repo" m2
rm -rf m2/io/github/capstan-rt m2/dev/capstan
mvn_offline() { JAVA_HOME=$JDK mvn -B -q -o -Dmaven.repo.local="$work/m2" "$@"; }
# install-file may fetch the install plugin itself (a fresh machine's ~/.m2
# need not hold it); the consumer's build below is offline.
JAVA_HOME=$JDK mvn -B -q -Dmaven.repo.local="$work/m2" \
  org.apache.maven.plugins:maven-install-plugin:2.4:install-file -Dfile="$jar" -DpomFile="$pom" \
  >mvn-install.log 2>&1 || { cat mvn-install.log; fail "mvn install:install-file of the dist jar"; }
cmp -s "$jar" "m2/io/github/capstan-rt/capstan/$version/capstan-$version.jar" || fail "the local repository's jar is not the dist jar"
mkdir -p consumer/src/main/java
cat >consumer/pom.xml <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>consumer</artifactId>
  <version>1.0</version>
  <properties>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
    <maven.compiler.release>22</maven.compiler.release>
  </properties>
  <dependencies>
    <dependency>
      <groupId>io.github.capstan-rt</groupId>
      <artifactId>capstan</artifactId>
      <version>$version</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-dependency-plugin</artifactId><version>3.8.1</version></plugin>
    </plugins>
  </build>
</project>
EOF
cat >consumer/src/main/java/Main.java <<'EOF'
import dev.capstan.Registry;
import dev.capstan.ToolResult;
import java.util.List;
import java.util.Map;

public class Main {
    public static void main(String[] args) {
        String schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\"}},"
                + "\"required\":[\"a\",\"b\"]}";
        try (Registry r = new Registry().tool("add", "Add two integers.", schema,
                call -> call.arguments().get("a").asInt() + call.arguments().get("b").asInt())) {
            List<ToolResult> out = r.execute("[{\"id\":\"1\",\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3}}]");
            if (!out.get(0).content().equals("5")) throw new AssertionError(out);
            System.out.println("add(2, 3) = 5 with " + Registry.librarySource());
        }
    }
}
EOF
(cd consumer && mvn_offline compile dependency:build-classpath -Dmdep.outputFile=classpath.txt) >mvn-consumer.log 2>&1 ||
  { cat mvn-consumer.log; fail "the Maven consumer project's offline build against the local repository"; }
classpath=$work/consumer/target/classes:$(cat consumer/classpath.txt)
case $classpath in *"$work/m2/io/github/capstan-rt/capstan/$version/capstan-$version.jar"*) ;;
  *) fail "the consumer's class path does not take the installed dist jar: $classpath" ;; esac
pass "Java: the dist jar and its pom installed into a local Maven repository (install-file); a consumer project builds on it offline (-o), Jackson resolved from the pom"
java_call() { "$JDK/bin/java" --enable-native-access=ALL-UNNAMED -cp "$classpath" Main; }
# Three JVMs extracting into an empty cache at the same time, then a fourth.
for i in 1 2 3; do java_call >java-$i.out 2>&1 & done
for i in 1 2 3; do wait -n || { cat java-*.out; fail "a JVM racing to extract the library failed"; }; done
extracted=$(find "$XDG_CACHE_HOME/capstan" -name libcapstan.so)
[ "$(echo "$extracted" | wc -l)" = 1 ] && [ -n "$extracted" ] || fail "expected one extracted library, found: $extracted"
for i in 1 2 3; do grep -q "^add(2, 3) = 5 with $extracted$" java-$i.out || fail "JVM $i: $(cat java-$i.out)"; done
cmp -s "$extracted" "$dist/native/linux-x64/libcapstan.so" || fail "the extracted $extracted differs from the jar's library"
[ -z "$(find "$XDG_CACHE_HOME/capstan" -name '*.part')" ] || fail "a partial extraction was left behind"
[ "$(stat -c %a "$XDG_CACHE_HOME/capstan")" = 700 ] || fail "the cache directory is not private: $(stat -c %a "$XDG_CACHE_HOME/capstan")"
before=$(stat -c %Y.%i "$extracted")
java_call >java-4.out 2>&1 || { cat java-4.out; fail "the JVM with the library already extracted"; }
[ "$(stat -c %Y.%i "$extracted")" = "$before" ] || fail "a later JVM extracted the library again"
# A cache that cannot be written: an error that says what to set.
if "$JDK/bin/java" --enable-native-access=ALL-UNNAMED -Dcapstan.cache=/dev/null/capstan -cp "$classpath" Main \
  >java-nocache.out 2>&1; then fail "the jar loaded with an unwritable cache: $(cat java-nocache.out)"; fi
grep -q "cannot create the cache directory /dev/null/capstan.*set -Dcapstan.cache= to a writable directory, or CAPSTAN_LIB" \
  java-nocache.out || { cat java-nocache.out; fail "the unwritable cache's error does not say what to do"; }
CAPSTAN_LIB=$work/other/libcapstan.so java_call >java-env.out 2>&1 || { cat java-env.out; fail "the jar with CAPSTAN_LIB set"; }
grep -q "^add(2, 3) = 5 with $work/other/libcapstan.so$" java-env.out || fail "CAPSTAN_LIB did not override the jar's library: $(cat java-env.out)"
pass "Java: the jar's library is extracted once to \$XDG_CACHE_HOME/capstan (0700), also by 3 JVMs at once, and runs a tool call; CAPSTAN_LIB overrides it; an unwritable cache is a clear error"

echo "dist-test: $passed passed, 0 failed"
