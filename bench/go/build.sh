#!/bin/sh
# build.sh - builds the Go benchmarks: build.sh SRC_DIR OUTPUT WORK_DIR [PACKAGE].
# PACKAGE is the module's package to build (default ".", the workloads; "./httpd": the HTTP server).
# GOCACHE/GOPATH live under WORK_DIR (the build dir), so it works as root in CI; no downloads.
set -eu
src=$1 out=$2 work=$3 pkg=${4:-.}
mkdir -p "$work/gocache" "$work/gopath" "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
cd "$src"
exec env GOCACHE="$work/gocache" GOPATH="$work/gopath" GOFLAGS= GOPROXY=off GO111MODULE=on \
	CGO_ENABLED=0 go build -trimpath -o "$out" "$pkg"
