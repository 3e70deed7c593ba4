#!/bin/sh
# run.sh - one command for the issue 8 benchmarks: bench/run.sh [--quick] [--runs N] [--builddir DIR] ...
# Builds release trees under /tmp/wsr-bench (traced and -Dtracing=disabled), runs wsr, Go and LLVM
# OpenMP alternately at 1 and 2 Ps, and prints medians, ratios and markdown tables (see
# docs/performance.md). The logic is in run.py (python3 is already required by meson).
exec python3 "$(dirname "$0")/run.py" "$@"
