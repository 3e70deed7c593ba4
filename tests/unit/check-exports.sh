#!/bin/sh
# check-exports.sh LIB - fails if the shared library exports anything but wsr_* symbols
# (and the version node): the three visibility layers of STYLE.md hold.
set -eu
lib=$1
bad=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v -E '^(wsr_[a-z0-9_]+(@@?WSR_0\.1)?|WSR_0\.1)$' || true)
if [ -n "$bad" ]; then
  echo "libwsr exports symbols outside the public API:"
  echo "$bad"
  exit 1
fi
n=$(nm -D --defined-only "$lib" | grep -c ' wsr_' || true)
echo "libwsr exports $n wsr_* symbols and nothing else"
