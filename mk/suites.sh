#!/usr/bin/env bash
# Runs make targets one after another and prints how long each took: the
# table that ends `make test` and `make check` (also written to TABLE).
#
#   mk/suites.sh TABLE TARGET...
#
# Stops at the first target that fails, prints the table so far and exits 1;
# with KEEP_GOING=1 it runs the rest and exits 1 at the end if any failed.
# MAKE is the make to run (the Makefile passes its own).
set -u
table=$1
shift
make=${MAKE:-make}

now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100)); }

# Free disk after each suite, in GiB: the build trees grow through the run,
# and a CI machine that runs out of disk fails far from the cause.
free_gib() { df -Pk . 2>/dev/null | awk 'NR==2 {printf "%.1f", $4 / 1048576}'; }

names=() times=() states=() frees=() failed=()
start_all=$(now_ms)
for target in "$@"; do
  echo "=== make $target"
  start=$(now_ms)
  if $make --no-print-directory "$target"; then state=ok; else state=FAILED; fi
  names+=("$target") times+=($(($(now_ms) - start))) states+=("$state") frees+=("$(free_gib)")
  # Each suite's line as it ends, with the time since the start: a run cut
  # short (a CI time limit) still shows in its log where the time went.
  echo "=== $target: $(secs "${times[-1]}") s, $state (at $(secs $(($(now_ms) - start_all))) s)"
  if [ "$state" = FAILED ]; then
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
