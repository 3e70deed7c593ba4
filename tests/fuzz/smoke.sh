#!/usr/bin/env bash
# tests/fuzz/smoke.sh - the CI smoke run of the libFuzzer harnesses (test `fuzz-smoke`, suite integration).
#
#   smoke.sh run   OUTDIR CORPUS EXE...          run prebuilt fuzzers (clang build directories)
#   smoke.sh build OUTDIR CORPUS DATA BUILD_ROOT ANALYZER_DIR -- HARNESS.c... ANALYZER.c... sql_embed.c
#                                               build them with clang first (gcc build directories)
#
# Each fuzzer runs from a copy of its seed corpus (CORPUS/NAME) in a temporary directory for
# WSR_FUZZ_SECONDS seconds (default: fuzz-ingest 15, the others 8; half a minute in all: a smoke
# run beside the suite; tests/fuzz/run-long.sh is the long run) and the
# test fails if libFuzzer reports a crash, a leak, a timeout or running out of memory; the
# reproducer is copied to OUTDIR/fuzz-artifacts/. The executions done are printed
# (stat::number_of_executed_units). tests/fuzz/NAME.dict, if present, is passed as -dict.
# Before fuzzing, the reproducers of earlier findings (tests/fuzz/crashes/NAME/*) must run clean.
# Exit 77 (skip) when clang cannot build a fuzzer.
# The build mode recompiles only when a source is newer than the binaries.
set -uo pipefail

mode=${1:?usage: smoke.sh run|build OUTDIR CORPUS ...}
outdir=${2:?}
corpus=${3:?}
shift 3
exes=()

if [ "$mode" = build ]; then
  data=${1:?}
  build_root=${2:?}
  analyzer_dir=${3:?}
  shift 3
  [ "${1:-}" = "--" ] && shift
  harnesses=()
  sources=()
  for f in "$@"; do
    case "$(basename "$f")" in
    fuzz-*.c) harnesses+=("$f") ;;
    *) sources+=("$f") ;;
    esac
  done
  clang=${WSR_FUZZ_CC:-clang}
  if ! command -v "$clang" >/dev/null 2>&1; then
    echo "fuzz-smoke: SKIP: no clang (install clang and libclang-rt-14-dev)"
    exit 77
  fi
  bdir=$outdir/clang-fuzz
  mkdir -p "$bdir"
  probe=$bdir/probe.c
  printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' > "$probe"
  if ! "$clang" -fsanitize=fuzzer,address,undefined "$probe" -o "$bdir/probe" 2> "$bdir/probe.log"; then
    cat "$bdir/probe.log"
    echo "fuzz-smoke: SKIP: $clang cannot link -fsanitize=fuzzer (install libclang-rt-14-dev)"
    exit 77
  fi
  # shellcheck disable=SC2207
  pkgc=($(pkg-config --cflags babeltrace2 sqlite3)) || { echo "fuzz-smoke: pkg-config failed"; exit 1; }
  # shellcheck disable=SC2207
  pkgl=($(pkg-config --libs babeltrace2 sqlite3)) || { echo "fuzz-smoke: pkg-config failed"; exit 1; }
  cflags=(-std=gnu11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer-no-link,address,undefined
    -fno-sanitize-recover=undefined -I"$build_root" -I"$analyzer_dir" -I"$analyzer_dir/../tracepoints" -I"$build_root/tracepoints"
    -DWSR_FUZZ_DATA_DIR="\"$data\"")
  stale=0
  for h in "${harnesses[@]}"; do
    exe=$bdir/$(basename "$h" .c)
    exes+=("$exe")
    [ -x "$exe" ] || stale=1
    for s in "${sources[@]}" "${harnesses[@]}" "$analyzer_dir"/*.h "$build_root/config.h"; do
      [ -e "$exe" ] && [ "$s" -nt "$exe" ] && stale=1
    done
  done
  if [ $stale = 1 ]; then
    echo "fuzz-smoke: building the fuzzers with $clang in $bdir"
    objs=()
    pids=()
    for s in "${sources[@]}"; do
      o=$bdir/$(basename "$s" .c).o
      objs+=("$o")
      "$clang" "${cflags[@]}" "${pkgc[@]}" -c "$s" -o "$o" &
      pids+=($!)
      if [ ${#pids[@]} -ge 2 ]; then
        wait "${pids[0]}" || { echo "fuzz-smoke: compiling failed"; exit 1; }
        pids=("${pids[@]:1}")
      fi
    done
    for p in "${pids[@]}"; do
      wait "$p" || { echo "fuzz-smoke: compiling failed"; exit 1; }
    done
    for h in "${harnesses[@]}"; do
      exe=$bdir/$(basename "$h" .c)
      "$clang" "${cflags[@]}" "${pkgc[@]}" -fsanitize=fuzzer "$h" "${objs[@]}" "${pkgl[@]}" -lm -lpthread \
        -o "$exe" ||
        { echo "fuzz-smoke: linking $exe failed"; exit 1; }
    done
  fi
elif [ "$mode" = run ]; then
  exes=("$@")
else
  echo "usage: smoke.sh run|build OUTDIR CORPUS ..." >&2
  exit 2
fi

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
mkdir -p "$outdir"
status=0
total=0
for exe in "${exes[@]}"; do
  name=$(basename "$exe")
  case "$name" in
  fuzz-ingest) secs=${WSR_FUZZ_SECONDS:-15} ;;
  *) secs=${WSR_FUZZ_SECONDS:-8} ;;
  esac
  # The reproducers of bugs found so far run first: a fixed bug must stay fixed.
  crashes=$corpus/../crashes/$name
  if ls "$crashes" 2>/dev/null | grep -q .; then
    if "$exe" -close_fd_mask=2 "$crashes"/* > "$outdir/$name-regression.log" 2>&1; then
      echo "$name: the $(ls "$crashes" | wc -l) reproducers in crashes/$name run clean"
    else
      status=1
      echo "$name: FAILED on a reproducer in crashes/$name (an old bug is back or not fixed yet):"
      grep -E 'Running:|runtime error|ERROR|SUMMARY|#[0-9] ' "$outdir/$name-regression.log" | head -30
    fi
  fi
  work=$(mktemp -d "/tmp/wsr-fuzz-smoke-$name-XXXXXX")
  mkdir -p "$work/corpus" "$work/artifacts"
  cp "$corpus/$name"/* "$work/corpus/" 2>/dev/null
  extra=()
  [ -f "$corpus/../$name.dict" ] && extra=(-dict="$corpus/../$name.dict")
  # Records are cheap next to the database set-up of each input: let inputs grow at once.
  [ "$name" = fuzz-derive ] && extra+=(-max_len=2048 -len_control=10)
  # -timeout: fuzz-ingest bounds each input itself (2 s no-progress limit on the decoder).
  # -close_fd_mask=2: the analyzer's own error lines stay out of the log; sanitizer and
  # libFuzzer reports still get through (libFuzzer keeps a duplicate of stderr for them).
  "$exe" -max_total_time="$secs" -timeout=25 -rss_limit_mb=4096 -print_final_stats=1 -close_fd_mask=2 \
    "${extra[@]}" -artifact_prefix="$work/artifacts/" "$work/corpus" > "$work/log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -1)
  ft=$(grep -o 'ft: [0-9]*' "$work/log" | tail -1)
  units=$(find "$work/corpus" -type f | wc -l)
  echo "$name: ${execs:-?} executions in ${secs} s, ${cov:-cov: ?} ${ft:-ft: ?}, corpus $units files, libFuzzer exit $rc"
  total=$((total + ${execs:-0}))
  if [ $rc -ne 0 ] || ls "$work/artifacts" | grep -q .; then
    status=1
    mkdir -p "$outdir/fuzz-artifacts"
    cp "$work/artifacts"/* "$outdir/fuzz-artifacts/" 2>/dev/null
    echo "$name: FAILED; the last lines of its log:"
    tail -60 "$work/log"
    echo "$name: reproducers in $outdir/fuzz-artifacts/ (run: $exe FILE)"
  fi
  rm -rf "$work"
done
echo "fuzz-smoke: $total executions in all"
exit $status
