#!/usr/bin/env bash
# tests/gotests/soak.sh - the long run of issue 17 (not in CI): the chaos stress
# at 64 Ps and every Go port (tests/gotests) at WSRMAXPROCS=64, plain and under
# WSRDEBUG=chaos=SEED, round after round with a new seed, for MINUTES minutes.
#
# Usage: meson test -C BUILD_DIR --suite soak   (10 minutes, with the build's
#        sanitizer options), or tests/gotests/soak.sh [BUILD_DIR [MINUTES]]
#        (default: build 10; a sanitizer build then needs TSAN_OPTIONS etc.
#        as tests/meson.build sets them).
#   WSR_SOAK_MINUTES overrides MINUTES (also under meson).
#   WSR_SOAK_SCALE (default 5) is the WSR_STRESS_SCALE of every run, and the
#   watchdogs and case timeouts grow with it (WSR_TEST_TIMEOUT_MULTIPLIER is
#   set to it: a hang still fails, a run slowed down by chaos and 64 threads
#   on few cores does not); WSR_SOAK_PROCS (default 64) is the P count;
#   WSR_TEST_KNOWN_BUGS=1 runs the known-bug cases too.
# Stops at the first failing run and prints its log; ends with one line
# "soak: R rounds, N runs, F failed in S s" (R counts rounds begun) and exits 1 if anything failed.
# Each run is a whole TAP test binary; logs go to BUILD_DIR/soak-logs/.
set -uo pipefail
build=${1:-build}
minutes=${WSR_SOAK_MINUTES:-${2:-10}}
procs=${WSR_SOAK_PROCS:-64}
export WSR_STRESS_SCALE=${WSR_SOAK_SCALE:-5}
export WSR_TEST_TIMEOUT_MULTIPLIER=$WSR_STRESS_SCALE
ports=(go-chan go-chanprogs go-proc go-sync go-time go-crash)

[ -x "$build/tests/stress/stress-chaos" ] || { echo "soak: no $build/tests/stress/stress-chaos (build first)" >&2; exit 2; }
for p in "${ports[@]}"; do
  [ -x "$build/tests/gotests/$p" ] || { echo "soak: no $build/tests/gotests/$p (build first)" >&2; exit 2; }
done
logs=$build/soak-logs
rm -rf "$logs" && mkdir -p "$logs"

start=$(date +%s)
deadline=$((start + minutes * 60))
rounds=0 runs=0 failed=0

# run NAME CMD...: one test binary, its TAP into $logs/NAME.log.
run() {
  local name=$1; shift
  runs=$((runs + 1))
  if ! "$@" > "$logs/$name.log" 2>&1; then
    failed=$((failed + 1))
    echo "soak: FAILED $name (log $logs/$name.log):"
    grep -E '^not ok|^#' "$logs/$name.log" | tail -40
    return 1
  fi
  rm -f "$logs/$name.log"
}

while [ "$(date +%s)" -lt "$deadline" ]; do
  rounds=$((rounds + 1)) # rounds begun: the last one stops at the deadline
  seed=$rounds
  # stress-chaos picks WSRMAXPROCS and WSRDEBUG itself (chaos=WSR_SEED+P).
  WSR_SEED=$seed WSR_TEST_FILTER=chaos_p64 run "chaos-p64-seed$seed" "$build/tests/stress/stress-chaos" || break
  for p in "${ports[@]}"; do
    [ "$(date +%s)" -lt "$deadline" ] || break
    WSRMAXPROCS=$procs run "$p-p$procs-round$seed" env -u WSRDEBUG "$build/tests/gotests/$p" || break 2
    WSRMAXPROCS=$procs WSRDEBUG=chaos=$seed run "$p-p$procs-chaos$seed" "$build/tests/gotests/$p" || break 2
  done
done
echo "soak: $rounds rounds, $runs runs, $failed failed in $(( $(date +%s) - start )) s" \
  "(WSRMAXPROCS=$procs, WSR_STRESS_SCALE=$WSR_STRESS_SCALE," \
  "WSR_TEST_TIMEOUT_MULTIPLIER=$WSR_TEST_TIMEOUT_MULTIPLIER, $build)"
[ "$failed" -eq 0 ]
