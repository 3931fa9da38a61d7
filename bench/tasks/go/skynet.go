package main

import (
	"fmt"
	"os"
	"time"
)

const fanOut = 10

// skynet: each leaf sends its number on its parent's unbuffered channel; each inner node
// spawns fanOut children, sums what they send and sends the sum up.
func skynetNode(out chan<- int64, num, size int64) {
	if size == 1 {
		out <- num
		return
	}
	children := make(chan int64)
	step := size / fanOut
	for i := int64(0); i < fanOut; i++ {
		go skynetNode(children, num+i*step, step)
	}
	var sum int64
	for i := 0; i < fanOut; i++ {
		sum += <-children
	}
	out <- sum
}

func skynet(args []int64) {
	n := args[0]
	leaves := int64(1)
	for leaves < n {
		leaves *= fanOut
	}
	if leaves != n {
		fmt.Fprintf(os.Stderr, "n must be a power of 10, got %d\n", n)
		os.Exit(2)
	}
	start := time.Now()
	root := make(chan int64)
	go skynetNode(root, 0, n)
	sum := <-root
	seconds := time.Since(start).Seconds()

	check(sum == n*(n-1)/2, "sum %d, expected %d", sum, n*(n-1)/2)
	tasks := (n*fanOut - 1) / (fanOut - 1)
	result("skynet", kv{"n", n}, kv{"tasks", tasks}, kv{"workers", workers()},
		kv{"seconds", seconds}, kv{"ns_per_task", seconds * 1e9 / float64(tasks)}, kv{"checksum", sum})
}
