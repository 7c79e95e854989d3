#!/usr/bin/env bash
# Builds and runs capstan's fuzz targets (cargo-fuzz, libFuzzer, ASan) on the
# stable toolchain: RUSTC_BOOTSTRAP=1 lets it take -Zsanitizer, no nightly.
#
#   fuzz/run.sh build           build every target
#   fuzz/run.sh smoke [TARGET]  each target FUZZ_SECONDS (default 15) from the
#                               checked-in seeds (fuzz/seeds), new inputs kept
#                               in a temporary directory, input sizes capped
#   fuzz/run.sh long [TARGET]   each target FUZZ_SECONDS (default 300), corpus
#                               kept and grown in fuzz/corpus (not committed)
#
# A crash, a panic (also one caught at the C boundary), an input that runs
# over 2 s (-timeout=2) or RSS over 2 GB (-rss_limit_mb=2048) fails the run;
# libFuzzer writes the input to fuzz/artifacts/TARGET/. Leaks are checked once,
# by LeakSanitizer at exit: libFuzzer's per-input check (-detect_leaks=1) scans
# the whole heap after every input that capstan's threads free memory for
# later, which made these targets 50 times slower (28 ms an input instead of
# 0.5 ms).
set -euo pipefail
cd "$(dirname "$0")"
export RUSTC_BOOTSTRAP=1

mode=${1:-smoke}
TARGETS=(schema validate export parse_calls format_results run_turn execute strings stream_feed repair_results journal_reader)
# Targets outside the smoke run of `make test` (its time budget is fixed):
# `long` runs them with the others; `fuzz/run.sh smoke check_history` alone.
EXTRA_TARGETS=(check_history mount_reader server_request)
if [ $# -ge 2 ]; then TARGETS=("$2"); elif [ "$mode" = long ]; then TARGETS+=("${EXTRA_TARGETS[@]}"); fi

# Smoke caps on input size, per target. They keep the smoke run clear of the
# blow-ups of issue 17 that are being fixed (exponential validation of deep
# recursive anyOf arguments and of anyOf/$ref chains, exponential strict nulls,
# Gemini $ref lowering): a depth-17 calculator expression needs ~350 bytes, a
# 20-deep $ref chain ~1.5 KB. `long` uses 16 KB and may find them.
declare -A SMOKE_MAX_LEN=(
  [schema]=768 [validate]=256 [export]=768 [parse_calls]=4096
  [format_results]=4096 [run_turn]=2048 [execute]=2048 [strings]=1024 [stream_feed]=8192
  [repair_results]=256 [check_history]=4096 [mount_reader]=4096 [server_request]=4096
  [journal_reader]=4096
)

# Cargo features a target needs (built apart with them: the other targets
# stay without the MCP bridge, whose rmcp, hyper and tokio would add minutes
# to their sanitizer build).
declare -A FEATURES=([mount_reader]=mcp [server_request]=mcp)

# cargo-fuzz's default build: release, with debug assertions and overflow
# checks, ASan. Every run below uses the same flags, so the build is reused.
# The smoke run builds with 16 codegen units (cargo-fuzz's default is 1): on
# 2 cores that build took 9 of fuzz-smoke's 12 minutes (7 with 16 units);
# 16 units run a little slower, which a smoke run's seconds from the seeds do
# not notice. `long` keeps the default.
BUILD_FLAGS=()
if [ "$mode" = smoke ]; then BUILD_FLAGS=(--codegen-units 16); fi
# fuzz/Cargo.lock is committed: a build must not rewrite it (it did whenever
# capstan gained a dependency and the lock was not refreshed with it), so a
# stale lock fails here, saying how to refresh it.
locked() {
  cargo metadata --locked --offline --format-version 1 >/dev/null 2>&1 || cargo metadata --locked --format-version 1 >/dev/null 2>&1 || {
    echo "fuzz/Cargo.lock does not match fuzz/Cargo.toml and ../Cargo.toml: run 'cargo metadata --format-version 1 >/dev/null' in fuzz/ and commit fuzz/Cargo.lock" >&2
    exit 1
  }
}
build() { locked; cargo fuzz build "${BUILD_FLAGS[@]}"; }

run() {
  local target=$1 corpus=$2 max_len=$3
  mkdir -p "$corpus" "artifacts/$target"
  echo "== fuzz $target: ${FUZZ_SECONDS}s, max_len $max_len"
  # grep hides libFuzzer's progress lines; the fuzzer's own status decides.
  set +e
  local features=()
  if [ -n "${FEATURES[$target]:-}" ]; then features=(--features "${FEATURES[$target]}"); fi
  cargo fuzz run "${BUILD_FLAGS[@]}" "${features[@]}" "$target" "$corpus" "seeds/$target" -- \
    -max_total_time="$FUZZ_SECONDS" -timeout=2 -rss_limit_mb=2048 -max_len="$max_len" \
    -dict=json.dict -print_final_stats=1 -detect_leaks=0 ${FUZZ_SEED:+-seed=$FUZZ_SEED} 2>&1 |
    grep -v -E '^(#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)|"|###### )'
  local status=${PIPESTATUS[0]}
  set -e
  if [ "$status" -ne 0 ]; then echo "fuzz $target FAILED (status $status): see fuzz/artifacts/$target/" >&2; fi
  return "$status"
}

case "$mode" in
  build)
    build
    # The targets that need features, each with them (see FEATURES).
    for t in "${!FEATURES[@]}"; do cargo fuzz build --features "${FEATURES[$t]}" "$t"; done
    ;;
  smoke)
    FUZZ_SECONDS=${FUZZ_SECONDS:-15}
    # A fixed seed: the smoke run in `make test` explores the same way each
    # time (a new finding comes from `make fuzz`, not from CI's luck).
    FUZZ_SEED=${FUZZ_SEED:-1}
    build
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    for t in "${TARGETS[@]}"; do run "$t" "$scratch/$t" "${SMOKE_MAX_LEN[$t]}"; done
    echo "fuzz-smoke: ${#TARGETS[@]} targets, ${FUZZ_SECONDS}s each, no crash, timeout or leak"
    ;;
  long)
    FUZZ_SECONDS=${FUZZ_SECONDS:-300}
    build
    for t in "${TARGETS[@]}"; do run "$t" "corpus/$t" 16384; done
    echo "fuzz: ${#TARGETS[@]} targets, ${FUZZ_SECONDS}s each, no crash, timeout or leak"
    ;;
  *) echo "usage: $0 build | smoke [TARGET] | long [TARGET]" >&2; exit 2 ;;
esac
