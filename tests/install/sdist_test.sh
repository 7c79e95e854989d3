#!/usr/bin/env bash
# dist-sdist-test (issue 51, item 2): the Python sdist installed as a user
# installs it, with Rust present: `pip install capstan_rt-V.tar.gz` in an empty
# directory outside the tree into a fresh venv, which builds the library with
# cargo (hatch_build.py, from the sdist's rust/ workspace) into a wheel, then
# a tool call through it with no CAPSTAN_LIB. pip fetches the build backend
# (hatchling) from the package index, as for any user.
#
#   tests/install/sdist_test.sh SDIST VERSION
# Environment: SETUP_PYTHON (makes the venv), SDIST_TARGET_DIR (cargo's
# target directory for the build; empty: pip's own temporary one, cold).
set -euo pipefail
sdist=$1
version=$2
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/capstan-sdist-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }
case $work in "$repo"/*) fail "the work directory $work is inside the repository" ;; esac
[ -f "$sdist" ] || fail "no sdist at $sdist (make dist-sdist)"
unset CAPSTAN_LIB LD_LIBRARY_PATH PYTHONPATH CAPSTAN_WHEEL_LIBRARY CAPSTAN_WHEEL_PLATFORM
if [ -n "${SDIST_TARGET_DIR:-}" ]; then export CARGO_TARGET_DIR=$SDIST_TARGET_DIR; else unset CARGO_TARGET_DIR; fi
cp "$sdist" "$work/"
cd "$work"
listing=$(tar -tzf "$(basename "$sdist")")
for f in PKG-INFO pyproject.toml hatch_build.py capstan/__init__.py rust/Cargo.toml rust/Cargo.lock rust/src/lib.rs \
  rust/crates/core/Cargo.toml rust/include/capstan.h rust/LICENSE; do
  grep -qx "capstan_rt-$version/$f" <<<"$listing" || fail "the sdist carries no $f"
done
"${SETUP_PYTHON:-python3}" -m venv venv
echo "sdist-test: pip install $(basename "$sdist") (a release build of the library with cargo${CARGO_TARGET_DIR:+, target dir $CARGO_TARGET_DIR})"
venv/bin/python -m pip install --quiet --disable-pip-version-check "$(basename "$sdist")" >pip.log 2>&1 ||
  { tail -40 pip.log; fail "pip install of the sdist"; }
venv/bin/python - "$version" "$work/venv" <<'PY' >python.out || { cat python.out; fail "the tool call through the installed sdist"; }
import sys
from importlib.metadata import version as dist_version
from pathlib import Path

import capstan
from capstan import ToolCall, ToolRegistry, tool
from capstan._lib import lib

version, venv = sys.argv[1], Path(sys.argv[2]).resolve()
assert dist_version("capstan-rt") == version, dist_version("capstan-rt")
loaded = Path(lib().path).resolve()
assert venv in loaded.parents, f"loaded {loaded}, not the copy inside the venv {venv}"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


with ToolRegistry([add]) as registry:
    result = registry.execute(ToolCall("add", {"a": 2, "b": 3}))
assert result.data == 5, result
print(f"add(2, 3) = {result.data} with {loaded}")
PY
echo "ok: the sdist built and installed by pip into a fresh venv runs a tool call ($(cat python.out))"
echo "dist-sdist-test: 1 passed, 0 failed"
