#!/usr/bin/env bash
# tests/fuzz/run-long.sh - a long libFuzzer run of one harness, e.g. overnight:
#
#   tests/fuzz/run-long.sh TARGET HOURS [JOBS]     TARGET: fuzz-ingest, fuzz-derive or fuzz-check-expr
#
# Builds the fuzzers in a clang ASan+UBSan build directory (WSR_FUZZ_BUILD, default
# build-fuzz at the top of the tree; configured on first use), then fuzzes from a working
# corpus (WSR_FUZZ_WORK, default build-fuzz/fuzz-work/TARGET, seeded from
# tests/fuzz/corpus/TARGET and kept between runs) with JOBS parallel workers (default 1;
# each uses one core). Crashes, leaks and timeouts land in WORK/artifacts/ and the script
# exits 1 if there are any. At the end it prints the executions and the coverage, and
# minimizes nothing: to add new seeds to the committed corpus, merge the small ones by hand
# (`FUZZER -merge=1 tests/fuzz/corpus/TARGET WORK/corpus`, keep the total under ~2 MB).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
target=${1:?usage: run-long.sh fuzz-ingest|fuzz-derive|fuzz-check-expr HOURS [JOBS]}
hours=${2:?usage: run-long.sh TARGET HOURS [JOBS]}
jobs=${3:-1}
case "$target" in
fuzz-ingest | fuzz-derive | fuzz-check-expr) ;;
*) echo "run-long: unknown target '$target'" >&2; exit 2 ;;
esac
secs=$(python3 -c "print(int(float('$hours') * 3600))")
build=${WSR_FUZZ_BUILD:-$here/build-fuzz}
work=${WSR_FUZZ_WORK:-$build/fuzz-work/$target}

if [ ! -f "$build/build.ninja" ]; then
  CC=clang meson setup "$build" "$here" -Db_sanitize=address,undefined -Db_lundef=false \
    -Dviewer=disabled >/dev/null
fi
ninja -C "$build" "tests/fuzz/$target" >/dev/null
exe=$build/tests/fuzz/$target
[ -x "$exe" ] || { echo "run-long: $exe was not built (is the compiler clang with libFuzzer?)" >&2; exit 1; }

mkdir -p "$work/corpus" "$work/artifacts" "$work/logs"
cp -n "$here/tests/fuzz/corpus/$target"/* "$work/corpus/" 2>/dev/null || true
extra=()
[ -f "$here/tests/fuzz/$target.dict" ] && extra=(-dict="$here/tests/fuzz/$target.dict")
# Records are cheap next to the database set-up of each input: let inputs grow at once.
[ "$target" = fuzz-derive ] && extra+=(-max_len=2048 -len_control=10)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
echo "run-long: $target for $secs s with $jobs job(s); corpus $work/corpus, logs $work/logs"
cd "$work/logs"
set +e
if [ "$jobs" -gt 1 ]; then
  # -fork keeps going after a crash (-ignore_crashes) so that one bug does not end the night.
  "$exe" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$secs" -timeout=25 -rss_limit_mb=4096 -close_fd_mask=2 \
    -print_final_stats=1 "${extra[@]}" -artifact_prefix="$work/artifacts/" "$work/corpus" 2>&1 | tee "$work/logs/run.log"
else
  "$exe" -max_total_time="$secs" -timeout=25 -rss_limit_mb=4096 -close_fd_mask=2 \
    -print_final_stats=1 "${extra[@]}" -artifact_prefix="$work/artifacts/" "$work/corpus" 2>&1 | tee "$work/logs/run.log"
fi
set -e
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/logs/run.log" | tail -1)
cov=$(grep -o 'cov: [0-9]*' "$work/logs/run.log" | tail -1)
echo "run-long: $target: ${execs:-?} executions, ${cov:-cov: ?}, corpus $(find "$work/corpus" -type f | wc -l) files"
if ls "$work/artifacts" | grep -q .; then
  echo "run-long: findings in $work/artifacts:"
  ls -la "$work/artifacts"
  exit 1
fi
