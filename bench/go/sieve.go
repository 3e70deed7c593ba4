// sieve.go - the concurrent prime sieve up to the NPRIMES-th prime
// (bench/sieve.c). check = that prime; ops = channel messages needed for the
// numbers 2..p (a number whose smallest prime factor is the j-th prime
// travels over j channels), computed after the timed region.
package main

import "time"

func generate(ch chan<- int64) {
	for i := int64(2); ; i++ {
		ch <- i
	}
}

func filter(in <-chan int64, out chan<- int64, prime int64) {
	for {
		i := <-in
		if i%prime != 0 {
			out <- i
		}
	}
}

func sieveMessages(p int64) int64 {
	spf := make([]int32, p+1)
	var total int64
	var k int32
	for n := int64(2); n <= p; n++ {
		if spf[n] == 0 {
			k++
			for m := n; m <= p; m += n {
				if spf[m] == 0 {
					spf[m] = k
				}
			}
		}
		total += int64(spf[n])
	}
	return total
}

func sieve(args []int64) result {
	nprimes := args[0]
	var prime int64
	t0 := time.Now()
	ch := make(chan int64)
	go generate(ch)
	for i := int64(0); i < nprimes; i++ {
		prime = <-ch
		ch1 := make(chan int64)
		go filter(ch, ch1, prime)
		ch = ch1
	}
	d := time.Since(t0)
	return result{ops: sieveMessages(prime), dur: d, check: uint64(prime)}
}
