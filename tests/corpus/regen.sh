#!/bin/sh
# tests/corpus/regen.sh - rewrites tests/corpus/expected/ from BUILD_DIR's analyzer, ON
# PURPOSE: only when an output is meant to change. The commit that carries the new
# expected files must say why each changed output is right (README.md).
# Usage: tests/corpus/regen.sh BUILD_DIR
set -eu
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
ninja -C "$1" analyzer/wsr analyzer/wsr_sqlite.so >/dev/null
WSR_SQLITE_EXT=$(cd "$1" && pwd)/analyzer/wsr_sqlite.so
export WSR_SQLITE_EXT
exec python3 "$here/corpus.py" "$1/analyzer/wsr" --regen
