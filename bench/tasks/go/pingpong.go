package main

import "time"

// pingpong: n round trips between two goroutines over two unbuffered channels; with
// args[1] == 2 the pinger is the main goroutine (pingpong_main).
func pingpong(args []int64) {
	n, fromMain := args[0], args[1] == 2
	ping, pong := make(chan int64), make(chan int64)
	echoed := make(chan int64, 1)
	go func() {
		var sum int64
		for v := range ping {
			sum += v
			pong <- v
		}
		echoed <- sum
	}()
	type outcome struct {
		sum     int64
		seconds float64
	}
	pinged := make(chan outcome, 1)
	pinger := func() {
		var sum int64
		start := time.Now()
		for i := int64(1); i <= n; i++ {
			ping <- i
			sum += <-pong
		}
		seconds := time.Since(start).Seconds()
		close(ping)
		pinged <- outcome{sum, seconds}
	}
	if fromMain {
		pinger()
	} else {
		go pinger()
	}
	back := <-pinged
	echo := <-echoed
	want := n * (n + 1) / 2
	check(back.sum == want && echo == want, "sums %d and %d, expected %d", back.sum, echo, want)
	name := "pingpong"
	if fromMain {
		name = "pingpong_main"
	}
	result(name, kv{"n", n}, kv{"workers", workers()}, kv{"seconds", back.seconds},
		kv{"ns_per_roundtrip", back.seconds * 1e9 / float64(n)}, kv{"checksum", back.sum})
}
