#!/usr/bin/env bash
# Runs make targets one after another and prints how long each took: the
# table that ends `make test` and `make check` (also written to TABLE).
#
#   mk/suites.sh TABLE TARGET...
#
# Stops at the first target that fails, prints the table so far and exits 1;
# with KEEP_GOING=1 it runs the rest and exits 1 at the end if any failed.
# MAKE is the make to run (the Makefile passes its own).
#
# Each suite runs as `make -jN` (SUITE_JOBS, default the number of CPUs): the
# C, C++ and mingw test programs of a suite compile side by side, while each
# suite runs its tests in one recipe, one after another, as before. A suite
# that runs longer than SUITE_TIMEOUT seconds (default 1500) is stopped and
# fails naming itself: a hang fails its suite instead of eating the CI budget
# (needs coreutils' timeout; without it the suites run unbounded).
set -u
table=$1
shift
make=${MAKE:-make}

now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100)); }

# Free disk after each suite, in GiB: the build trees grow through the run,
# and a CI machine that runs out of disk fails far from the cause.
free_gib() { df -Pk . 2>/dev/null | awk 'NR==2 {printf "%.1f", $4 / 1048576}'; }

jobs=${SUITE_JOBS:-$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
limit=${SUITE_TIMEOUT:-1500}
bound=()
if command -v timeout >/dev/null 2>&1; then bound=(timeout -k 30 "$limit"); fi

names=() times=() states=() frees=() failed=()
start_all=$(now_ms)
for target in "$@"; do
  echo "=== make $target"
  start=$(now_ms)
  ${bound[@]+"${bound[@]}"} $make -j"$jobs" --no-print-directory "$target"
  rc=$?
  if [ "$rc" = 0 ]; then state=ok; else state=FAILED; fi
  if [ "$rc" = 124 ] && [ ${#bound[@]} -gt 0 ]; then
    echo "=== $target: stopped after SUITE_TIMEOUT=$limit s (a hang, or a machine far slower than expected)" >&2
    state=TIMEOUT
  fi
  names+=("$target") times+=($(($(now_ms) - start))) states+=("$state") frees+=("$(free_gib)")
  # Each suite's line as it ends, with the time since the start: a run cut
  # short (a CI time limit) still shows in its log where the time went.
  echo "=== $target: $(secs "${times[${#times[@]} - 1]}") s, $state (at $(secs $(($(now_ms) - start_all))) s)"
  if [ "$state" != ok ]; then
    failed+=("$target")
    [ "${KEEP_GOING:-0}" = 1 ] || break
  fi
done
total=$(($(now_ms) - start_all))

mkdir -p "$(dirname "$table")"
{
  printf '%-24s %9s  %-7s %s\n' suite seconds result 'free GiB'
  for i in "${!names[@]}"; do
    printf '%-24s %9s  %-7s %s\n' "${names[$i]}" "$(secs "${times[$i]}")" "${states[$i]}" "${frees[$i]}"
  done
  printf '%-24s %9s  %s\n' total "$(secs "$total")" "$((${#names[@]} - ${#failed[@]}))/$# passed"
} >"$table"
echo
cat "$table"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
