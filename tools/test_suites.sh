#!/usr/bin/env bash
# Self-test of mk/suites.sh, the runner of `make test` (`make suites-check`):
# a suite that passes, fails or hangs past SUITE_TIMEOUT is reported as such,
# each as it ends and in the final table; the first failure stops the run
# unless KEEP_GOING=1; the exit status says whether all passed.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
# The caller's settings (`KEEP_GOING=1 make test`) must not change what is tested.
unset KEEP_GOING SUITE_TIMEOUT SUITE_JOBS MAKEFLAGS MFLAGS
expect() { # expect WHAT FILE PATTERN
  if grep -Eq "$3" "$2"; then echo "ok: $1"; else
    echo "FAILED: $1 (no /$3/ in $2):"; cat "$2"; bad=1; fi
}
printf 'passes:\n\t@true\nfails:\n\t@false\nhangs:\n\t@sleep 60\nalso:\n\t@true\n' >"$tmp/Makefile"

start=$(date +%s)
(cd "$tmp" && MAKE=make SUITE_TIMEOUT=2 KEEP_GOING=1 "$root/mk/suites.sh" table passes hangs fails also) >"$tmp/out" 2>&1
status=$?
took=$(($(date +%s) - start))
[ "$status" = 1 ] && echo "ok: a run with failures exits 1" || { echo "FAILED: exit status $status, not 1"; bad=1; }
[ "$took" -lt 40 ] && echo "ok: the hanging suite was stopped (${took}s, its sleep is 60 s)" ||
  { echo "FAILED: the run took ${took}s: the hanging suite was not stopped"; bad=1; }
expect "each suite's line as it ends" "$tmp/out" '^=== passes: [0-9.]+ s, ok \(at [0-9.]+ s\)$'
expect "a hang is named" "$tmp/out" '^=== hangs: stopped after SUITE_TIMEOUT=2 s'
expect "the table marks the hang" "$tmp/table" '^hangs +[0-9.]+ +TIMEOUT'
expect "the table marks the failure" "$tmp/table" '^fails +[0-9.]+ +FAILED'
expect "KEEP_GOING=1 runs the rest" "$tmp/table" '^also +[0-9.]+ +ok'
expect "the total counts the passes" "$tmp/table" '^total .* 2/4 passed$'
expect "the failed suites are listed" "$tmp/out" '^FAILED: hangs fails$'

(cd "$tmp" && MAKE=make KEEP_GOING=0 "$root/mk/suites.sh" table2 passes fails also) >"$tmp/out2" 2>&1
status=$?
[ "$status" = 1 ] && echo "ok: a failure fails the run" || { echo "FAILED: exit status $status, not 1"; bad=1; }
if grep -q '^also' "$tmp/table2"; then echo "FAILED: the run went on after a failure"; bad=1; else echo "ok: the first failure stops the run"; fi

(cd "$tmp" && MAKE=make KEEP_GOING=0 "$root/mk/suites.sh" table3 passes also) >"$tmp/out3" 2>&1
status=$?
[ "$status" = 0 ] && echo "ok: a run that passes exits 0" || { echo "FAILED: exit status $status, not 0"; bad=1; }
expect "all passed" "$tmp/table3" '^total .* 2/2 passed$'

# The Makefile's entry points (issue 49): `make` alone builds the library and
# nothing else (no set-up), and every target `make help` names exists.
make -C "$root" --no-print-directory -n >"$tmp/default" 2>&1
if head -1 "$tmp/default" | grep -q '^cargo rustc --release --lib' && ! grep -qE 'setup|apt-get' "$tmp/default"; then
  echo "ok: plain make builds the library"
else echo "FAILED: plain make does not start with the library build:"; cat "$tmp/default"; bad=1; fi
make -C "$root" --no-print-directory help >"$tmp/help" 2>&1 || { echo "FAILED: make help"; bad=1; }
# The rule database (-p), read without running any recipe (`make -n test`
# would run mk/suites.sh: its recipe is marked `+`).
make -C "$root" --no-print-directory -pn help 2>/dev/null | sed -n 's/^\([a-z][a-z0-9-]*\):.*/\1/p' | sort -u >"$tmp/targets"
for t in $(sed -n 's/^  make \([a-z][a-z0-9-]*\).*/\1/p' "$tmp/help"); do
  grep -qx "$t" "$tmp/targets" || { echo "FAILED: make help names '$t', which the Makefile does not define"; bad=1; }
done
expect "make help names make test" "$tmp/help" '^  make test '
exit $bad
