// main.go - the Go side of the wsr benchmarks (issue 8): the same workloads
// as bench/*.c, one per file, run by name, standard library only.
//
// Usage: wsrbench-go [-trace FILE] WORKLOAD [ARGS...]; ARGS as in the C
// program of the same name. GOMAXPROCS sets the Ps. With -trace, the
// runtime/trace recording is started before the timed region and stopped
// after it, so secs includes the tracing cost and nothing else extra.
//
// Invariants: prints exactly one line in the format of bench/bench.h:
// name=W impl=go procs=N ops=K secs=S ops_per_sec=R check=C [extra...].
// Concurrency: each workload joins all its goroutines (sieve excepted,
// whose filters are abandoned at exit as in the classic program).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/trace"
	"strconv"
	"time"
)

// The LCG of the skewed workload (Knuth's MMIX constants), as in bench.h.
const (
	lcgA = 6364136223846793005
	lcgC = 1442695040888963407
)

type result struct {
	ops   int64
	dur   time.Duration
	check uint64
	extra string
}

type workload struct {
	run  func(args []int64) result
	defs []int64
}

var workloads = map[string]workload{
	"spawn_tree":   {spawnTree, []int64{29}},
	"spawn_flat":   {spawnFlat, []int64{1000000, 3}},
	"pingpong":     {pingpong, []int64{6000000}},
	"skewed":       {skewed, []int64{200000, 512, 4}},
	"sieve":        {sieve, []int64{3000}},
	"yield":        {yield, []int64{1000000, 20}},
	"sleep_timers": {sleepTimers, []int64{10000, 20, 1000000}},
}

func usage() {
	fmt.Fprintf(os.Stderr, "usage: wsrbench-go [-trace FILE] WORKLOAD [ARGS...]\n")
	os.Exit(2)
}

func main() {
	traceFile := flag.String("trace", "", "write a runtime/trace of the timed region to `FILE`")
	flag.Usage = usage
	flag.Parse()
	if flag.NArg() < 1 {
		usage()
	}
	name := flag.Arg(0)
	w, ok := workloads[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "wsrbench-go: unknown workload %q\n", name)
		os.Exit(2)
	}
	args := append([]int64(nil), w.defs...)
	for i, a := range flag.Args()[1:] {
		v, err := strconv.ParseInt(a, 10, 64)
		if err != nil || v <= 0 || i >= len(args) {
			fmt.Fprintf(os.Stderr, "wsrbench-go: %s: bad argument %q\n", name, a)
			os.Exit(2)
		}
		args[i] = v
	}
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "wsrbench-go:", err)
			os.Exit(1)
		}
		if err := trace.Start(f); err != nil {
			fmt.Fprintln(os.Stderr, "wsrbench-go:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer trace.Stop()
	}
	r := w.run(args)
	secs := r.dur.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(r.ops) / secs
	}
	sep := ""
	if r.extra != "" {
		sep = " "
	}
	fmt.Printf("name=%s impl=go procs=%d ops=%d secs=%.6f ops_per_sec=%.0f check=%x%s%s\n",
		name, runtime.GOMAXPROCS(0), r.ops, secs, rate, r.check, sep, r.extra)
}
