#!/usr/bin/env python3
"""Regenerate tools/weft/text.order (or jit/text.order): the functions that scripts run, in layout order.

The weft executable and the JIT's module (libweft_jit.so) are linked with lld's
--symbol-ordering-file naming these functions (cmake/layout.cmake, docs/design/packaging.md
"Text layout"), so the code a script runs sits in a few contiguous pages instead of
being spread over the whole text: the kernel maps the 64 KiB of file pages around each
fault, so one function used far from the others costs 64 KiB of RSS.

    python3 tools/text_order.py [--weft build/tools/weft] [--jit] [--out FILE]

The executable's list has two tiers, each profiled with valgrind's callgrind:
  1. start-up: what `weft -e ''` and `weft examples/hello.lua` run, with and without
     --jit=off (its option's validator; bench/run.py passes it), and the entry point,
     sorted by name;
  2. the rest of what the benchmark scripts run (bench/*.lua at bench/run.py's quick
     sizes, and a loop that makes the collector run its minors and a major), the
     functions most scripts share first, so a script maps a prefix and a few extra pages.
--jit profiles the module (build/jit/libweft_jit.so beside the executable's build) in
the benchmark scripts run with --jit=eager, which compiles every function they call: its
functions most runs share first (loading LLVM and compiling anything), then the rest.
Functions that no run reached follow in the linker's order. A stale list only costs
memory (names that no longer exist are ignored at link time), so regenerate it when the
RSS columns of bench/run.py creep up, or LLVM changes. Needs valgrind; standard library
only.
"""

import argparse
import collections
import concurrent.futures
import glob
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

OBJECT = re.compile(r"^(c?ob)=\((\d+)\)(?: (.*))?$")
FUNCTION = re.compile(r"^(c?fn)=\((\d+)\)(?: (.*))?$")

# Short-lived tables, then some kept: minors (with survivors and promotions), then majors.
COLLECTING = ("local keep = {} for i = 1, 300000 do local t = {i, tostring(i)} "
              "if i % 64 == 0 then keep[#keep + 1] = t end end "
              "collectgarbage('step') collectgarbage()")


# The entry point and the constructor that C runtime start-up files run before main:
# callgrind lists them as "(below main)".
ENTRY = {"_start", "frame_dummy", "register_tm_clones"}


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


def profile(executable, args, profiled=None):
    """Names of the functions that `executable args` ran in `profiled` (by default itself)."""
    with tempfile.NamedTemporaryFile(suffix=".callgrind") as out:
        cmd = ["valgrind", "--tool=callgrind", "--demangle=no", "--callgrind-out-file=" + out.name,
               executable] + args
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        return executed_functions(out.name, profiled or executable)


def benchmark_runs():
    """The argument lists of tier 2: each benchmark script at its quick size, and COLLECTING."""
    spec = importlib.util.spec_from_file_location("bench_run", os.path.join(ROOT, "bench", "run.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    runs = [["-e", COLLECTING]]
    for script in sorted(glob.glob(os.path.join(ROOT, "bench", "*.lua"))):
        name = os.path.splitext(os.path.basename(script))[0]
        runs.append([script] + ([bench.QUICK_SIZES[name]] if name in bench.QUICK_SIZES else []))
    return runs


def by_sharing(seen):
    """The names of `seen` (sets of names), those in the most sets first, then by name."""
    shared = collections.Counter(name for names in seen for name in names)
    return sorted(shared, key=lambda name: (-shared[name], name))


def profile_all(executable, runs, profiled=None):
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return list(pool.map(lambda run: profile(executable, run, profiled), runs))


def executable_order(executable):
    hello = os.path.join(ROOT, "examples", "hello.lua")
    startups = [["-e", ""], [hello], ["--jit=off", "-e", ""], ["--jit=off", hello]]
    seen = profile_all(executable, startups + benchmark_runs())
    startup = set().union(ENTRY, *seen[:len(startups)])
    rest = by_sharing([names - startup for names in seen[len(startups):]])
    return sorted(startup) + rest, "%d start-up functions, %d more that the benchmarks run" % (len(startup), len(rest))


def module_order(executable):
    module = os.path.realpath(os.path.join(os.path.dirname(executable), "..", "jit", "libweft_jit.so"))
    # A run whose code the VM rejects without asking the module never loads it.
    seen = [names for names in profile_all(executable, [["--jit=eager"] + run for run in benchmark_runs()], module) if names]
    order = by_sharing(seen)
    everywhere = sum(1 for name in order if all(name in names for names in seen))
    return order, "%d functions of the module, %d of them in each of the %d runs that load it" % (
        len(order), everywhere, len(seen))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", default=os.path.join(ROOT, "build", "tools", "weft"))
    parser.add_argument("--jit", action="store_true", help="order the JIT's module instead of the executable")
    parser.add_argument("--out")
    args = parser.parse_args()
    executable = os.path.realpath(args.weft)
    out = args.out or (os.path.join(ROOT, "jit", "text.order") if args.jit else os.path.join(HERE, "weft", "text.order"))
    order, summary = (module_order if args.jit else executable_order)(executable)
    if not order:
        print("text_order.py: callgrind saw no function to order", file=sys.stderr)
        return 1
    with open(out, "w") as f:
        f.write("".join(n + "\n" for n in order))
    print("%s: %s" % (os.path.relpath(out), summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
