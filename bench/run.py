#!/usr/bin/env python3
"""Runs the benchmark scripts under lua5.4 and weft in the same run and compares them.

For each script: best wall time of N rounds, each of which runs every interpreter once
(weft with --jit=off: this table compares the interpreter and the collector; --jit adds
the default, the JIT on), in turn and starting with another each round, so a slow
stretch of the machine falls on every column alike; the spread of each row (the largest
of its columns' worst/best - 1, which says how far to trust its ratios); peak RSS (max over the runs, from wait4's resource usage), a check that both print
the same output, and the ratio weft/lua5.4 (below 1 means weft is faster) and that of
the peak RSS. Ends with the geometric mean of the time ratios, that of the
allocation-heavy scripts (ALLOCATION) and the largest RSS ratio, then start-up (`-e ''`:
best of many runs, and its peak RSS) beside lua5.4's, which the mean leaves out. Exit
status 1 if any output differs or a run fails.

  python3 bench/run.py [--weft build/tools/weft] [--lua lua5.4] [-n 3] [--quick] [--jit]
                       [--no-pin] [script ...]

The single-threaded runs (lua5.4, weft --jit=off) of a round are pinned to one CPU, the
faster of a short calibration loop run on each just before: on a virtual machine one CPU
can run up to 1.7x slower than the other for minutes at a time, and a run that lands on
it unpinned is noise. The --jit=on runs are not pinned (the compiler runs on a thread of
its own beside the script). --no-pin leaves every run unpinned.

--jit also runs weft with --jit=on (docs/design/jit.md) and prints both weft columns,
their ratios to lua5.4 and the JIT's to the interpreter's (below 1: the JIT helps), with
a geometric mean for each; the output of all three must be the same. Its last columns
are the compile thread's time (from one more --jit=on run with --jit-stats) and that
time's share of the best --jit=on run: the compiler runs beside the script, so this is
how long the script ran without the code it asked for, not time it lost.

--quick runs each script at a small size (QUICK_SIZES, its arg[1]): a smoke test that CI
runs on every change to verify the checksums; its times are too short to judge.
"""
import argparse
import glob
import math
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# Each script's arg[1] under --quick: a few tens of milliseconds under lua5.4.
QUICK_SIZES = {
    "binarytrees": "8", "cd": "10", "concat": "20000", "fannkuch": "7", "fib": "20", "format": "5000",
    "gsub": "1", "json": "10", "list": "50", "loops": "200", "methods": "30000", "nbody": "10000",
    "old_array": "20000", "old_heap": "20000", "patterns": "2000",
    "pcall": "20000",
    "sort_numbers": "20000", "sort_strings": "3000", "sparse_keys": "30000",
    "spectralnorm": "60", "strings": "10000", "tables": "5000",
}

# The allocation-heavy scripts (issue 11's group): their own geometric mean is printed
# beside the overall one.
ALLOCATION = {"binarytrees", "cd", "json", "list"}


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


# GNU time forks the measured program from its own small process and reports the child's
# peak RSS (%M): read directly, a child's ru_maxrss starts at this runner's own high-water
# mark, inherited at exec, which hides every peak below ~15 MB.
TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def run_measured(cmd, rss=True):
    """Runs cmd once; returns (seconds, peak RSS KiB, exit status, stdout, stderr).

    With rss and GNU time present, the peak RSS is the program's own (through TIME, whose
    fork adds well under a millisecond to the time, for each interpreter alike);
    otherwise it is wait4's, at least this runner's floor, which main() prints.
    Output goes to temporary files so a full pipe cannot stall the child.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as report:
        if rss and TIME:
            cmd = [TIME, "-f", "%M", "-o", report.name] + cmd
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, out.fileno(), 1),
            (os.POSIX_SPAWN_DUP2, err.fileno(), 2),
        ]
        start = time.perf_counter()
        pid = os.posix_spawnp(cmd[0], cmd, os.environ, file_actions=actions)
        _, status, usage = os.wait4(pid, 0)
        elapsed = time.perf_counter() - start
        peak = usage.ru_maxrss
        if rss and TIME:
            lines = report.read().split()
            peak = int(lines[-1]) if lines and lines[-1].isdigit() else peak
        out.seek(0)
        err.seek(0)
        return elapsed, peak, os.waitstatus_to_exitcode(status), out.read(), err.read()


ALL_CPUS = frozenset(os.sched_getaffinity(0))


def loop_seconds(cpu):
    """Best of three timings of a small busy loop on cpu (this process pinned there)."""
    os.sched_setaffinity(0, {cpu})
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        total = 0
        for i in range(100000):
            total += i
        best = min(best, time.perf_counter() - start)
    return best


def faster_cpu():
    """The CPU on which the calibration loop ran fastest just now."""
    return min(sorted(ALL_CPUS), key=loop_seconds)


def measure(cmds, runs, rss=True, pinned=None):
    """Runs each command of cmds `runs` times, interleaved: round r runs them all once,
    starting from the (r mod len)-th; the commands whose pinned[i] is true run on the
    round's faster CPU (children inherit this process's affinity). Returns, per command,
    (best seconds, peak RSS KiB, output, error, spread): a failed run ends that command's
    measurement with its error; spread is worst/best - 1 over its runs."""
    results = [[math.inf, 0, None, None, 0.0] for _ in cmds]
    worst = [0.0 for _ in cmds]
    pinned = pinned or [False] * len(cmds)
    for r in range(runs):
        cpu = faster_cpu() if any(pinned) and len(ALL_CPUS) > 1 else None
        for k in range(len(cmds)):
            i = (r + k) % len(cmds)
            result = results[i]
            if result[3] is not None:
                continue
            os.sched_setaffinity(0, {cpu} if cpu is not None and pinned[i] else ALL_CPUS)
            seconds, rss_kib, code, out, err = run_measured(cmds[i], rss)
            if code != 0:
                result[0] = None
                result[3] = "exit %d: %s" % (code, err.decode("utf-8", "replace")[-300:])
                continue
            result[0], result[1], result[2] = min(result[0], seconds), max(result[1], rss_kib), out
            worst[i] = max(worst[i], seconds)
            result[4] = worst[i] / result[0] - 1
    os.sched_setaffinity(0, ALL_CPUS)
    return [tuple(result) for result in results]


def compare_jit(args, weft, scripts):
    header = "%-14s %9s %9s %9s %8s %8s %8s %7s %9s %6s  %s" % (
        "script", "lua5.4 s", "off s", "on s", "off/lua", "on/lua", "on/off", "spread", "compile", "share",
        "output")
    print(header)
    print("-" * len(header))
    ratios, failed = {"off": [], "on": [], "gain": []}, False
    compile_total, on_total = 0.0, 0.0
    pin = not args.no_pin
    for script in scripts:
        name = os.path.splitext(os.path.basename(script))[0]
        size = [QUICK_SIZES[name]] if args.quick else []
        path = os.path.abspath(script)
        results = measure([[args.lua, path] + size, [weft, "--jit=off", path] + size, [weft, "--jit=on", path] + size],
                          args.runs, pinned=[pin, pin, False])
        (lua_t, _, lua_out, lua_err, _), (off_t, _, off_out, off_err, _), (on_t, _, on_out, on_err, _) = results
        if lua_err or off_err or on_err:
            failed = True
            print("%-14s FAILED: %s" % (name, lua_err or off_err or on_err))
            continue
        same = lua_out == off_out == on_out
        failed = failed or not same
        ratios["off"].append(off_t / lua_t)
        ratios["on"].append(on_t / lua_t)
        ratios["gain"].append(on_t / off_t)
        compile_s = compile_seconds([weft, "--jit=on", "--jit-stats", path] + size)
        compile_total += compile_s
        on_total += on_t
        print("%-14s %9.3f %9.3f %9.3f %8.2f %8.2f %8.2f %6.0f%% %7.0f ms %5.0f%%  %s" % (
            name, lua_t, off_t, on_t, off_t / lua_t, on_t / lua_t, on_t / off_t, spread(results),
            compile_s * 1000, 100 * compile_s / on_t, "same" if same else "DIFFERENT"))
    if ratios["on"]:
        mean = {k: geometric_mean(v) for k, v in ratios.items()}
        print("-" * len(header))
        print("geometric means (%d scripts): off/lua %.2f, on/lua %.2f, on/off %.2f" % (
            len(ratios["on"]), mean["off"], mean["on"], mean["gain"]))
        print("compile time: %.0f ms in all, %.0f%% of the --jit=on runs' %.2f s" % (
            compile_total * 1000, 100 * compile_total / on_total, on_total))
    runs = 20 if args.quick else 200
    lua_t, off_t, on_t = (result[0] for result in measure(
        [[args.lua, "-e", ""], [weft, "--jit=off", "-e", ""], [weft, "--jit=on", "-e", ""]], runs, rss=False))
    if None in (lua_t, off_t, on_t):
        print("start-up FAILED")
        return 1
    print("start-up (-e '', best of %d): lua5.4 %.2f ms, weft --jit=off %.2f ms (%.2f), --jit=on %.2f ms (%.2f)" % (
        runs, lua_t * 1000, off_t * 1000, off_t / lua_t, on_t * 1000, on_t / lua_t))
    return 1 if failed else 0


def compile_seconds(cmd):
    """The compile time --jit-stats reports for one run of cmd (0 if it compiled nothing)."""
    _, _, _, _, err = run_measured(cmd, rss=False)
    match = re.search(rb"compile time ([0-9.]+) ms", err)
    return float(match.group(1)) / 1000 if match else 0.0


def spread(results):
    """A row's spread in percent: the largest of its columns' worst/best - 1."""
    return 100 * max(result[4] for result in results)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", default=os.path.join(HERE, "..", "build", "tools", "weft"))
    parser.add_argument("--lua", default="lua5.4")
    parser.add_argument("-n", "--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--jit", action="store_true", help="compare weft --jit=on with the interpreter")
    parser.add_argument("--no-pin", action="store_true", help="leave the single-threaded runs unpinned")
    parser.add_argument("scripts", nargs="*")
    args = parser.parse_args()
    weft = os.path.abspath(args.weft)
    scripts = args.scripts or sorted(glob.glob(os.path.join(HERE, "*.lua")))

    floor = run_measured(["true"])[1]
    if args.jit:
        return compare_jit(args, weft, scripts)
    header = "%-14s %9s %9s %7s %7s %10s %10s %7s  %s" % (
        "script", "lua5.4 s", "weft s", "ratio", "spread", "lua RSS", "weft RSS", "RSS", "output")
    print(header)
    print("-" * len(header))
    ratios, allocation, rss_ratios, failed = [], [], [], False
    for script in scripts:
        name = os.path.splitext(os.path.basename(script))[0]
        path = os.path.abspath(script)
        size = [QUICK_SIZES[name]] if args.quick else []
        results = measure([[args.lua, path] + size, [weft, "--jit=off", path] + size], args.runs,
                          pinned=[not args.no_pin] * 2)
        (lua_t, lua_rss, lua_out, lua_err, _), (weft_t, weft_rss, weft_out, weft_err, _) = results
        if lua_err or weft_err:
            failed = True
            print("%-14s FAILED: %s" % (name, lua_err or weft_err))
            continue
        same = lua_out == weft_out
        failed = failed or not same
        ratio = weft_t / lua_t
        ratios.append(ratio)
        if name in ALLOCATION:
            allocation.append(ratio)
        rss_ratios.append((weft_rss / lua_rss, name))
        print("%-14s %9.3f %9.3f %7.2f %6.0f%% %8d K %8d K %7.2f  %s" % (
            name, lua_t, weft_t, ratio, spread(results), lua_rss, weft_rss, weft_rss / lua_rss,
            "same" if same else "DIFFERENT"))
    if ratios:
        print("-" * len(header))
        print("geometric mean of ratios (weft / lua5.4, %d scripts): %.2f" % (len(ratios), geometric_mean(ratios)))
    if allocation:
        print("allocation-heavy (%d scripts): geometric mean %.2f" % (len(allocation), geometric_mean(allocation)))
    if rss_ratios:
        print("largest peak RSS ratio: %.2f (%s)" % max(rss_ratios))
    startup_runs = 20 if args.quick else 200
    (lua_t, _, _, lua_err, _), (weft_t, _, _, weft_err, _) = measure(
        [[args.lua, "-e", ""], [weft, "-e", ""]], startup_runs, rss=False)
    (_, lua_rss, _, _, _), (_, weft_rss, _, _, _) = measure([[args.lua, "-e", ""], [weft, "-e", ""]], 3)
    if lua_err or weft_err:
        failed = True
        print("start-up FAILED: %s" % (lua_err or weft_err))
    else:
        print("start-up (-e '', best of %d): lua5.4 %.2f ms, weft %.2f ms, ratio %.2f; RSS %d K, %d K, ratio %.2f" % (
            startup_runs, lua_t * 1000, weft_t * 1000, weft_t / lua_t, lua_rss, weft_rss, weft_rss / lua_rss))
    if TIME:
        print("RSS of /bin/true, for scale: %d K" % floor)
    else:
        print("RSS floor (no %s: this runner's own peak, inherited at exec): %d K" % ("/usr/bin/time", floor))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
