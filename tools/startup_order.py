#!/usr/bin/env python3
"""Regenerate tools/weft/startup.order: the functions of the weft executable that start-up runs.

The weft executable is linked with lld's --symbol-ordering-file naming these functions
(tools/CMakeLists.txt, docs/design/packaging.md "Start-up layout"), so the code a short
script runs sits in a few contiguous pages instead of being spread over the whole text:
the kernel maps file pages around each fault, so scattered start-up code made nearly all
of the executable's 2 MB resident for `weft -e ''`.

    python3 tools/startup_order.py [--weft build/tools/weft] [--out tools/weft/startup.order]

It runs `weft -e ''` and `weft examples/hello.lua` under valgrind's callgrind and writes
the mangled names of every function of the executable that ran, sorted. A stale list
only costs memory (names that no longer exist are ignored at link time), so regenerate it
when start-up's RSS in bench/run.py creeps up. Needs valgrind; standard library only.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

OBJECT = re.compile(r"^(c?ob)=\((\d+)\)(?: (.*))?$")
FUNCTION = re.compile(r"^(c?fn)=\((\d+)\)(?: (.*))?$")


def executed_functions(profile, executable):
    """Names of the functions callgrind saw run inside `executable`.

    Callgrind compresses names: `ob=(n) path` and `fn=(n) name` define an id the first
    time and repeat only `(n)` later; `cob=`/`cfn=` (a call's target) define ids too.
    """
    objects, functions, names, current = {}, {}, set(), None
    for line in open(profile, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        match = OBJECT.match(line)
        if match:
            kind, ident, name = match.groups()
            if name:
                objects[ident] = name
            if kind == "ob":
                current = objects.get(ident)
            continue
        match = FUNCTION.match(line)
        if match:
            kind, ident, name = match.groups()
            if name:
                functions[ident] = name
            if kind == "fn" and current and os.path.realpath(current) == executable:
                names.add(functions[ident])
    # Callgrind's own labels: addresses without a symbol, "(below main)", and a "'N"
    # suffix marking a recursion level of a name listed anyway.
    return {n for n in names if not n.startswith("0x") and not n.startswith("(") and "'" not in n}


def profile(executable, args):
    with tempfile.NamedTemporaryFile(suffix=".callgrind") as out:
        cmd = ["valgrind", "--tool=callgrind", "--demangle=no", "--callgrind-out-file=" + out.name,
               executable] + args
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return executed_functions(out.name, executable)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", default=os.path.join(ROOT, "build", "tools", "weft"))
    parser.add_argument("--out", default=os.path.join(HERE, "weft", "startup.order"))
    args = parser.parse_args()
    executable = os.path.realpath(args.weft)
    names = profile(executable, ["-e", ""]) | profile(executable, [os.path.join(ROOT, "examples", "hello.lua")])
    if not names:
        print("startup_order.py: callgrind saw no function of %s" % executable, file=sys.stderr)
        return 1
    with open(args.out, "w") as f:
        f.write("".join(n + "\n" for n in sorted(names)))
    print("%s: %d functions" % (os.path.relpath(args.out), len(names)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
