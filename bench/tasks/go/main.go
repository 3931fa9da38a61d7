// Command taskbench runs the Go versions of the Weft task benchmarks (bench/tasks/*.lua):
// the same workloads, sizes and checks, and the same RESULT line. GOMAXPROCS plays the
// part of weft's --workers.
//
//	taskbench skynet|spawn|pingpong|blocked|parallel|timers [size...]
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

type workload struct {
	run      func(args []int64)
	defaults []int64
}

var workloads = map[string]workload{
	"skynet":   {skynet, []int64{1000000}},
	"spawn":    {spawn, []int64{1000000, 1}},
	"pingpong": {pingpong, []int64{1000000, 1}},
	"blocked":  {blocked, []int64{1000000}},
	"parallel": {parallel, []int64{50000000, 8}},
	"timers":   {timers, []int64{500, 4}},
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	w, ok := workloads[os.Args[1]]
	if !ok {
		usage()
	}
	args := append([]int64(nil), w.defaults...)
	for i, s := range os.Args[2:] {
		if i >= len(args) {
			usage()
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v <= 0 {
			fail("argument %d must be a positive integer, got %q", i+1, s)
		}
		args[i] = v
	}
	w.run(args)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: taskbench skynet|spawn|pingpong|blocked|parallel|timers [size...]")
	os.Exit(2)
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "checksum failed: "+format+"\n", a...)
	os.Exit(1)
}

func check(cond bool, format string, a ...any) {
	if !cond {
		fail(format, a...)
	}
}

// kv is one key=value of a RESULT line; floats print like Lua's %.6g.
type kv struct {
	key   string
	value any
}

func result(name string, fields ...kv) {
	parts := []string{"RESULT", name}
	for _, f := range fields {
		var s string
		switch v := f.value.(type) {
		case float64:
			s = strconv.FormatFloat(v, 'g', 6, 64)
		default:
			s = fmt.Sprint(v)
		}
		parts = append(parts, f.key+"="+s)
	}
	fmt.Println(strings.Join(parts, " "))
}

func workers() int { return runtime.GOMAXPROCS(0) }
