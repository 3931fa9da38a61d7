package main

import "time"

const spawnBatch = 1000

// spawn: n goroutines in batches of 1,000, each awaited through its own one-slot result
// channel (the counterpart of a task handle's await); each returns its argument.
func spawn(args []int64) {
	n := args[0]
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
	seconds := time.Since(start).Seconds()

	check(sum == n*(n+1)/2, "sum %d, expected %d", sum, n*(n+1)/2)
	result("spawn", kv{"n", n}, kv{"workers", workers()}, kv{"seconds", seconds},
		kv{"ns_per_task", seconds * 1e9 / float64(n)}, kv{"checksum", sum})
}
