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

# run_suites DIR PROCESSES MESON_TEST_OPTIONS...
run_suites() {
  local dir=$1 procs=$2; shift 2
  rm -f "$dir/meson-logs/testlog.json"
  meson test -C "$dir" --print-errorlogs --num-processes "$procs" "$@" || status=1
  [ -f "$dir/meson-logs/testlog.json" ] && logs+=("$dir/meson-logs/testlog.json")
}

if setup_build build CC=gcc -- -Dwerror=true -Dbuildtype=debugoptimized; then
  # Three at a time on the 2-core machine: many of the plain build's tests mostly wait (on
  # lttng, on `wsr run`'s bounds, on sleeps); this phase went 594 s -> 515 s on a fresh clone,
  # 204 of 204 passing either way. The sanitizer builds' tests are CPU-bound: two there.
  run_suites build 3 --no-suite soak
else
  echo "run-all: the gcc build failed"; status=1
fi

if [ "${WSR_SKIP_SANITIZERS:-0}" != 1 ]; then
  if setup_build build-asan CC=clang -- -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false -Dviewer=disabled; then
    run_suites build-asan 2 --suite unit --suite stress --suite fidelity
  else
    echo "run-all: the ASan build failed"; status=1
  fi
  if setup_build build-tsan CC=clang -- -Dwerror=true -Db_sanitize=thread -Db_lundef=false -Dviewer=disabled; then
    run_suites build-tsan 2 --suite unit --suite stress --suite fidelity
  else
    echo "run-all: the TSan build failed"; status=1
  fi
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
