#!/usr/bin/env bash
# The install test (`make install-test`, part of `make test`). The Makefile has
# installed the release build into WORK/prefix (and, with DESTDIR, into
# WORK/stage for PREFIX=/opt/capstan). This script copies the consumers in this
# folder out of the tree and builds them against the prefix alone: C through
# pkg-config, C statically through `pkg-config --static`, C++ through CMake's
# find_package, and the installed C++ wrapper (capstan.hpp, capstan_json.hpp
# with nlohmann/json from the system) through pkg-config and through CMake's
# capstan::json and capstan::cpp_static. Each runs one real tool call.
# Usage: run.sh WORK VERSION SONAME
set -euo pipefail

work=$1
version=$2
soname=$3
here=$(cd "$(dirname "$0")" && pwd)
prefix=$work/prefix
libdir=$prefix/lib
CC=${CC:-cc}
CXX=${CXX:-c++}
. "$here/checks.sh"

# Only the installed prefix: no system capstan, no library path from outside.
export PKG_CONFIG_LIBDIR=$libdir/pkgconfig
unset PKG_CONFIG_PATH LD_LIBRARY_PATH CAPSTAN_LIB
src=$work/consumers
rm -rf "$src" && mkdir -p "$src"
cp "$here/consumer.c" "$here/consumer.cpp" "$here/consumer_hpp.cpp" "$here/CMakeLists.txt" "$src/"
cd "$src"

# The library file, its links and its SONAME.
[ -f "$libdir/libcapstan.so.$version" ] && [ ! -L "$libdir/libcapstan.so.$version" ] ||
  fail "libcapstan.so.$version is not installed as a file"
[ "$(readlink "$libdir/$soname")" = "libcapstan.so.$version" ] || fail "$soname does not link to libcapstan.so.$version"
[ "$(readlink "$libdir/libcapstan.so")" = "$soname" ] || fail "libcapstan.so does not link to $soname"
grep -q "(SONAME).*\[$soname\]" <<<"$(readelf -d "$libdir/libcapstan.so.$version")" ||
  fail "readelf -d shows no SONAME $soname: $(readelf -d "$libdir/libcapstan.so.$version" | grep SONAME)"
[ -f "$libdir/libcapstan.a" ] && [ -f "$prefix/include/capstan.h" ] || fail "libcapstan.a or capstan.h missing"
[ -f "$prefix/include/capstan.hpp" ] && [ -f "$prefix/include/capstan_json.hpp" ] ||
  fail "capstan.hpp or capstan_json.hpp is not installed beside capstan.h"
pass "installed libcapstan.so.$version with SONAME $soname and its links"

# The installed (stripped) shared library of the default build stays within
# the packaging bound of issue #28 (docs/performance.md, Sizes): a byte count, not a timing.
# MAX_SO_BYTES comes from the Makefile (INSTALL_MAX_SO_BYTES).
max_so_bytes=${MAX_SO_BYTES:?MAX_SO_BYTES unset: run through make install-test}
so_bytes=$(stat -c %s "$libdir/libcapstan.so.$version")
[ "$so_bytes" -le "$max_so_bytes" ] ||
  fail "installed libcapstan.so.$version is $so_bytes B, over the bound of $max_so_bytes B (docs/performance.md, Sizes: built by \`make lib\`, with LTO?)"
pass "installed libcapstan.so.$version is $so_bytes B (bound $max_so_bytes B)"

[ "$(pkg-config --modversion capstan)" = "$version" ] ||
  fail "pkg-config --modversion capstan is $(pkg-config --modversion capstan), Cargo.toml says $version"
pass "capstan.pc has version $version"

# C, shared, through pkg-config alone: the program records the SONAME, and
# runs with no LD_LIBRARY_PATH (the prefix is not one the dynamic linker
# searches: capstan.pc's Libs carry the run path).
# shellcheck disable=SC2046 # pkg-config output is a list of flags
"$CC" -std=c11 -Wall -Wextra -Werror -pedantic consumer.c -o c_shared $(pkg-config --cflags --libs capstan)
grep -q "(NEEDED).*\[$soname\]" <<<"$(readelf -d c_shared)" || fail "c_shared does not need $soname"
env -u LD_LIBRARY_PATH ./c_shared "$version" || fail "c_shared (built through pkg-config alone) does not run without LD_LIBRARY_PATH"
pass "C through pkg-config --cflags --libs capstan, run with no LD_LIBRARY_PATH"

# C, static, through pkg-config --static, as docs/platforms-and-packaging.md writes it: -lcapstan
# becomes the archive, the rest is Libs.private.
static_flags=$(pkg-config --static --cflags --libs capstan | sed 's/-lcapstan/-l:libcapstan.a/')
# shellcheck disable=SC2086
"$CC" -std=c11 -Wall -Wextra -Werror -pedantic consumer.c -o c_static $static_flags
if grep -q "libcapstan" <<<"$(readelf -d c_static)"; then fail "c_static still needs libcapstan.so"; fi
./c_static "$version" || fail "c_static"
pass "C statically through pkg-config --static ($static_flags)"

# C++ on the installed capstan.hpp and capstan_json.hpp through pkg-config.
# shellcheck disable=SC2046
"$CXX" -std=c++17 -Wall -Wextra -Werror -pedantic consumer_hpp.cpp -o cpp_pkgconfig \
  $(pkg-config --cflags --libs capstan)
./cpp_pkgconfig "$version" || fail "cpp_pkgconfig"
pass "C++ (capstan.hpp, capstan_json.hpp) through pkg-config --cflags --libs capstan"

# C++ through CMake: capstan::capstan and capstan::capstan_static, and the
# wrapper through capstan::json and capstan::cpp_static.
cmake -S . -B cmake-build -DCMAKE_PREFIX_PATH="$prefix" -DCAPSTAN_EXPECT_VERSION="$version" \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" >cmake.log 2>&1 || { cat cmake.log; fail "cmake configure"; }
cmake --build cmake-build >>cmake.log 2>&1 || { cat cmake.log; fail "cmake build"; }
grep -q "(NEEDED).*\[$soname\]" <<<"$(readelf -d cmake-build/consumer_shared)" || fail "consumer_shared does not need $soname"
if grep -q "libcapstan" <<<"$(readelf -d cmake-build/consumer_static)"; then fail "consumer_static needs libcapstan.so"; fi
cmake-build/consumer_shared "$version" || fail "CMake consumer_shared"
cmake-build/consumer_static "$version" || fail "CMake consumer_static"
pass "C++ through CMake find_package(capstan $version EXACT): capstan::capstan and capstan::capstan_static"
grep -q "(NEEDED).*\[$soname\]" <<<"$(readelf -d cmake-build/consumer_hpp)" || fail "consumer_hpp does not need $soname"
if grep -q "libcapstan" <<<"$(readelf -d cmake-build/consumer_hpp_static)"; then fail "consumer_hpp_static needs libcapstan.so"; fi
cmake-build/consumer_hpp "$version" || fail "CMake consumer_hpp"
cmake-build/consumer_hpp_static "$version" || fail "CMake consumer_hpp_static"
pass "C++ wrapper through CMake: capstan::json (C++17 carried by the target) and capstan::cpp_static"

# DESTDIR: every file under the stage, paths in the .pc without it, and the
# CMake package found from where it lies (it locates itself).
stage=$work/stage/opt/capstan
[ -f "$stage/lib/libcapstan.so.$version" ] && [ -f "$stage/include/capstan.h" ] && [ -f "$stage/include/capstan.hpp" ] ||
  fail "DESTDIR install is not under $work/stage/opt/capstan"
grep -qx "prefix=/opt/capstan" "$stage/lib/pkgconfig/capstan.pc" || fail "capstan.pc under DESTDIR has the wrong prefix"
cmake -S . -B cmake-stage -DCMAKE_PREFIX_PATH="$stage" -DCAPSTAN_EXPECT_VERSION="$version" \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" >cmake-stage.log 2>&1 ||
  { cat cmake-stage.log; fail "cmake configure against the DESTDIR stage"; }
pass "DESTDIR install: files under DESTDIR, .pc says /opt/capstan, CMake package relocatable"

echo "install-test: $passed passed, 0 failed"
