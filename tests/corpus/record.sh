#!/bin/sh
# tests/corpus/record.sh - records the corpus traces listed in traces.txt with the
# programs of BUILD_DIR and packs them into tests/corpus/traces.tar.xz (README.md).
# Usage: tests/corpus/record.sh BUILD_DIR [NAME...]   (default: every trace)
#   With NAMEs, only those traces are recorded again; the others are kept from the
#   existing tarball. Then run regen.sh, and say in the commit message why.
# Invariants: the tarball is reproducible from the same trace files (sorted names,
#   fixed mtime and owner); a program that `wsr run` reports as failing to record
#   (exit 1) stops the script; the program's own exit status is recorded as it is.
# Concurrency: one recording at a time; `wsr run` starts a session daemon if none runs.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [NAME...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
shift
wsr=$build/analyzer/wsr
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
if [ -f "$here/traces.tar.xz" ]; then
	tar -xJf "$here/traces.tar.xz" -C "$stage"
fi
grep -v '^#' "$here/traces.txt" | grep -v '^[[:space:]]*$' |
while read -r name procs mode subdir prog args; do
	if [ $# -gt 0 ]; then
		case " $* " in *" $name "*) ;; *) continue ;; esac
	fi
	case $mode in
	lossless) opts=--lossless ;;
	lossy) opts="--subbuf-size 4k --num-subbuf 2" ;;
	*) echo "$0: $name: unknown mode $mode" >&2; exit 2 ;;
	esac
	rm -rf "${stage:?}/$name"
	# shellcheck disable=SC2086  # $opts and $args are word lists
	(cd "$build/$subdir" && WSRMAXPROCS=$procs "$wsr" run --no-ingest $opts \
		--out "$stage/$name" -- "./$prog" $args >/dev/null) || rc=$?
	[ "${rc:-0}" -ne 1 ] || { echo "$0: $name: recording failed" >&2; exit 1; }
	rc=0
	echo "$name: $(tail -c 400 "$stage/$name/wsr-run.json" | tr -d '\n ' | head -c 200)"
done
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --mode=u+rw,go+r \
	-C "$stage" -cf - . | xz -9e -T1 > "$here/traces.tar.xz.new"
mv "$here/traces.tar.xz.new" "$here/traces.tar.xz"
ls -l "$here/traces.tar.xz"
