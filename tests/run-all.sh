#!/usr/bin/env bash
# tests/run-all.sh - builds and runs the whole test suite; called by `scripts/setup.sh test`.
#
# Builds: build (gcc, -Dwerror=true): every suite but soak (10 minutes, by hand);
#         build-asan (clang, ASan+UBSan) and build-tsan (clang, TSan): unit, stress and
#         fidelity (the harness's base cases, tests/fidelity).
# Ends with one plain line "N passed, N failed" summed over every meson-logs/testlog.json,
# and exits non-zero when any test failed or any build broke.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

status=0
logs=()

# setup_build DIR ENV... -- MESON_OPTIONS...: configure once (reconfigure on later runs), build.
setup_build() {
  local dir=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    env "${envs[@]}" meson setup "$dir" "$@" > "$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; return 1; }
  else
    meson configure "$dir" "$@" > "$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; return 1; }
  fi
  ninja -C "$dir" > "$dir.build.log" 2>&1 || { tail -50 "$dir.build.log"; return 1; }
}

run_suites() {
  local dir=$1; shift
  rm -f "$dir/meson-logs/testlog.json"
  meson test -C "$dir" --print-errorlogs --num-processes 2 "$@" || status=1
  [ -f "$dir/meson-logs/testlog.json" ] && logs+=("$dir/meson-logs/testlog.json")
}

# san_build asan|tsan: configures and builds build-asan (clang, ASan+UBSan) or build-tsan
# (clang, TSan); its exit status goes to build-NAME.status, its output to its logs.
san_build() {
  local opts=(-Dwerror=true -Db_lundef=false -Dviewer=disabled)
  if [ "$1" = asan ]; then opts+=(-Db_sanitize=address,undefined); else opts+=(-Db_sanitize=thread); fi
  setup_build "build-$1" CC=clang -- "${opts[@]}" > /dev/null
  echo $? > "build-$1.status"
}

sanitizers=0
[ "${WSR_SKIP_SANITIZERS:-0}" != 1 ] && sanitizers=1
rm -f build-asan.status build-tsan.status

if setup_build build CC=gcc -- -Dwerror=true -Dbuildtype=debugoptimized; then
  # The sanitizer trees compile while the plain build's tests run, at nice 19, once the
  # long CPU-bound tests that start the run are done (or after 3 minutes): the rest of
  # that phase leaves much of the 2 cores idle (tests that run alone and wait on the
  # tracer), while the liveness model and the fuzzers, built beside, took 70 s longer.
  if [ $sanitizers = 1 ]; then
    rm -f build/meson-logs/testlog.json
    (
      renice -n 19 -p $BASHPID > /dev/null
      for _ in $(seq 36); do
        [ -f build/meson-logs/testlog.json ] &&
          grep -q '/ spin-parking-liveness"' build/meson-logs/testlog.json &&
          grep -q '/ fuzz-smoke"' build/meson-logs/testlog.json && break
        sleep 5
      done
      san_build asan
      san_build tsan
    ) &
    san_builds=$!
  fi
  run_suites build --no-suite soak
else
  echo "run-all: the gcc build failed"; status=1
fi

if [ $sanitizers = 1 ]; then
  [ -n "${san_builds:-}" ] && wait "$san_builds"
  for san in asan tsan; do
    # Not built beside the plain build's tests when that build failed: built now.
    [ -f "build-$san.status" ] || san_build $san
    if [ "$(cat "build-$san.status")" = 0 ]; then
      run_suites "build-$san" --suite unit --suite stress --suite fidelity
    else
      cat "build-$san.setup.log"; tail -50 "build-$san.build.log"
      echo "run-all: the ${san^^} build failed"; status=1
    fi
    rm -f "build-$san.status"
  done
fi

python3 - "${logs[@]}" <<'PY' || status=1
import json, sys
passed = failed = skipped = 0
for path in sys.argv[1:]:
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line).get("result", "")
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif r == "SKIP":
                skipped += 1
            else:
                failed += 1
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed or passed == 0 else 0)
PY
exit $status
