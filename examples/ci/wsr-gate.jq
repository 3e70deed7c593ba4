# ci/wsr-gate.jq - the regressions of a run against the baseline, read from
# `wsr diff BASELINE NEW --format json` (docs/ci.md). Prints one line when
# there is none; otherwise prints each on stderr and exits 1 (jq's halt_error).
# Each rule: a metric of `wsr check --list`, the test, and the message.
# Only rules that hold run after run on the same program belong here: counts
# the program decides. Timed figures (latency_p99_us, work_ms, parallelism)
# vary with the machine's load; gate on them with a wide margin, if at all:
#   (.metrics.parallelism | select(.new < .base * 0.5)
#     | "parallelism \(.new) is under half the baseline's \(.base)"),
[
  (.metrics.gomaxprocs | select(.new != .base)
    | "gomaxprocs \(.new) differs from the baseline's \(.base): record the baseline again"),
  (.metrics.gs | select(.new > .base * 1.1)
    | "\(.new) Gs, more than 10% over the baseline's \(.base)")
]
| if length == 0 then "wsr gate: no regression against the baseline"
  else map("wsr gate: FAIL: " + .) | join("\n") + "\n" | halt_error(1) end
