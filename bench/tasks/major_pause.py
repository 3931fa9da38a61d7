#!/usr/bin/env python3
"""Incremental majors against stop-the-world ones (docs/design/gc-v2.md "Incremental
majors"), measured in the same run: major_pause.lua with --gc-incremental=off and =on, the
two taking turns within each round, best of N. Prints, for each mode, the longest gap the
churning task saw and its 99th percentile, and the majors and slices of the churn, then
the ratios on / off of the gaps.

  python3 bench/tasks/major_pause.py [--weft build/tools/weft] [-n 3] [--workers 1]
                                     [--quick]

Exit status 1 if a run fails (a checksum, a crash), or if the on mode ran no
incremental cycle.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KEYS = ("max_ms", "p99_ms")


def run(argv):
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=600, text=True)
    for line in done.stdout.splitlines():
        fields = line.split()
        if done.returncode == 0 and fields[:2] == ["RESULT", "major_pause"]:
            return {k: float(v) for k, v in (f.split("=", 1) for f in fields[2:])}
    sys.exit("failed: %s\n%s" % (" ".join(argv), done.stderr[-400:]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", default=os.path.join(HERE, "..", "..", "build", "tools", "weft"))
    parser.add_argument("-n", dest="runs", type=int, default=3)
    parser.add_argument("--workers", default="1")
    parser.add_argument("--quick", action="store_true", help="a small heap, for a smoke test")
    args = parser.parse_args()
    size = ["100000", "10000"] if args.quick else ["300000", "30000"]
    script = os.path.join(HERE, "major_pause.lua")
    best = {}
    for _ in range(args.runs):
        for mode in ("off", "on"):
            r = run([args.weft, "--workers", args.workers, "--gc-incremental=" + mode, script] + size)
            if mode == "on" and r["cycles"] < 1:
                sys.exit("--gc-incremental=on ran no incremental cycle: %s" % r)
            kept = best.setdefault(mode, r)
            for k in KEYS:
                kept[k] = min(kept[k], r[k])
    for mode in ("off", "on"):
        r = best[mode]
        print("%-3s longest gap %8.2f ms  p99 %6.2f ms  majors %d  cycles %d  slices %d" %
              (mode, r["max_ms"], r["p99_ms"], r["majors"], r["cycles"], r["slices"]))
    off, on = best["off"], best["on"]
    print("on/off: longest gap %.2f, p99 gap %.2f" % (on["max_ms"] / off["max_ms"], on["p99_ms"] / off["p99_ms"]))


if __name__ == "__main__":
    main()
