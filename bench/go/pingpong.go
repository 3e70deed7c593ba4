// pingpong.go - two goroutines bounce a counter over two unbuffered channels
// (bench/pingpong.c). ops = messages; check = the final counter (= ops).
package main

import (
	"sync"
	"time"
)

func pingpong(args []int64) result {
	half := args[0] / 2
	ping, pong := make(chan int64), make(chan int64)
	var wg sync.WaitGroup
	var res int64
	t0 := time.Now()
	wg.Add(2)
	go func() {
		v := int64(0)
		for i := int64(0); i < half; i++ {
			v++
			ping <- v
			v = <-pong
		}
		res = v
		wg.Done()
	}()
	go func() {
		for i := int64(0); i < half; i++ {
			v := <-ping
			pong <- v + 1
		}
		wg.Done()
	}()
	wg.Wait()
	return result{ops: 2 * half, dur: time.Since(t0), check: uint64(res)}
}
