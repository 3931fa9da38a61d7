#!/usr/bin/env python3
"""The negative test of the JIT's safepoint and reload rule (docs/design/jit.md): with
WEFT_FAULT=jit.reload-skip the first compiled function keeps a table reference across a
loop safepoint instead of reloading it from its slot (jit/stale_reload.h). Under
--gc-stress=relocate --gc-verify the collection at that safepoint moves the table, and
the run must stop with the stale reference reported (exit 3). The same fault with nothing
moving, and the same stress without the fault, must both run clean: the failure is the
checker catching the skipped reload, not the fault or the stress alone."""
import argparse
import os
import subprocess
import sys
import tempfile

# The main chunk is the first function compiled (--jit=eager); its loop reads the table
# in register 0 inline (a field read: jit/lower.cpp), dereferencing whatever the register
# holds.
SCRIPT = """\
local t = {v = 1}
local s = 0
for i = 1, 100 do s = s + t.v end
print(s)
"""

STRESS = ["--gc-stress=relocate", "--gc-verify"]


def run(weft, script, args, fault):
    env = {k: v for k, v in os.environ.items() if k != "WEFT_FAULT"}
    if fault:
        env["WEFT_FAULT"] = fault
    proc = subprocess.run([weft, "--jit=eager", *args, script], capture_output=True, text=True, env=env,
                          timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "reload.lua")
        with open(script, "w") as f:
            f.write(SCRIPT)
        for label, flags, fault in (("stress without the fault", STRESS, None),
                                    ("the fault without stress", [], "jit.reload-skip")):
            code, out, err = run(args.weft, script, flags, fault)
            if code != 0 or out != "100\n" or err:
                sys.exit(f"jit_stale_reload.py: {label}: exit {code}, stdout {out!r}\n{err}")
        code, out, err = run(args.weft, script, STRESS, "jit.reload-skip")
        caught = "stale reference" in err or "verify failed" in err
        if code != 3 or not caught:
            sys.exit(f"jit_stale_reload.py: the skipped reload went unnoticed: exit {code}, stdout {out!r}\n{err}")
    print("ok")


if __name__ == "__main__":
    main()
