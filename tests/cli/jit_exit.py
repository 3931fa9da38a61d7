#!/usr/bin/env python3
"""The weft CLI's exit does not wait for a compilation in progress (tools/weft/main.cpp):
with WEFT_FAULT=jit.compile-slow the first compilation takes 30 s longer (vm/jit.cpp), and
a script whose hot loop queued it must still end at once, after its finalizers ran and
with its exit status, as a script that raised an error must. Without the fault the same
scripts end the same way, so the fault changes nothing but the compile thread's time."""
import argparse
import os
import subprocess
import sys
import time

# The loop is hot enough to be queued at once; the finalizer runs when the state closes.
BODY = """\
setmetatable({}, {__gc = function() print("finalized") end})
local s = 0
for i = 1, 100000 do s = s + i end
print(s)
"""
CASES = [
    ("a script that ends", BODY, 0, "5000050000\nfinalized\n", ""),
    ("a script that raises", BODY + "error('late', 0)\n", 1, "5000050000\nfinalized\n", "late"),
]
# Far below the 30 s the slow compilation takes; far above a run of this script.
LIMIT_S = 15


def run(weft, body, fault):
    env = {k: v for k, v in os.environ.items() if k != "WEFT_FAULT"}
    if fault:
        env["WEFT_FAULT"] = fault
    start = time.monotonic()
    proc = subprocess.run([weft, "--jit=on", "--jit-threshold=1", "-e", body], capture_output=True, text=True,
                          env=env, timeout=120)
    return proc, time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", required=True)
    args = parser.parse_args()
    for fault in ("", "jit.compile-slow"):
        for name, body, code, out, err in CASES:
            proc, took = run(args.weft, body, fault)
            what = f"{name} (WEFT_FAULT={fault!r})"
            if proc.returncode != code or proc.stdout != out or err not in proc.stderr:
                sys.exit(f"jit_exit.py: {what}: exit {proc.returncode}, stdout {proc.stdout!r}, "
                         f"stderr {proc.stderr!r}; expected exit {code}, stdout {out!r}, stderr with {err!r}")
            if took > LIMIT_S:
                sys.exit(f"jit_exit.py: {what}: the exit waited {took:.1f} s for the compilation")
    print("ok")


if __name__ == "__main__":
    main()
