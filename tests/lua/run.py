#!/usr/bin/env python3
"""Runs one Lua conformance script one way and compares its output.

Modes:
  plain     weft SCRIPT                                   stdout == NAME.expected
  relocate  weft --gc-stress=relocate --gc-verify SCRIPT  stdout == NAME.expected
  generational  weft --gc-stress --gc-verify SCRIPT       stdout == NAME.expected
            (collections at every safepoint, mostly minor ones: the remembered
            set and the parked-stack rule verified before each; gc-v2.md)
  workers1  weft --workers=1 SCRIPT                       stdout == NAME.expected
  workers4  weft --workers=4 SCRIPT                       stdout == NAME.expected
  deterministic  weft --deterministic=1 --workers=1 SCRIPT  stdout == NAME.expected
            (then again with --workers=4 under --gc-stress at every 100th safepoint:
            neither parallel steps nor collections may change a deterministic run, so
            both runs' outputs are identical, byte for byte)
  jit       weft --jit=eager SCRIPT                       stdout == NAME.expected
            (every function compiled at its first call: docs/design/jit.md)
  jitrelocate  weft --jit=eager --gc-stress=relocate --gc-verify --gc-interval=N SCRIPT
            (compiled code under relocation, N = JIT_RELOCATE_INTERVAL times the
            script's interval: cheap enough to run beside the relocate mode)
  oracle    lua5.4 SCRIPT                                 stdout == NAME.expected

Header comments in the script's first lines:
  -- weft-only              (CMake registers no oracle run)
  -- expect-exit: N         expected exit status (default 0)

Standard error is always compared: with NAME.expected-stderr when that file exists (the
program name normalised), else it must be empty, so a spurious report (an error in a task
nobody awaited, a warning) fails the run.
  -- weft-gc-interval: N    relocate and generational modes collect at every N-th safepoint
  -- weft-args: ARGS         extra weft options for plain and stress runs (e.g.
                            --heap-limit=2M), split like a shell would
  -- weft-env: NAME=VALUE    an environment variable for the weft runs (fault injection)
  -- weft-tasks             a task script: CMake also registers workers1, workers4 and
                            deterministic runs (weft --workers 1 / --workers 4 /
                            --deterministic=1 SCRIPT), and the relocate and generational
                            runs use --workers 4
  -- weft-not-deterministic: WHY  no deterministic run: the script needs what that
                            mode leaves out (docs/design/deterministic.md), WHY says what

WEFT_TEST_GC_INTERVAL_SCALE=K in the runner's environment multiplies every script's
interval by K (the sanitizer stage of tools/setup.sh: fewer, still frequent, stress
collections where each costs ten times more).

weft runs get WEFT_TEST=1 in their environment; lua5.4 runs do not. On a mismatch the
runner prints a unified diff and exits 1. Standard library only: no dependencies.
"""
import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys

HEADER_LINES = 5
# jitrelocate collects at every JIT_RELOCATE_INTERVAL-th safepoint (times the script's
# own interval): the relocate mode already covers every safepoint interpreted.
JIT_RELOCATE_INTERVAL = 20


def read_headers(path):
    headers = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for _, line in zip(range(HEADER_LINES), f):
            if "-- weft-only" in line:
                headers["weft-only"] = True
            if "-- weft-tasks" in line:
                headers["weft-tasks"] = True
            m = re.search(r"--\s*(expect-exit|weft-gc-interval):\s*(\d+)", line)
            if m:
                headers[m.group(1)] = int(m.group(2))
            m = re.search(r"--\s*weft-env:\s*(\w+)=(\S*)", line)
            if m:
                headers.setdefault("weft-env", {})[m.group(1)] = m.group(2)
            m = re.search(r"--\s*weft-args:\s*(.*)$", line)
            if m:
                headers["weft-args"] = shlex.split(m.group(1))
    return headers


def normalise_progname(text):
    # lua5.4 says "ARGV0: msg" (e.g. "/usr/bin/lua5.4: msg"), weft says "weft: msg".
    return re.sub(r"^(?:\S*/)?(lua5\.4|lua|weft):", "PROG:", text, flags=re.MULTILINE)


def show_diff(label, expected, actual):
    exp = expected.decode("utf-8", "replace").splitlines(keepends=True)
    act = actual.decode("utf-8", "replace").splitlines(keepends=True)
    sys.stdout.writelines(difflib.unified_diff(exp, act, "expected " + label, "actual " + label))
    sys.stdout.write("\n")


def clip(text, head=6000, tail=2000):
    """A long text's start (where a sanitizer report names the fault) and its end."""
    if len(text) <= head + tail:
        return text
    return text[:head] + "\n[... %d characters left out ...]\n" % (len(text) - head - tail) + text[-tail:]


def command_for(args, headers, script):
    if args.mode == "oracle":
        return [args.lua, script]
    cmd = [args.weft] + headers.get("weft-args", [])
    if args.mode == "workers1":
        cmd.append("--workers=1")
    if args.mode == "deterministic":
        cmd += ["--deterministic=1", "--workers=1"]
    if args.mode in ("jit", "jitrelocate"):
        cmd.append("--jit=eager")
    if args.mode == "workers4" or (args.mode in ("relocate", "generational", "jitrelocate") and "weft-tasks" in headers):
        cmd.append("--workers=4")
    if args.mode in ("relocate", "generational"):
        cmd += ["--gc-stress=relocate" if args.mode == "relocate" else "--gc-stress", "--gc-verify"]
        cmd += gc_interval(headers)
    if args.mode == "jitrelocate":
        cmd += ["--gc-stress=relocate", "--gc-verify"] + gc_interval(headers, JIT_RELOCATE_INTERVAL)
    return cmd + [script]


def gc_interval(headers, scale=1):
    interval = headers.get("weft-gc-interval", 1) * int(os.environ.get("WEFT_TEST_GC_INTERVAL_SCALE", "1")) * scale
    return ["--gc-interval=%d" % interval] if interval != 1 else []


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["plain", "relocate", "generational", "oracle", "workers1", "workers4", "deterministic",
                                           "jit", "jitrelocate"], required=True)
    parser.add_argument("--weft", default="weft")
    parser.add_argument("--lua", default="lua5.4")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("script")
    args = parser.parse_args()

    script_path = os.path.abspath(args.script)
    directory, script = os.path.split(script_path)
    base = os.path.splitext(script_path)[0]
    headers = read_headers(script_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LUA_")}
    if args.mode != "oracle":
        env["WEFT_TEST"] = "1"
        env.update(headers.get("weft-env", {}))
    cmd = command_for(args, headers, script)
    try:
        proc = subprocess.run(cmd, cwd=directory, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print("TIMEOUT after %gs: %s" % (args.timeout, " ".join(cmd)))
        return 1

    ok = True
    if args.mode == "deterministic":
        # Four workers run steps ahead (parallel steps: docs/design/deterministic.md), with
        # minors (every eighth a major) at every 1000th safepoint (times the header's
        # interval), unverified: the other modes verify; this one checks that neither
        # changes a deterministic run, at a few times a plain run's cost. A logical
        # second is about 50 million work units, so scripts that run for a time made
        # over a million collections at every 100th, each a stop of four workers.
        stressed = [a for a in cmd[:-1] if a != "--workers=1"] + ["--workers=4", "--gc-stress"] + \
            gc_interval(headers, 1000) + cmd[-1:]
        again = subprocess.run(stressed, cwd=directory, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=args.timeout)
        if (again.returncode, again.stdout, again.stderr) != (proc.returncode, proc.stdout, proc.stderr):
            print("a deterministic run changed with four workers under collection stress: %s" % " ".join(stressed))
            show_diff("stdout", proc.stdout, again.stdout)
            show_diff("stderr", proc.stderr, again.stderr)
            ok = False
    want_exit = headers.get("expect-exit", 0)
    if proc.returncode != want_exit:
        print("exit status %d, expected %d: %s" % (proc.returncode, want_exit, " ".join(cmd)))
        ok = False
    with open(base + ".expected", "rb") as f:
        expected = f.read()
    if proc.stdout != expected:
        print("stdout differs from %s.expected:" % os.path.basename(base))
        show_diff("stdout", expected, proc.stdout)
        ok = False
    want_err = ""
    if os.path.exists(base + ".expected-stderr"):
        with open(base + ".expected-stderr", "rb") as f:
            want_err = normalise_progname(f.read().decode("utf-8", "replace"))
    got_err = normalise_progname(proc.stderr.decode("utf-8", "replace"))
    if got_err != want_err:
        if want_err:
            print("stderr differs from %s.expected-stderr:" % os.path.basename(base))
        else:
            print("stderr not empty (no %s.expected-stderr):" % os.path.basename(base))
        show_diff("stderr", want_err.encode(), clip(got_err).encode())
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
