#!/usr/bin/env python3
"""WEFT_JIT_DUMP=DIR (docs/design/jit.md, "Profiling compiled code"): each compiled
function leaves DIR/lua_N.ll, its IR after the pipeline naming the prototype's
source:line, and DIR/lua_N.o, an ELF object defining lua_N; a directory that cannot be
written changes nothing else; without the variable nothing is written."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

SCRIPT = """\
local function squares(n)
  local total, i = 0, 0
  while i < n do i = i + 1; total = total + i * i end
  return total
end
print(squares(20) + squares(5))
"""


def fail(message):
    sys.exit(f"jit_dump.py: {message}")


def run(weft, script, env):
    proc = subprocess.run([weft, "--jit=eager", script], capture_output=True, text=True, env=env, timeout=120)
    if proc.returncode != 0 or proc.stdout != "2925\n" or proc.stderr:
        fail(f"exit {proc.returncode}, stdout {proc.stdout!r}, stderr {proc.stderr!r}")


def check_dump(dump, script):
    names = sorted(os.listdir(dump))
    stems = sorted({n.rsplit(".", 1)[0] for n in names})
    if not stems:
        fail("nothing dumped")
    sources = []
    for stem in stems:
        if f"{stem}.ll" not in names or f"{stem}.o" not in names:
            fail(f"{stem}: want both {stem}.ll and {stem}.o, have {names}")
        with open(os.path.join(dump, f"{stem}.ll")) as f:
            ir = f.read()
        if not re.search(rf"^define [^@]*@{stem}\(", ir, re.M):
            fail(f"{stem}.ll defines no {stem}")
        m = re.search(r'^source_filename = "([^"]*)"$', ir, re.M)
        if not m:
            fail(f"{stem}.ll has no source_filename")
        sources.append(m.group(1))
        with open(os.path.join(dump, f"{stem}.o"), "rb") as f:
            obj = f.read()
        if not obj.startswith(b"\x7fELF") or stem.encode() not in obj:
            fail(f"{stem}.o is no object defining {stem}")
    if f"{script}:1" not in sources:
        fail(f"no dump names squares ({script}:1): {sources}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", required=True)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "WEFT_JIT_DUMP"}
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "hot.lua")
        with open(script, "w") as f:
            f.write(SCRIPT)
        dump = os.path.join(tmp, "dump")
        os.mkdir(dump)
        run(args.weft, script, {**env, "WEFT_JIT_DUMP": dump})
        check_dump(dump, script)
        run(args.weft, script, {**env, "WEFT_JIT_DUMP": os.path.join(tmp, "missing")})
        if os.path.exists(os.path.join(tmp, "missing")):
            fail("a dump created its directory")
        before = sorted(os.listdir(tmp))
        run(args.weft, script, env)
        if sorted(os.listdir(tmp)) != before:
            fail("a run without WEFT_JIT_DUMP wrote files")
    print("ok")


if __name__ == "__main__":
    main()
