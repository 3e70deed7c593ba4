// skewed.go - one producer goroutine spawns COUNT goroutines of WORK LCG
// steps each, ROUNDS times (bench/skewed.c). check = sum of final states.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

func skewedWorker(seed uint64, work int64, sum *uint64, wg *sync.WaitGroup) {
	x := seed
	for i := int64(0); i < work; i++ {
		x = x*lcgA + lcgC
	}
	atomic.AddUint64(sum, x)
	wg.Done()
}

func skewed(args []int64) result {
	count, work, rounds := args[0], args[1], args[2]
	var wg sync.WaitGroup
	var sum uint64
	t0 := time.Now()
	for k := int64(0); k < rounds; k++ {
		wg.Add(int(count))
		for i := int64(0); i < count; i++ {
			go skewedWorker(uint64(k*count+i+1), work, &sum, &wg)
		}
		wg.Wait()
	}
	d := time.Since(t0)
	return result{ops: count * rounds, dur: d, check: atomic.LoadUint64(&sum),
		extra: fmt.Sprintf("work=%d", work)}
}
