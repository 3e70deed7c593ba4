// spawn_flat.go - one goroutine spawns COUNT empty goroutines joined by a
// WaitGroup, ROUNDS times (bench/spawn_flat.c). Each goroutine bumps the
// round's counter (the check) and calls Done.
package main

import (
	"sync"
	"sync/atomic"
	"time"
)

func emptyG(wg *sync.WaitGroup, ran *int64) {
	atomic.AddInt64(ran, 1)
	wg.Done()
}

func spawnFlat(args []int64) result {
	count, rounds := args[0], args[1]
	var wg sync.WaitGroup
	var total uint64
	t0 := time.Now()
	for k := int64(0); k < rounds; k++ {
		var ran int64
		wg.Add(int(count))
		for i := int64(0); i < count; i++ {
			go emptyG(&wg, &ran)
		}
		wg.Wait()
		total += uint64(atomic.LoadInt64(&ran))
	}
	return result{ops: count * rounds, dur: time.Since(t0), check: total}
}
