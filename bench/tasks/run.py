#!/usr/bin/env python3
"""Runs the task benchmarks under weft and, when `go` is on PATH, their Go versions in the
same run, and prints each figure beside Go's and beside its target.

Each workload is a Lua script in this folder (bench/tasks/NAME.lua) and a subcommand of
the Go program in go/ (built here into a temporary folder). Both print one line
`RESULT NAME key=value ...`; a wrong checksum makes the script exit non-zero. Every
configuration runs N times and keeps its best run. Workers: weft's default (one per
processor; WEFT_WORKERS is removed from the environment) and --workers 1 where a row needs
it; Go gets GOMAXPROCS=1 for the same rows.

  python3 bench/tasks/run.py [--weft build/tools/weft] [--go go | --no-go] [-n 3]
                             [--quick] [--strict] [--timeout 300] [--jit] [workload ...]

--jit also runs every weft configuration with --jit=off and prints each figure with the
JIT on (the default) and off, and their ratio (above 1: slower with the JIT).

Exit status 1 if a run fails (a checksum, a crash, a timeout); with --strict also if a
target is missed (never in --quick mode, whose sizes are too small for the targets).
"""
import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (full-size arguments, --quick arguments, worker configurations, key of the best run)
# A worker configuration is None (the default: every processor) or a worker count.
WORKLOADS = {
    "skynet": (["1000000"], ["10000"], [None], "seconds"),
    "spawn": (["1000000"], ["10000"], [None, 1], "ns_per_task"),
    "pingpong": (["1000000"], ["10000"], [None, 1], "ns_per_roundtrip"),
    "pingpong_main": (["1000000", "2"], ["10000", "2"], [None, 1], "ns_per_roundtrip"),
    "spawn_main": (["1000000", "2"], ["10000", "2"], [None, 1], "ns_per_task"),
    "blocked": (["1000000"], ["10000"], [None], "bytes_per_task"),
    "parallel": (["50000000", "8"], ["1000000", "8"], [1, None], "seconds"),
    "timers": (["500", "4"], ["50", "4"], [None], "p99_extra_ms"),
}


# Workloads that are another one's script (and Go subcommand) with other arguments.
SCRIPT_OF = {"pingpong_main": "pingpong", "spawn_main": "spawn"}


def parse_result(stdout, name):
    for line in stdout.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0] == "RESULT" and fields[1] == name:
            return {k: float(v) for k, v in (f.split("=", 1) for f in fields[2:])}
    return None


class Runner:
    def __init__(self, args):
        self.runs = args.runs
        self.timeout = args.timeout
        self.quick = args.quick
        self.env = dict(os.environ)
        self.env.pop("WEFT_WORKERS", None)
        self.env.pop("GOMAXPROCS", None)
        self.failures = []

    def command(self, impl, name, workers):
        """(argv, environment) of one run of `name` under `impl` ("weft" or "go")."""
        full, quick, _, _ = WORKLOADS[name]
        sizes = quick if self.quick else full
        env = dict(self.env)
        script = SCRIPT_OF.get(name, name)
        if impl in ("weft", "weft_off"):
            argv = [self.weft] + (["--jit=off"] if impl == "weft_off" else [])
            if workers is not None:
                argv += ["--workers", str(workers)]
            return argv + [os.path.join(HERE, script + ".lua")] + sizes, env
        if workers is not None:
            env["GOMAXPROCS"] = str(workers)
        return [self.gobin, script] + sizes, env

    def best(self, impl, name, workers):
        """The best of N runs (smallest value of the workload's key), or None on failure."""
        key = WORKLOADS[name][3]
        label = "%s %s (%s)" % (impl, name, "default workers" if workers is None else
                                "%d worker%s" % (workers, "" if workers == 1 else "s"))
        argv, env = self.command(impl, name, workers)
        best = None
        for _ in range(self.runs):
            print("running %s" % label, file=sys.stderr, flush=True)
            try:
                done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL,
                                      capture_output=True, timeout=self.timeout)
            except subprocess.TimeoutExpired:
                self.failures.append("%s: timed out after %d s" % (label, self.timeout))
                return None
            out, err = done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
            result = parse_result(out, name)
            if done.returncode != 0 or result is None:
                self.failures.append("%s: exit %d: %s" % (label, done.returncode, (err or out)[-400:].strip()))
                return None
            if err.strip():
                print("  stderr: %s" % err.strip()[-300:], file=sys.stderr)
            if best is None or result[key] < best[key]:
                best = result
        return best


def build_go(go, tmp):
    """Builds go/ into tmp; returns the binary's path, or None (with the reason printed)."""
    env = dict(os.environ)
    if not env.get("HOME") and not env.get("XDG_CACHE_HOME") and not env.get("GOCACHE"):
        env["GOCACHE"] = os.path.join(tmp, "gocache")
    binary = os.path.join(tmp, "taskbench")
    done = subprocess.run([go, "build", "-buildvcs=false", "-o", binary, "."],
                          cwd=os.path.join(HERE, "go"), env=env, capture_output=True, text=True)
    if done.returncode != 0:
        print("go build failed:\n%s" % done.stderr, file=sys.stderr)
        return None
    return binary


def rows(results, quick):
    """Table rows: (workload, label, unit, weft, go, target text, check of weft or None)."""
    def get(impl, name, workers, key):
        r = results.get((impl, name, workers))
        return None if r is None else r.get(key)

    def speedup(impl):
        one, many = get(impl, "parallel", 1, "seconds"), get(impl, "parallel", None, "seconds")
        return one / many if one and many else None

    def pair(name, workers, key):
        return get("weft", name, workers, key), get("go", name, workers, key)

    def ratio(name, base, workers, key):
        a, b = get("weft", name, workers, key), get("weft", base, workers, key)
        ga, gb = get("go", name, workers, key), get("go", base, workers, key)
        return (a / b if a and b else None), (ga / gb if ga and gb else None)

    go_skynet = get("go", "skynet", None, "seconds")
    table = [
        ("skynet", "skynet", "s", *pair("skynet", None, "seconds"),
         "<= go", lambda w: go_skynet is not None and w <= go_skynet),
        ("spawn", "spawn+await", "ns/task", *pair("spawn", None, "ns_per_task"),
         "<= 700", lambda w: w <= 700),
        ("spawn", "  1 worker", "ns/task", *pair("spawn", 1, "ns_per_task"), "", None),
        ("pingpong", "ping-pong", "ns/trip", *pair("pingpong", None, "ns_per_roundtrip"),
         "<= 300", lambda w: w <= 300),
        ("pingpong", "  1 worker", "ns/trip", *pair("pingpong", 1, "ns_per_roundtrip"), "", None),
        ("pingpong_main", "ping-pong main", "ns/trip", *pair("pingpong_main", None, "ns_per_roundtrip"),
         "", None),
        ("pingpong_main", "  1 worker", "ns/trip", *pair("pingpong_main", 1, "ns_per_roundtrip"), "", None),
        ("pingpong_main", "  main/task", "x", *ratio("pingpong_main", "pingpong", None, "ns_per_roundtrip"),
         "<= 1.2", lambda w: w <= 1.2),
        ("pingpong_main", "  main/task 1 wkr", "x",
         *ratio("pingpong_main", "pingpong", 1, "ns_per_roundtrip"), "<= 1.2", lambda w: w <= 1.2),
        ("spawn_main", "spawn+await main", "ns/task", *pair("spawn_main", None, "ns_per_task"), "", None),
        ("spawn_main", "  main/task", "x", *ratio("spawn_main", "spawn", None, "ns_per_task"),
         "<= 1.2", lambda w: w <= 1.2),
        ("blocked", "blocked recv", "B/task", *pair("blocked", None, "bytes_per_task"),
         "<= 1024", lambda w: w <= 1024),
        ("parallel", "parallel 1 worker", "s", *pair("parallel", 1, "seconds"), "", None),
        ("parallel", "parallel all", "s", *pair("parallel", None, "seconds"), "", None),
        ("parallel", "parallel speedup", "x", speedup("weft"), speedup("go"),
         ">= 1.85", lambda w: w >= 1.85),
        ("timers", "timer p50 extra", "ms", *pair("timers", None, "p50_extra_ms"), "", None),
        ("timers", "timer p99 extra", "ms", *pair("timers", None, "p99_extra_ms"),
         "<= 2", lambda w: w <= 2),
    ]
    if quick:
        table = [row[:-1] + (None,) for row in table]
    return table


def print_jit_table(results, names):
    """Each weft configuration's figure with the JIT on and off (every key: lower is better)."""
    header = "%-14s %-8s %-16s %10s %10s %7s" % ("workload", "workers", "key", "jit on", "jit off", "on/off")
    print()
    print(header)
    print("-" * len(header))
    for name in names:
        key = WORKLOADS[name][3]
        for workers in WORKLOADS[name][2]:
            on, off = results.get(("weft", name, workers)), results.get(("weft_off", name, workers))
            a, b = (on or {}).get(key), (off or {}).get(key)
            print("%-14s %-8s %-16s %10s %10s %7s" % (name, "default" if workers is None else workers, key, fmt(a),
                                                     fmt(b), fmt(a / b if a is not None and b else None)))


def fmt(v):
    if v is None:
        return "-"
    if abs(v) >= 100:
        return "%.0f" % v
    return "%.1f" % v if abs(v) >= 10 else "%.3f" % v


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", default=os.path.join(HERE, "..", "..", "build", "tools", "weft"))
    parser.add_argument("--go", default="go", help="the go command (default: go on PATH)")
    parser.add_argument("--no-go", action="store_true", help="run weft only")
    parser.add_argument("-n", "--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per run")
    parser.add_argument("--jit", action="store_true", help="compare weft --jit=on with --jit=off")
    parser.add_argument("workloads", nargs="*", metavar="workload",
                        help="some of: " + " ".join(WORKLOADS))
    args = parser.parse_args()
    names = args.workloads or list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        parser.error("unknown workload(s): %s" % " ".join(unknown))

    runner = Runner(args)
    runner.weft = os.path.abspath(args.weft)
    if not os.access(runner.weft, os.X_OK):
        parser.error("no weft binary at %s (build it, or pass --weft)" % runner.weft)
    load = os.getloadavg()[0]
    cpus = os.cpu_count()
    with tempfile.TemporaryDirectory() as tmp:
        runner.gobin = None
        if not args.no_go:
            if shutil.which(args.go):
                runner.gobin = build_go(args.go, tmp)
                if runner.gobin is None:
                    runner.failures.append("go build failed")
            else:
                print("note: %s not on PATH; weft only" % args.go, file=sys.stderr)
        results = {}
        for name in names:
            for workers in WORKLOADS[name][2]:
                for impl in ["weft"] + (["weft_off"] if args.jit else []) + (["go"] if runner.gobin else []):
                    results[(impl, name, workers)] = runner.best(impl, name, workers)

    weft_workers = next((int(r["workers"]) for (i, _, w), r in results.items()
                         if i == "weft" and w is None and r), None)
    print("task benchmarks%s: best of %d; %d processors; weft default workers: %s; "
          "load average at start %.2f" % (" (--quick sizes)" if args.quick else "", args.runs,
                                          cpus, weft_workers or "?", load))
    if load > 0.5:
        print("warning: the machine was busy at start; figures may be noisy")
    header = "%-18s %-8s %10s %10s %8s %9s  %s" % ("workload", "unit", "weft", "go", "weft/go",
                                                   "target", "met")
    print(header)
    print("-" * len(header))
    missed = []
    for name, label, unit, weft, go, target, check in rows(results, args.quick):
        if name not in names:
            continue
        ratio = weft / go if weft is not None and go else None
        met = "-"
        if check is not None and weft is not None:
            met = "yes" if check(weft) else "NO"
            if met == "NO":
                missed.append(label.strip())
        print("%-18s %-8s %10s %10s %8s %9s  %s" % (label, unit, fmt(weft), fmt(go),
                                                    fmt(ratio), target, met))
    if args.jit:
        print_jit_table(results, names)
    for failure in runner.failures:
        print("FAILED: %s" % failure)
    if missed:
        print("targets missed: %s" % ", ".join(missed))
    if runner.failures:
        return 1
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
