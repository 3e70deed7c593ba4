// yield.go - 4 goroutines per P call runtime.Gosched until the round's
// YIELDS are spent, ROUNDS times (bench/yield.c). check = yields counted.
package main

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

func yielder(n int64, done *uint64, wg *sync.WaitGroup) {
	for i := int64(0); i < n; i++ {
		runtime.Gosched()
	}
	atomic.AddUint64(done, uint64(n))
	wg.Done()
}

func yield(args []int64) result {
	yields, rounds := args[0], args[1]
	ng := int64(4 * runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	var done uint64
	t0 := time.Now()
	for k := int64(0); k < rounds; k++ {
		wg.Add(int(ng))
		for i := int64(0); i < ng; i++ {
			n := yields / ng
			if i < yields%ng {
				n++
			}
			go yielder(n, &done, &wg)
		}
		wg.Wait()
	}
	return result{ops: yields * rounds, dur: time.Since(t0), check: atomic.LoadUint64(&done)}
}
