#!/usr/bin/env bash
# spin-parking.sh - model-checks parking.pml (the runtime's park/unpark protocol) with spin; TAP output.
#
# Usage: spin-parking.sh safety|liveness SPIN CC [CC-ARGS...]
#   safety:   the correct model, as Go's proc.go has it and with -DWSR_RUNTIME as runtime/proc.c has
#             it: exhaustive safety search (assertions, invalid end states), 0 errors; the -DBROKEN
#             -DBROKEN_NEEDSPINNING and -DTSO_TAIL variants, breadth-first: spin must find the lost
#             wakeup (stranded==0); the shortest counter-example's length is printed.
#   liveness: both correct models, non-progress-cycle search (pan.c -DNP, ./pan -l): 0 errors.
# Extra spin options for a soak run (e.g. "-DWORK=3 -DTHREADS=7") come from WSR_SPIN_DEFINES, extra
# pan.c compile options (e.g. "-DCOLLAPSE" or "-DBITSTATE") from WSR_PAN_CFLAGS, and options for the
# exhaustive runs of pan (e.g. "-w33" for a 1 GiB bitstate array) from WSR_PAN_FLAGS.
# Every pan run prints its state counts as TAP comments. Everything happens in a temporary directory.
# The script ends by returning from main, not by exit inside a compound command, so that bash
# itself leaks nothing under `meson test --setup valgrind` (do not edit it while it runs: bash
# reads scripts as it goes).
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
	if ! "${cc[@]}" -O2 -w "${copts[@]}" "${pan_cflags[@]}" -o "pan-$name" pan.c >> "$name.build" 2>&1; then
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
	if build "$name" "$define" -- -O0 -DSAFETY -DBFS; then
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

# verify NAME WHAT SPIN-OPTIONS...: an exhaustive safety search must end with 0 errors.
verify() {
	local name=$1 what=$2
	shift 2
	if build "$name" "$@" -- -DSAFETY; then
		"./pan-$name" -m100000 "${pan_flags[@]}" > "$name.out" 2>&1
		report "$name"
		if complete "$name" && grep -Eq 'invalid end states[[:space:]]+\+' "$name.out"; then
			ok "$what"
		else
			sed 's/^/# /' "$name.out"
			not_ok "$what"
		fi
	else
		not_ok "$what (spin -a or cc failed)"
	fi
}

# progress NAME WHAT SPIN-OPTIONS...: a non-progress-cycle search must end with 0 errors.
progress() {
	local name=$1 what=$2
	shift 2
	if build "$name" "$@" -- -DNP; then
		"./pan-$name" -l -m100000 "${pan_flags[@]}" > "$name.out" 2>&1
		report "$name"
		if complete "$name" && grep -Eq 'non-progress cycles[[:space:]]+\+' "$name.out"; then
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
	echo "1..5"
	verify go "parking.pml (Go's proc.go protocol): exhaustive safety search, no lost wakeup, 0 errors"
	verify wsr "parking.pml -DWSR_RUNTIME (runtime/proc.c's capped re-join): exhaustive safety search, 0 errors" \
		-DWSR_RUNTIME
	counterexample broken -DBROKEN "re-check before dropping nmspinning"
	counterexample broken-needspinning -DBROKEN_NEEDSPINNING "no needspinning"
	counterexample tso-tail -DTSO_TAIL "runqput's tail store not seq_cst, on x86-TSO"
}

liveness() {
	echo "1..2"
	progress go-np "parking.pml: no non-progress cycle (every runnable G eventually runs), 0 errors"
	progress wsr-np "parking.pml -DWSR_RUNTIME: no non-progress cycle, 0 errors" -DWSR_RUNTIME
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
	read -r -a pan_cflags <<< "${WSR_PAN_CFLAGS:-}"
	read -r -a pan_flags <<< "${WSR_PAN_FLAGS:-}"
	if ! work=$(mktemp -d "${TMPDIR:-/tmp}/wsr-spin.XXXXXX") || ! cp "$model" "$work/"; then
		echo "Bail out! cannot set up a temporary directory"
		return 1
	fi
	echo "# $("$spin" -V 2>&1 | head -1); model $model; $mode${defines[*]:+; ${defines[*]}}${pan_cflags[*]:+; pan.c ${pan_cflags[*]}}${pan_flags[*]:+; pan ${pan_flags[*]}}"
	cd "$work" && "$mode"
	cd / && rm -rf "$work"
	return $failed
}

main "$@"
