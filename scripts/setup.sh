#!/usr/bin/env bash
# scripts/setup.sh - the README's two set-up commands (idempotent, Debian 12, as root).
#
#   bash scripts/setup.sh demo   install what is missing, build, trace an example, print its report
#   bash scripts/setup.sh test   install what is missing, build, run every test suite; ends with
#                                "N passed, N failed" from meson-logs/testlog.json, non-zero on failure
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
mode=${1:-}

# Packages the build, the tests and the benchmarks need; only missing ones are installed.
packages=(meson ninja-build pkg-config gcc g++ clang clang-tools libclang-rt-14-dev libomp-14-dev
  liblttng-ust-dev lttng-tools babeltrace2 libbabeltrace2-dev libsqlite3-dev sqlite3
  libmicrohttpd-dev libhttp-parser-dev wrk valgrind spin golang-go python3 python3-yaml jq chromium scdoc)

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # Node.js may come from elsewhere than Debian (with its own npm, which
  # conflicts with Debian's npm package): only install it when it is absent.
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# build DIR [meson options...]: configure once, reconfigure if options changed, then build.
build() {
  local dir=$1; shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" "$@" >/dev/null
  else
    meson configure "$dir" "$@" >/dev/null
  fi
  ninja -C "$dir" >/dev/null
}

case "$mode" in
demo)
  install_missing
  build build
  # A fresh ./wsr-traces/skewed-<time>/ each run (wsr run refuses a non-empty --out).
  exec ./build/analyzer/wsr run -- ./build/examples/skewed
  ;;
test)
  install_missing
  exec bash "$here/tests/run-all.sh"
  ;;
*)
  echo "usage: bash scripts/setup.sh demo|test" >&2
  exit 2
  ;;
esac
