#!/usr/bin/env bash
# The wheel test (`make python-wheel-test`, part of `make test`): `pip wheel`
# the Python package, which builds libcapstan with cargo (CARGO_TARGET_DIR, set
# by the Makefile, points at the top-level target dir so nothing is rebuilt)
# and must put it in a platform wheel; install that wheel into a fresh venv and
# make a tool call there with CAPSTAN_LIB unset and from outside the tree.
# Usage: python_wheel.sh WORK VERSION [PYTHON]
set -euo pipefail

work=$1
version=$2
python=${3:-python3}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
passed=0

pass() {
  echo "ok: $1"
  passed=$((passed + 1))
}
fail() {
  echo "FAIL: $1" >&2
  exit 1
}

rm -rf "$work" && mkdir -p "$work/dist"
"$python" -m pip wheel --quiet --no-deps --wheel-dir "$work/dist" "$repo/bindings/python"
shopt -s nullglob
wheels=("$work"/dist/capstan-*.whl)
[ ${#wheels[@]} -eq 1 ] || fail "expected one wheel, found: ${wheels[*]:-none}"
wheel=${wheels[0]}
name=$(basename "$wheel")
case "$name" in
  *-none-any.whl) fail "$name is a pure wheel: it cannot carry the library" ;;
  "capstan-$version-py3-none-"*.whl) ;;
  *) fail "$name: expected capstan-$version-py3-none-<platform>.whl" ;;
esac
# Listed first, then searched: `grep -q` in a pipe exits at the first match
# and the lister, still writing, fails with a broken pipe (pipefail).
listing=$("$python" -m zipfile -l "$wheel")
grep -q "capstan/libcapstan\.so" <<<"$listing" || fail "$name has no capstan/libcapstan.so"
pass "pip wheel gives $name with the library inside"

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
pass "the wheel works in a fresh venv without CAPSTAN_LIB"

echo "python-wheel-test: $passed passed, 0 failed"
