#!/usr/bin/env python3
"""Compiled code that left its frame at a call because the callee's code is queued is
not entered again until the callee's code could be ready (docs/design/jit.md, "Quiet
frames"). WEFT_FAULT=jit.compile-slow:2 makes the second compilation take 30 s, so the
callee queued behind it stays queued for the whole run; without the rule the caller's
code is entered and left at that call once per round, some two million times.

- "loop": the loop's function is compiled first and its calls of `f` wait for f's
  (slow) code: the loop is not entered again at its header.
- "start": `f` is compiled first and its tail call of `g` waits behind the slow
  compilation of the loop's function: f's frames are not entered at their start.
"""
import argparse
import os
import re
import subprocess
import sys

SCRIPTS = {
    "loop": """\
local function g(x) return {x} end
local function f(x) return g(x) end
local function drive(n) local s = 0 for i = 1, n do s = s + f(i)[1] end return s end
print(drive(3000000))
""",
    "start": """\
local function g(x) return {x} end
local function f(x) return g(x) end
for i = 1, 1100 do f(i) end
local function drive(n) local s = 0 for i = 1, n do s = s + f(i)[1] end return s end
print(drive(3000000))
""",
}
EXPECTED = "4500001500000\n"
# A code that waits leaves once, or a few times when the epoch moves meanwhile; without
# the rule, once per round.
MAX_EXITS = 20
EXITS = re.compile(r"^jit: \d+ entries, (\d+) exits to the interpreter", re.M)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", required=True)
    args = parser.parse_args()
    env = dict(os.environ, WEFT_FAULT="jit.compile-slow:2")
    for name, body in SCRIPTS.items():
        threshold = ["--jit-threshold=1000"] if name == "loop" else []
        proc = subprocess.run([args.weft, "--jit=on", *threshold, "--jit-stats", "-e", body], capture_output=True,
                              text=True, env=env, timeout=120)
        exits = EXITS.search(proc.stderr)
        if proc.returncode != 0 or proc.stdout != EXPECTED or not exits:
            sys.exit(f"jit_callee_wait.py: {name}: exit {proc.returncode}, stdout {proc.stdout!r}, "
                     f"stderr {proc.stderr!r}")
        if int(exits.group(1)) > MAX_EXITS:
            sys.exit(f"jit_callee_wait.py: {name}: {exits.group(1)} exits (at most {MAX_EXITS} expected):\n"
                     f"{proc.stderr}")
    print("ok")


if __name__ == "__main__":
    main()
