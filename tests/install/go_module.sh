#!/usr/bin/env bash
# The Go module as `go get` fetches it (`make go-module-test`, issue #34).
# The Makefile has installed the release build into WORK/prefix. This script
#   1. packs bindings/go (python3 zipfile) as the module zip a proxy serves (the module cache
#      then holds bindings/go alone: no include/, no target/ next to it),
#      under a file:// GOPROXY, as version vVERSION-test.HASH;
#   2. makes a user's module in WORK/consumer (outside the tree) that
#      `go get`s it, with an empty module cache of its own (dependencies
#      come from the machine's module cache, else the usual proxy);
#   3. builds it with no build tag, only WORK/prefix on the pkg-config path,
#      checks the program needs the installed library and nothing in the
#      checkout, and runs it (one agent turn, tests/install/go_consumer.go).
# Usage: go_module.sh WORK BINDINGS_GO_DIR VERSION   (GO: the go command)
set -euo pipefail

work=$1
src=$2
lib_version=$3
version=$3
GO=${GO:-go}
here=$(cd "$(dirname "$0")" && pwd)
module=github.com/capstan-rt/capstan/bindings/go
prefix=$work/prefix
fail() {
  echo "FAIL: $1" >&2
  exit 1
}

# 1. The proxy: list, .info, .mod and the zip (files at <module>@<version>/).
# The version names the sources' hash: the go command keeps an index of each
# module version's files in its build cache, so a version must never change.
machine_cache=$("$GO" env GOMODCACHE)
machine_proxy=$("$GO" env GOPROXY)
proxy=$work/proxy
hash=$(cd "$src" && find . -type f ! -name '*.test' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12)
version=$version-test.$hash
vdir=$proxy/$module/@v
mkdir -p "$vdir" "$work/zip/$module@v$version"
(cd "$src" && find . -type f ! -name '*.test' -print0 |
  xargs -0 cp --parents -t "$work/zip/$module@v$version")
(cd "$work/zip" && "${PYTHON3:-python3}" -c '
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for root, _, files in os.walk(sys.argv[2]):
        for f in sorted(files):
            z.write(os.path.join(root, f))  # files only: a module zip has no directory entries
' "$vdir/v$version.zip" "$module@v$version")
cp "$src/go.mod" "$vdir/v$version.mod"
printf '{"Version":"v%s","Time":"2026-01-01T00:00:00Z"}\n' "$version" >"$vdir/v$version.info"
echo "v$version" >"$vdir/list"

# 2. The user's module.
consumer=$work/consumer
mkdir -p "$consumer"
cp "$here/go_consumer.go" "$consumer/main.go"
cd "$consumer"
export GOMODCACHE=$work/modcache
export GOPROXY="file://$proxy,file://$machine_cache/cache/download,$machine_proxy"
export GONOSUMDB=github.com/capstan-rt GOFLAGS="-modcacherw -mod=mod" CGO_ENABLED=1
export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig
unset PKG_CONFIG_PATH LD_LIBRARY_PATH GOWORK
"$GO" mod init example.com/consumer >/dev/null 2>&1
# The dependencies' checksums, as the binding has them: no checksum database
# lookup for modules the machine already holds (the binding's own module is
# GONOSUMDB: it exists only in this proxy).
cp "$src/go.sum" go.sum
"$GO" get "$module@v$version"
dir=$("$GO" list -m -f '{{.Dir}}' "$module")
case $dir in "$GOMODCACHE"/*) ;; *) fail "the module was not taken from the proxy: $dir" ;; esac
[ ! -e "$dir/../../include" ] || fail "the fetched module has an include/ next to it"
echo "ok: go get $module@v$version (from $dir)"

# 3. Build with no tag, run against the prefix alone.
"$GO" build -o consumer .
# capstan.pc gives a prefix the dynamic linker does not search a run path
# (issue 49): the program's RUNPATH may name the prefix (which lies in the
# build tree here), never anything else of the checkout.
runpath=$(readelf -d consumer | grep -i 'r.*path' | sed -e 's/.*\[//' -e 's/\]//' | tr ':' '\n' | grep -vx "$prefix/lib" || true)
grep -q "$(cd "$src/../.." && pwd)" <<<"$runpath" &&
  fail "the program's RUNPATH points into the checkout: $(readelf -d consumer | grep -i path)"
grep -q '(NEEDED).*libcapstan' <<<"$(readelf -d consumer)" || fail "the program does not need libcapstan"
lib=$(LD_LIBRARY_PATH=$prefix/lib ldd ./consumer | awk '/libcapstan/ {print $3}')
[ "$lib" = "$prefix/lib/$(readlink "$prefix/lib/libcapstan.so")" ] ||
  fail "the program loads $lib, not the installed library"
echo "ok: built with no build tag through pkg-config, loads $lib"
# Found by its run path alone, as a pkg-config build of capstan.pc gives it.
env -u LD_LIBRARY_PATH ./consumer "$lib_version"
echo "go-module-test: the module as go get fetches it builds and runs against an installed prefix"
