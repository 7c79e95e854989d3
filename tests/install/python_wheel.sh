#!/usr/bin/env bash
# The wheel test (`make python-wheel-test`, part of `make test`): `pip wheel`
# the Python package, which builds libcapstan with cargo (CARGO_TARGET_DIR, set
# by the Makefile, points at the top-level target dir so nothing is rebuilt)
# and must put it in a platform wheel; `auditwheel show` must find the library
# needing nothing outside the manylinux policy of the newest glibc symbol
# version it imports, and `auditwheel repair` must retag the wheel to that
# policy (py3-none-manylinux_2_XX_x86_64, which a package index accepts)
# without touching the library; install the repaired wheel into a fresh venv
# and make a tool call there with CAPSTAN_LIB unset and from outside the tree.
# PYTHON must have auditwheel (build/venv: tests/python-requirements.txt).
# CAPSTAN_WHEEL_LIBRARY, when set, is shipped instead of a cargo build
# (bindings/python/hatch_build.py).
# Usage: python_wheel.sh WORK VERSION [PYTHON]
set -euo pipefail

work=$1
version=$2
python=${3:-python3}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/checks.sh"
# The one file of a glob, or fail.
only() {
  local what=$1
  shift
  [ $# -eq 1 ] && [ -e "$1" ] || fail "expected one $what, found: $*"
  echo "$1"
}

rm -rf "$work" && mkdir -p "$work/raw" "$work/dist"
"$python" -m pip wheel --quiet --no-deps --wheel-dir "$work/raw" "$repo/bindings/python"
raw=$(only wheel "$work"/raw/capstan_rt-*.whl)
name=$(basename "$raw")
case "$name" in
  *-none-any.whl) fail "$name is a pure wheel: it cannot carry the library" ;;
  "capstan_rt-$version-py3-none-linux_x86_64.whl") ;;
  *) fail "$name: expected capstan_rt-$version-py3-none-linux_x86_64.whl" ;;
esac
# Listed first, then searched: `grep -q` in a pipe exits at the first match
# and the lister, still writing, fails with a broken pipe (pipefail).
listing=$("$python" -m zipfile -l "$raw")
grep -q "capstan/libcapstan\.so" <<<"$listing" || fail "$name has no capstan/libcapstan.so"
pass "pip wheel gives $name with the library inside"

# The policy the library's own imports allow: the newest GLIBC_2.N version
# among its dynamic symbols (readelf, not auditwheel) gives manylinux_2_N.
"$python" -m zipfile -e "$raw" "$work/unpacked"
so="$work/unpacked/capstan/libcapstan.so"
glibc=$(readelf --dyn-syms --wide "$so" | grep -o '@GLIBC_2\.[0-9]*' | sort -t. -k2,2n -u | tail -1)
[ -n "$glibc" ] || fail "readelf found no GLIBC_2.N symbol version in $so"
minor=${glibc##*.}
policy="manylinux_2_${minor}_x86_64"
setters=$(readelf --dyn-syms --wide "$so" | grep -o "[A-Za-z0-9_]*${glibc//./\\.}\b" | sed 's/@.*//' | sort -u | tr '\n' ' ' | sed 's/ $//')

show=$("$python" -m auditwheel show "$raw" 2>&1) || fail "auditwheel show $name failed: $show"
flat=$(tr -s ' \n' ' ' <<<"$show")
grep -q "consistent with the following platform tag: \"$policy\"" <<<"$flat" ||
  fail "auditwheel show does not give $policy (newest import: $glibc):
$show"
if grep -q "external shared libraries" <<<"$flat"; then
  fail "auditwheel show: the library needs libraries outside the policy (a wheel would have to graft them):
$show"
fi
pass "auditwheel show: $policy, set by the ${glibc#@} symbols ($setters), nothing to graft"

# --patcher none: nothing is grafted, so nothing is patched; were anything
# needed, the repair would stop instead of rewriting the library.
"$python" -m auditwheel repair --patcher none --plat "$policy" --wheel-dir "$work/dist" "$raw" \
  >"$work/repair.log" 2>&1 || { cat "$work/repair.log"; fail "auditwheel repair $name failed"; }
wheel=$(only "repaired wheel" "$work"/dist/capstan_rt-*.whl)
name=$(basename "$wheel")
[ "$name" = "capstan_rt-$version-py3-none-$policy.whl" ] ||
  fail "$name: expected capstan_rt-$version-py3-none-$policy.whl"
tag=$(member "$wheel" "capstan_rt-$version.dist-info/WHEEL" | sed -n 's/^Tag: //p')
[ "$tag" = "py3-none-$policy" ] || fail "$name: its WHEEL file says Tag: $tag"
cmp -s "$so" <(member "$wheel" capstan/libcapstan.so) || fail "auditwheel repair changed capstan/libcapstan.so"
pass "auditwheel repair gives $name (Tag: $tag), the library unchanged"

"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-index "$wheel"
cd "$work"
env -u CAPSTAN_LIB "$work/venv/bin/python" - "$version" "$work/venv" <<'PY'
import sys
from pathlib import Path

import capstan
from capstan import ToolCall, ToolRegistry, tool
from capstan._lib import lib

version, venv = sys.argv[1], Path(sys.argv[2]).resolve()
loaded = Path(lib().path).resolve()
assert venv in loaded.parents, f"loaded {loaded}, not the copy inside the venv {venv}"
assert capstan.version() == version, f"capstan.version() is {capstan.version()}, Cargo.toml says {version}"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


with ToolRegistry([add]) as registry:
    result = registry.execute(ToolCall("add", {"a": 2, "b": 3}))
assert result.data == 5, result
print(f"capstan {capstan.version()} from {loaded}: add(2, 3) = {result.data}")
PY
pass "the manylinux wheel works in a fresh venv without CAPSTAN_LIB"

echo "python-wheel-test: $passed passed, 0 failed"
