package main

import (
	"math"
	"sort"
	"sync/atomic"
	"time"
)

// timers: a goroutine sleeps 1 ms n times while `spinners` CPU-bound goroutines run;
// each sample is the sleep's wall time minus 1 ms.
func timers(args []int64) {
	n, spinnerCount := args[0], args[1]
	const sleep = time.Millisecond
	var stop atomic.Bool
	rounds := make(chan int64, spinnerCount)
	for i := int64(0); i < spinnerCount; i++ {
		go func() {
			x, r := uint64(1), int64(0)
			for !stop.Load() {
				x = stepMany(x, 1000)
				r++
			}
			sink.Add(x)
			rounds <- r
		}()
	}
	samples := make(chan []float64, 1)
	go func() {
		time.Sleep(20 * time.Millisecond)
		extra := make([]float64, n)
		for i := range extra {
			t0 := time.Now()
			time.Sleep(sleep)
			extra[i] = time.Since(t0).Seconds() - sleep.Seconds()
		}
		samples <- extra
	}()
	extra := <-samples
	stop.Store(true)
	var total int64
	for i := int64(0); i < spinnerCount; i++ {
		r := <-rounds
		check(r > 0, "a spinner never ran")
		total += r
	}

	sort.Float64s(extra)
	check(extra[0] > -1e-6, "a %v sleep ended %g s early", sleep, -extra[0])
	result("timers", kv{"n", n}, kv{"spinners", spinnerCount}, kv{"workers", workers()},
		kv{"p50_extra_ms", percentile(extra, 50) * 1e3},
		kv{"p99_extra_ms", percentile(extra, 99) * 1e3},
		kv{"max_extra_ms", extra[n-1] * 1e3}, kv{"spinner_rounds", total})
}

var sink atomic.Uint64 // keeps the spinners' arithmetic observable

// percentile is the nearest-rank percentile of a sorted slice.
func percentile(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}
