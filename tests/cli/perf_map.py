#!/usr/bin/env python3
"""perf's map of JIT code (docs/design/jit.md, "Profiling compiled code"): with
--perf-map, or WEFT_PERF_MAP=1, a run that compiles writes /tmp/perf-PID.map with one
well-formed line per installed function, named lua:NAME:FILE:LINE, while the process
still runs (a line is written when its code is installed, not at exit); without either,
no map is written."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# Four functions with loops the tier compiles: a local, a global, a field, and the main
# chunk. After the work the script says so and waits on stdin, so the map is read from
# a live process.
SCRIPT = """\
local function sumTo(n)
  local s = 0
  for i = 1, n do s = s + i end
  return s
end
function scale(n)
  local x = 1.0
  for i = 1, n do x = x * 1.5 end
  return x
end
local M = {}
function M.count(n)
  local c = 0
  while c < n do c = c + 1 end
  return c
end
local total = 0
for i = 1, 3 do total = total + sumTo(100) + M.count(10) end
local k = 0
for i = 1, 10 do k = k + i end
print(total + k, scale(3))
io.stdout:flush()
io.read("l")
"""

LINE = re.compile(r"^([0-9a-f]+) ([0-9a-f]+) (lua:[^\n]*:[0-9]+)$")
# What the map must name: the call sites' names, the main chunk, and their lines.
WANT = ["lua:sumTo:{src}:1", "lua:scale:{src}:6", "lua:count:{src}:12", "lua:main chunk:{src}:0"]


def fail(message):
    sys.exit(f"perf_map.py: {message}")


def run_live(weft, args, script, env):
    """Runs the script until it has printed its result; returns (pid, map lines or
    None) read while it waits, after letting it finish."""
    proc = subprocess.Popen([weft, *args, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    path = f"/tmp/perf-{proc.pid}.map"
    try:
        first = proc.stdout.readline()
        if first.strip() != "15235\t3.375":
            fail(f"weft {' '.join(args)} printed {first!r}")
        lines = None
        if os.path.exists(path):
            with open(path) as f:
                lines = f.read().splitlines()
        out, err = proc.communicate("\n", timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    if proc.returncode != 0 or err:
        fail(f"weft {' '.join(args)}: exit {proc.returncode}\n{err}")
    exists_after = os.path.exists(path)
    if exists_after:
        os.remove(path)
    return lines, exists_after


def check_map(flags, lines, src):
    if lines is None:
        fail(f"weft {' '.join(flags)}: no map while the process ran")
    names = []
    for line in lines:
        m = LINE.match(line)
        if not m:
            fail(f"weft {' '.join(flags)}: malformed map line {line!r}")
        start, size = int(m.group(1), 16), int(m.group(2), 16)
        if start == 0 or size == 0:
            fail(f"weft {' '.join(flags)}: empty code range in {line!r}")
        names.append(m.group(3))
    for want in WANT:
        name = want.format(src=src)
        if name not in names:
            fail(f"weft {' '.join(flags)}: the map does not name {name}:\n" + "\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "hot.lua")
        with open(script, "w") as f:
            f.write(SCRIPT)
        env = {k: v for k, v in os.environ.items() if k != "WEFT_PERF_MAP"}
        for flags, extra in [(["--jit=eager", "--perf-map"], {}), (["--jit=eager"], {"WEFT_PERF_MAP": "1"})]:
            lines, _ = run_live(args.weft, flags, script, {**env, **extra})
            check_map(flags + [f"{k}={v}" for k, v in extra.items()], lines, script)
        for flags in (["--jit=eager"], ["--jit=off", "--perf-map"]):
            lines, after = run_live(args.weft, flags, script, env)
            if lines is not None or after:
                fail(f"weft {' '.join(flags)} wrote a perf map")
    print("ok")


if __name__ == "__main__":
    main()
