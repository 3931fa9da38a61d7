#!/usr/bin/env python3
"""The cost of deterministic mode (docs/design/deterministic.md) against the normal mode
with the same worker count, measured in the same run: skynet and ping-pong, each with
`--workers 1` and `--workers 2` (parallel steps), in the normal mode, `--deterministic`
and `--deterministic --record=FILE`. Wall time of the whole process, best of N runs
(the scripts' own clocks are logical under --deterministic), the three modes taking
turns. Issue 15's targets: deterministic at most 2x the normal mode, and --record at
most 1.2x deterministic.

  python3 bench/tasks/deterministic.py [--weft build/tools/weft] [-n 5] [--quick]

Exit status 1 if a run fails; with --strict also if a target is missed.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = {"skynet": (["1000000"], ["10000"]), "pingpong": (["300000"], ["10000"])}


def wall(argv, env):
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or b"RESULT" not in done.stdout:
        sys.exit("failed: %s\n%s" % (" ".join(argv), done.stderr.decode("utf-8", "replace")[-400:]))
    return elapsed


def best_walls(argvs, runs, env):
    """Best wall time of each command over `runs` rounds, the commands taking turns within
    a round, so that a slow spell of a shared machine falls on all of them alike."""
    best = [None] * len(argvs)
    for _ in range(runs):
        for i, argv in enumerate(argvs):
            elapsed = wall(argv, env)
            best[i] = elapsed if best[i] is None else min(best[i], elapsed)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", default="build/tools/weft")
    parser.add_argument("-n", "--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--strict", action="store_true")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "WEFT_WORKERS"}
    missed = []
    print("%-10s %7s %10s %10s %10s %8s %8s" % ("workload", "workers", "normal s", "det s", "record s", "det/n",
                                                  "rec/det"))
    with tempfile.TemporaryDirectory() as tmp:
        for name, (full, quick) in WORKLOADS.items():
            script = [os.path.join(HERE, name + ".lua")] + (quick if args.quick else full)
            for workers in ("1", "2"):
                w = ["--workers", workers]
                normal, det, rec = best_walls([[args.weft] + w + script, [args.weft, "--deterministic"] + w + script,
                                               [args.weft, "--deterministic", "--record=" + os.path.join(tmp, "s")] +
                                               w + script], args.runs, env)
                print("%-10s %7s %10.3f %10.3f %10.3f %8.2f %8.2f" % (name, workers, normal, det, rec, det / normal,
                                                                    rec / det))
                row = "%s, %s workers" % (name, workers)
                if det / normal > 2.0:
                    missed.append("%s: deterministic %.2fx the normal mode (target 2x)" % (row, det / normal))
                if rec / det > 1.2:
                    missed.append("%s: --record %.2fx deterministic (target 1.2x)" % (row, rec / det))
    for m in missed:
        print("missed: " + m)
    if args.strict and missed and not args.quick:
        sys.exit(1)


if __name__ == "__main__":
    main()
