// spawn_tree.go - fib(N) where every call is a goroutine and each call's two
// results come back through its own buffered channel of capacity 2
// (bench/spawn_tree.c). ops = 2*fib(N+1) - 1 goroutines; check = fib(N).
package main

import "time"

func fibG(n int64, out chan<- int64) {
	if n < 2 {
		out <- n
		return
	}
	ch := make(chan int64, 2)
	go fibG(n-1, ch)
	go fibG(n-2, ch)
	x := <-ch
	y := <-ch
	out <- x + y
}

func spawnTree(args []int64) result {
	n := args[0]
	out := make(chan int64, 1)
	t0 := time.Now()
	go fibG(n, out)
	r := <-out
	d := time.Since(t0)
	a, b := int64(0), int64(1)
	for i := int64(0); i < n+1; i++ {
		a, b = b, a+b
	}
	return result{ops: 2*a - 1, dur: d, check: uint64(r)}
}
