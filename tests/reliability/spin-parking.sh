#!/usr/bin/env bash
# spin-parking.sh - model-checks parking.pml (the runtime's park/unpark protocol) with spin; TAP output.
#
# Usage: spin-parking.sh safety|liveness SPIN CC [CC-ARGS...]
#   safety:   the correct model, exhaustive safety search (assertions, invalid end states): 0 errors;
#             the -DBROKEN and -DBROKEN_NEEDSPINNING variants, breadth-first: spin must find the lost
#             wakeup (stranded==0); the shortest counter-example's length is printed.
#   liveness: the correct model, non-progress-cycle search (pan.c -DNP, ./pan -l): 0 errors.
# Extra spin options for a soak run (e.g. "-DWORK=3 -DTHREADS=7") come from WSR_SPIN_DEFINES.
# Every pan run prints its state counts as TAP comments. Everything happens in a temporary directory.
# The script ends by returning from main, not by exit inside a compound command, so that bash
# itself leaks nothing under `meson test --setup valgrind`.
set -uo pipefail

n=0
failed=0

ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1))
	failed=1
	echo "not ok $n - $1"
}

# field REGEX FILE: the group REGEX captures on the first line of pan's output that it matches.
field() {
	sed -nE "s/.*$1.*/\\1/p" "$2" | head -1
}

# build NAME SPIN-OPTIONS... -- CC-OPTIONS...: spin -a, then compile pan-NAME; output in NAME.build.
build() {
	local name=$1
	local sopts=() copts=()
	shift
	while [ "$1" != "--" ]; do
		sopts+=("$1")
		shift
	done
	shift
	copts=("$@")
	rm -f pan.c pan.h pan.m pan.b pan.t pan.p
	if ! "$spin" "${defines[@]}" "${sopts[@]}" -a parking.pml > "$name.build" 2>&1; then
		sed 's/^/# /' "$name.build"
		return 1
	fi
	if ! "${cc[@]}" -O2 -w "${copts[@]}" -o "pan-$name" pan.c >> "$name.build" 2>&1; then
		sed 's/^/# /' "$name.build" | tail -20
		return 1
	fi
}

# report NAME: the figures of pan's output NAME.out, as a TAP comment.
report() {
	local out=$1.out
	echo "# $1: $(field '^ *([0-9.e+]+) states, stored' "$out") states stored," \
		"$(field '^ *([0-9.e+]+) transitions' "$out") transitions," \
		"depth reached $(field 'depth reached ([0-9]+)' "$out"), errors: $(field 'errors: ([0-9]+)' "$out")," \
		"state vector $(field 'State-vector ([0-9]+) byte' "$out") bytes"
}

# complete NAME: pan searched the whole state space and found 0 errors.
complete() {
	local out=$1.out
	[ "$(field 'errors: ([0-9]+)' "$out")" = 0 ] &&
		! grep -q 'Search not completed\|max search depth too small\|out of memory' "$out"
}

# counterexample NAME DEFINE WHAT: spin must find the lost wakeup in the variant DEFINE; BFS gives
# the shortest counter-example.
counterexample() {
	local name=$1 define=$2 what="parking.pml $2 ($3): spin finds the lost wakeup (stranded==0)"
	if build "$name" "$define" -- -DSAFETY -DBFS; then
		"./pan-$name" > "$name.out" 2>&1
		report "$name"
		if grep -q 'assertion violated (stranded==0)' "$name.out"; then
			echo "# $name: shortest counter-example (BFS): $(field 'stranded==0\) \(at depth ([0-9]+)' "$name.out") steps"
			ok "$what"
		else
			sed 's/^/# /' "$name.out"
			not_ok "$what"
		fi
	else
		not_ok "$what (spin -a or cc failed)"
	fi
}

safety() {
	echo "1..3"
	local what="parking.pml: exhaustive safety search, no lost wakeup, 0 errors"
	if build correct -- -DSAFETY; then
		./pan-correct -m100000 > correct.out 2>&1
		report correct
		if complete correct && grep -Eq 'invalid end states[[:space:]]+\+' correct.out; then
			ok "$what"
		else
			sed 's/^/# /' correct.out
			not_ok "$what"
		fi
	else
		not_ok "$what (spin -a or cc failed)"
	fi

	counterexample broken -DBROKEN "re-check before dropping nmspinning"
	counterexample broken-needspinning -DBROKEN_NEEDSPINNING "no needspinning"
}

liveness() {
	echo "1..1"
	local what="parking.pml: no non-progress cycle (every runnable G eventually runs), 0 errors"
	if build liveness -- -DNP; then
		./pan-liveness -l -m100000 > liveness.out 2>&1
		report liveness
		if complete liveness && grep -Eq 'non-progress cycles[[:space:]]+\+' liveness.out; then
			ok "$what"
		else
			sed 's/^/# /' liveness.out
			not_ok "$what"
		fi
	else
		not_ok "$what (spin -a or cc failed)"
	fi
}

main() {
	local mode=${1:-}
	if [ $# -lt 3 ] || { [ "$mode" != safety ] && [ "$mode" != liveness ]; }; then
		echo "Bail out! usage: spin-parking.sh safety|liveness SPIN CC [CC-ARGS...]"
		return 1
	fi
	spin=$2
	shift 2
	cc=("$@")

	local here model work
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	model=$here/parking.pml
	read -r -a defines <<< "${WSR_SPIN_DEFINES:-}"
	if ! work=$(mktemp -d "${TMPDIR:-/tmp}/wsr-spin.XXXXXX") || ! cp "$model" "$work/"; then
		echo "Bail out! cannot set up a temporary directory"
		return 1
	fi
	echo "# $("$spin" -V 2>&1 | head -1); model $model; $mode${defines[*]:+; ${defines[*]}}"
	cd "$work" && "$mode"
	cd / && rm -rf "$work"
	return $failed
}

main "$@"
