package main

import "time"

const spawnBatch = 1000

// spawn: n goroutines in batches of 1,000, each awaited through its own one-slot result
// channel (the counterpart of a task handle's await); each returns its argument. The
// driver is a goroutine, or with args[1] == 2 the main goroutine (spawn_main).
func spawn(args []int64) {
	n, fromMain := args[0], args[1] == 2
	type outcome struct {
		sum     int64
		seconds float64
	}
	done := make(chan outcome, 1)
	driver := func() {
		sum, seconds := spawnDriver(n)
		done <- outcome{sum, seconds}
	}
	if fromMain {
		driver()
	} else {
		go driver()
	}
	o := <-done
	sum, seconds := o.sum, o.seconds
	name := "spawn"
	if fromMain {
		name = "spawn_main"
	}
	check(sum == n*(n+1)/2, "sum %d, expected %d", sum, n*(n+1)/2)
	result(name, kv{"n", n}, kv{"workers", workers()}, kv{"seconds", seconds},
		kv{"ns_per_task", seconds * 1e9 / float64(n)}, kv{"checksum", sum})
}

func spawnDriver(n int64) (int64, float64) {
	futures := make([]chan int64, spawnBatch)
	var sum, started int64
	start := time.Now()
	for started < n {
		count := n - started
		if count > spawnBatch {
			count = spawnBatch
		}
		for i := int64(0); i < count; i++ {
			f := make(chan int64, 1)
			futures[i] = f
			go func(x int64) { f <- x }(started + i + 1)
		}
		for i := int64(0); i < count; i++ {
			sum += <-futures[i]
		}
		started += count
	}
	return sum, time.Since(start).Seconds()
}
