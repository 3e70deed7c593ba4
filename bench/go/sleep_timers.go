// sleep_timers.go - NG goroutines each sleep SLEEP_NS, SLEEPS times, and
// record each oversleep (bench/sleep_timers.c): wakeups/s, p50 and p99.
package main

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

func sleepTimers(args []int64) result {
	ng, sleeps, sleepNs := args[0], args[1], args[2]
	lat := make([]int64, ng*sleeps)
	var wg sync.WaitGroup
	var recorded uint64
	t0 := time.Now()
	wg.Add(int(ng))
	for g := int64(0); g < ng; g++ {
		go func(mine []int64) {
			for i := range mine {
				s := time.Now()
				time.Sleep(time.Duration(sleepNs))
				mine[i] = int64(time.Since(s)) - sleepNs
			}
			atomic.AddUint64(&recorded, uint64(len(mine)))
			wg.Done()
		}(lat[g*sleeps : (g+1)*sleeps])
	}
	wg.Wait()
	d := time.Since(t0)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	n := int64(len(lat))
	return result{ops: n, dur: d, check: atomic.LoadUint64(&recorded),
		extra: fmt.Sprintf("wakeups_per_sec=%.0f oversleep_p50_us=%.1f oversleep_p99_us=%.1f",
			float64(n)/d.Seconds(), float64(lat[n/2])/1e3, float64(lat[n*99/100])/1e3)}
}
