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

// blockedRound: count goroutines each blocked receiving from a fresh channel; measure
// runs while they all wait, then the channel is closed and each must see it closed.
// It returns the spawn and release times, what measure returned and how many saw it.
func blockedRound(count int64, measure func() int64) (float64, int64, float64, int64) {
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

	start := time.Now()
	for i := int64(0); i < count; i++ {
		go waiter()
	}
	for i := int64(0); i < count; i++ {
		<-ready
	}
	time.Sleep(50 * time.Millisecond)
	spawnSeconds := time.Since(start).Seconds()
	measured := measure()

	start = time.Now()
	close(gate)
	var closedSeen int64
	for i := int64(0); i < count; i++ {
		closedSeen += <-done
	}
	return spawnSeconds, measured, time.Since(start).Seconds(), closedSeen
}

func liveKiB() int64 {
	runtime.GC()
	return residentKiB()
}

// blocked: as blocked.lua, a first round of a thousand goroutines before the base is
// read (what the runtime pays once), then n goroutines measured while they wait.
func blocked(args []int64) {
	n := args[0]
	warm := n
	if warm > 1000 {
		warm = 1000
	}
	blockedRound(warm, func() int64 { return 0 })
	baseKiB := liveKiB()
	spawnSeconds, blockedKiB, releaseSeconds, closedSeen := blockedRound(n, liveKiB)

	check(closedSeen == n, "%d of %d goroutines saw the channel closed", closedSeen, n)
	result("blocked", kv{"n", n}, kv{"workers", workers()},
		kv{"rss_base_kib", baseKiB}, kv{"rss_blocked_kib", blockedKiB},
		kv{"bytes_per_task", float64((blockedKiB-baseKiB)*1024) / float64(n)},
		kv{"spawn_seconds", spawnSeconds}, kv{"release_seconds", releaseSeconds},
		kv{"checksum", closedSeen})
}
