#!/usr/bin/env python3
"""Lazy loading of the JIT (docs/design/jit.md, invariant 4): a run that compiles nothing
does not map the compiler module (libweft_jit.so), even with --jit=on and a hot loop
that would leave compiled code every round, and a run that
compiles does; neither maps the shared libLLVM, whose parts the module carries. The
script reads its own /proc/self/maps."""
import argparse
import subprocess
import sys

# Prints whether the process has mapped the module, and libLLVM, after running `body`.
PROBE = """
%s
local f = assert(io.open("/proc/self/maps"))
local maps = f:read("a")
f:close()
print(maps:find("libweft_jit", 1, true) ~= nil, maps:find("libLLVM", 1, true) ~= nil)
"""

HOT_LOOP = "local s = 0 for i = 1, 100000 do s = s + i end assert(s == 5000050000)"
# Hot, but every round reads the chunk's varargs, which compiled code never does
# (vm/jit_ops.h): the VM's coarse test sees the loop cannot go round compiled, and
# queues nothing.
LEAVING_LOOP = "local s = 0 for i = 1, 100000 do s = s + i + select('#', ...) end assert(s == 5000050000)"


def run(weft, args, body):
    proc = subprocess.run([weft, *args, "-e", PROBE % body], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 or proc.stderr:
        sys.exit(f"jit_lazy.py: weft {' '.join(args)}: exit {proc.returncode}\n{proc.stderr}")
    return proc.stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", required=True)
    args = parser.parse_args()
    cases = [
        (["--jit=off"], HOT_LOOP, "false\tfalse"),
        (["--jit=on"], "local x = 1 + 1", "false\tfalse"),
        (["--jit=on"], LEAVING_LOOP, "false\tfalse"),
        # Eager: the main chunk is compiled at its first call, before the probe reads.
        (["--jit=eager"], HOT_LOOP, "true\tfalse"),
    ]
    for flags, body, want in cases:
        got = run(args.weft, flags, body)
        if got != want:
            sys.exit(f"jit_lazy.py: weft {' '.join(flags)}: mapped (module, LLVM) = {got!r}, expected {want!r}")
    print("ok")


if __name__ == "__main__":
    main()
