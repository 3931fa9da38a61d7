package main

import (
	"os"
	"regexp"
	"runtime"
	"strconv"
	"time"
)

var vmRSS = regexp.MustCompile(`VmRSS:\s*(\d+)\s*kB`)

func residentKiB() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		panic(err)
	}
	m := vmRSS.FindSubmatch(status)
	if m == nil {
		panic("no VmRSS in /proc/self/status")
	}
	v, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return v
}

// blocked: n goroutines each blocked receiving from one channel; resident memory before
// and while they wait, then the channel is closed and each must see it closed.
func blocked(args []int64) {
	n := args[0]
	gate := make(chan struct{})
	ready := make(chan struct{})
	done := make(chan int64)
	waiter := func() {
		ready <- struct{}{}
		_, ok := <-gate
		if ok {
			done <- 0
		} else {
			done <- 1
		}
	}

	runtime.GC()
	baseKiB := residentKiB()
	start := time.Now()
	for i := int64(0); i < n; i++ {
		go waiter()
	}
	for i := int64(0); i < n; i++ {
		<-ready
	}
	time.Sleep(50 * time.Millisecond)
	runtime.GC()
	spawnSeconds := time.Since(start).Seconds()
	blockedKiB := residentKiB()

	start = time.Now()
	close(gate)
	var closedSeen int64
	for i := int64(0); i < n; i++ {
		closedSeen += <-done
	}
	releaseSeconds := time.Since(start).Seconds()

	check(closedSeen == n, "%d of %d goroutines saw the channel closed", closedSeen, n)
	result("blocked", kv{"n", n}, kv{"workers", workers()},
		kv{"rss_base_kib", baseKiB}, kv{"rss_blocked_kib", blockedKiB},
		kv{"bytes_per_task", float64((blockedKiB-baseKiB)*1024) / float64(n)},
		kv{"spawn_seconds", spawnSeconds}, kv{"release_seconds", releaseSeconds},
		kv{"checksum", closedSeen})
}
