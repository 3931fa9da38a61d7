package main

import "time"

// The 64-bit LCG of parallel.lua (wrapping arithmetic, as Lua integers wrap).
const (
	lcgMul uint64 = 6364136223846793005
	lcgAdd uint64 = 1442695040888963407
)

func stepMany(x uint64, steps int64) uint64 {
	for i := int64(0); i < steps; i++ {
		x = x*lcgMul + lcgAdd
	}
	return x
}

// jumpAhead gives x after `steps` steps in O(log steps).
func jumpAhead(x uint64, steps int64) uint64 {
	accMul, accAdd, curMul, curAdd := uint64(1), uint64(0), lcgMul, lcgAdd
	for ; steps > 0; steps >>= 1 {
		if steps&1 == 1 {
			accMul, accAdd = accMul*curMul, accAdd*curMul+curAdd
		}
		curMul, curAdd = curMul*curMul, (curMul+1)*curAdd
	}
	return accMul*x + accAdd
}

// parallel: `count` independent goroutines, each stepping the LCG n times.
func parallel(args []int64) {
	n, count := args[0], args[1]
	futures := make([]chan uint64, count)
	start := time.Now()
	for i := range futures {
		f := make(chan uint64, 1)
		futures[i] = f
		go func(seed uint64) { f <- stepMany(seed, n) }(uint64(i + 1))
	}
	results := make([]uint64, count)
	for i, f := range futures {
		results[i] = <-f
	}
	seconds := time.Since(start).Seconds()

	var checksum uint64
	for i, r := range results {
		want := jumpAhead(uint64(i+1), n)
		check(r == want, "task %d gave %d, expected %d", i+1, int64(r), int64(want))
		checksum ^= r
	}
	result("parallel", kv{"n", n}, kv{"tasks", count}, kv{"workers", workers()},
		kv{"seconds", seconds}, kv{"checksum", int64(checksum)})
}
