#!/usr/bin/env bash
# The Windows wheel check (part of `make windows-test`, which has just built
# capstan.dll with mingw-w64): `pip wheel` the Python package around that DLL
# (CAPSTAN_WHEEL_LIBRARY and CAPSTAN_WHEEL_PLATFORM=win_amd64, read by
# bindings/python/hatch_build.py) and check the wheel: its name and WHEEL tag
# (py3-none-win_amd64), capstan/capstan.dll inside and no other library, the
# DLL the one given; then unpack it as pip would install it and check that the
# package, on a sys.platform faked to win32, looks first for that capstan.dll
# (loading it takes Windows).
# Running the wheel needs a Windows CPython, and no registry reachable here
# serves one (PyPI has no Windows interpreter package; Debian has none to run
# under Wine): what is checked is what can be without it.
# Usage: python_wheel_windows.sh WORK VERSION PYTHON DLL
set -euo pipefail

work=$1
version=$2
python=$3
dll=$4
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/checks.sh"

[ -f "$dll" ] || fail "no DLL at $dll (make windows-lib)"
rm -rf "$work" && mkdir -p "$work/dist"
CAPSTAN_WHEEL_LIBRARY=$dll CAPSTAN_WHEEL_PLATFORM=win_amd64 \
  "$python" -m pip wheel --quiet --no-deps --wheel-dir "$work/dist" "$repo/bindings/python"
shopt -s nullglob
wheels=("$work"/dist/capstan_rt-*.whl)
[ ${#wheels[@]} -eq 1 ] || fail "expected one wheel, found: ${wheels[*]:-none}"
wheel=${wheels[0]}
name=$(basename "$wheel")
[ "$name" = "capstan_rt-$version-py3-none-win_amd64.whl" ] || fail "$name: expected capstan_rt-$version-py3-none-win_amd64.whl"
tag=$(member "$wheel" "capstan_rt-$version.dist-info/WHEEL" | sed -n 's/^Tag: //p')
[ "$tag" = "py3-none-win_amd64" ] || fail "$name: its WHEEL file says Tag: $tag"
pass "pip wheel gives $name (Tag: $tag)"

listing=$("$python" -m zipfile -l "$wheel")
libraries=$(awk '{print $1}' <<<"$listing" | grep -E '\.(dll|so|dylib)$' || true)
[ "$libraries" = "capstan/capstan.dll" ] || fail "$name: expected capstan/capstan.dll as its only library, found: ${libraries:-none}"
cmp -s "$dll" <(member "$wheel" capstan/capstan.dll) || fail "$name: capstan/capstan.dll is not $dll"
grep -q "capstan/_lib\.py" <<<"$listing" || fail "$name has no capstan/_lib.py"
pass "$name holds capstan/capstan.dll ($(stat -c %s "$dll") bytes, the mingw build) and no other library"

# A wheel installs by unpacking into site-packages.
"$python" -m zipfile -e "$wheel" "$work/site"
cd "$work"
env -u CAPSTAN_LIB PYTHONPATH="$work/site" "$python" - "$work/site/capstan/capstan.dll" <<'PY'
import sys
from pathlib import Path

import capstan

sys.platform = "win32"
expected = Path(sys.argv[1])
why, first = capstan._lib._candidates()[0]
assert (why, Path(first)) == ("bundled in the package", expected), f"on win32 the first place tried is {first} ({why})"
assert expected.is_file(), f"{expected} is missing"
print(f"on win32 the package looks first for {first} ({why})")
PY
pass "the unpacked wheel's loader, on win32, goes for its capstan.dll first"

echo "python-wheel-windows-test: $passed passed, 0 failed"
