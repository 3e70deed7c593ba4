#!/bin/sh
# example-skewed-steals.sh SKEWED - the skewed example (one producer G, CPU-bound Gs)
# at 2 and 4 Ps: its result is right and the runtime's own stats show steals.
set -eu
exe=$1
for p in 2 4; do
  # 200 Gs: fewer than a ring holds, so nothing spills to the global queue
  # and the other Ps can only steal.
  out=$(WSRMAXPROCS=$p WSRDEBUG=stats=1 "$exe" 200 200000 2>&1)
  echo "$out" | grep -q '^ran = 200$' || { echo "P=$p: wrong result:"; echo "$out"; exit 1; }
  steals=$(echo "$out" | sed -n 's/.* steal=\([0-9]*\) .*/\1/p')
  echo "P=$p: steal=$steals ($(echo "$out" | grep -o 'stolen=[0-9]*'))"
  [ "${steals:-0}" -gt 0 ] || { echo "P=$p: no steals"; echo "$out"; exit 1; }
done
