#!/usr/bin/env python3
"""Run the official Lua 5.4 test suite (the release's testes/ directory) against weft.

The suite is never copied into this repository: pass the path of a testes/ directory from
a Lua 5.4.8 release checkout. Each listed file runs the way the suite's driver runs it, but
in a process of its own: from inside the testes directory, with the globals _port and
_soft set to true before the file runs (no non-portable and no long tests), under a
per-file timeout.

    python3 tools/testes.py TESTES_DIR --weft build/tools/weft [--mode MODE]
    python3 tools/testes.py TESTES_DIR --lua /path/to/lua-5.4.8/lua

Modes (weft only):
    plain     weft FILE
    relocate  weft --gc-stress=relocate --gc-verify --gc-interval=N FILE
    workers1  weft --workers 1 FILE
    workers   weft FILE with WEFT_WORKERS removed from the environment (one worker per
              processor)
With --lua the interpreter is PUC-Rio's `lua` and only the plain mode applies; that run is
how LISTED was chosen. --candidates runs every file of the directory that is not a helper
(to re-derive LISTED for a new release). The tool prints one row per file and a closing line
`N passed, M failed`; it exits 1 when any file fails or times out.

Only the Python 3 standard library is used.
"""

import argparse
import os
import subprocess
import sys
import time

# The files that PUC-Rio's Lua 5.4.8 passes this way (checked with --lua --candidates).
# EXCLUDED says why the other files of the directory are not run.
LISTED = [
    "attrib.lua", "big.lua", "bitwise.lua", "calls.lua", "closure.lua",
    "constructs.lua", "coroutine.lua", "cstack.lua", "db.lua", "errors.lua",
    "events.lua", "files.lua", "gc.lua", "gengc.lua", "goto.lua",
    "literals.lua", "locals.lua", "main.lua", "math.lua", "nextvar.lua", "pm.lua",
    "sort.lua", "strings.lua", "tpack.lua", "utf8.lua", "vararg.lua", "verybig.lua",
]

EXCLUDED = {
    "all.lua": "the driver itself",
    "api.lua": "needs the internal test library T of a build with ltests.h",
    "code.lua": "needs the internal test library T of a build with ltests.h",
    "bwcoercion.lua": "a module that other files require",
    "tracegc.lua": "a module that other files require",
    "heavy.lua": "not in the driver; ignores _soft and fills memory until allocation fails",
}

# Seconds a file may take in plain mode; the relocate mode multiplies this.
DEFAULT_TIMEOUT = 120
RELOCATE_FACTOR = 5
DEFAULT_INTERVAL = 1000

# Weft's state per file, kept up to date by whoever fixes one: a file named here is
# expected to fail in plain mode, for the reason given (printed next to a failure so a
# new failure stands out). A file missing here is expected to pass.
KNOWN_FAILING = {}

PRELUDE = "_port=true _soft=true"


def modeArgs(mode, interval):
    if mode == "plain" or mode == "workers":
        return []
    if mode == "relocate":
        return ["--gc-stress=relocate", "--gc-verify", "--gc-interval=%d" % interval]
    if mode == "workers1":
        return ["--workers", "1"]
    raise ValueError(mode)


def firstErrorLine(stdout, stderr):
    """The first line of the error, and where the traceback says it was raised when the
    message itself names no place (`assertion failed!`)."""
    for text in (stderr, stdout):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if not lines:
            continue
        first = lines[0]
        for line in lines[1:]:
            if ".lua:" in line and line.split(":")[0].endswith(".lua"):
                if line.split(" ")[0] not in first:
                    first += "  (at %s)" % line.split(" ")[0].rstrip(":")
                break
        return first
    return ""


def runFile(command, testes, name, timeout, env):
    started = time.monotonic()
    try:
        proc = subprocess.run(command + ["-e", PRELUDE, name], cwd=testes, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stderr or b"").decode("utf-8", "replace")
        return "timeout", time.monotonic() - started, "no result in %d s %s" % (
            timeout, firstErrorLine("", out))
    elapsed = time.monotonic() - started
    stdout = proc.stdout.decode("utf-8", "replace")
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode == 0:
        return "pass", elapsed, ""
    detail = firstErrorLine(stdout if not stderr.strip() else "", stderr)
    if proc.returncode < 0:
        detail = "signal %d %s" % (-proc.returncode, detail)
    return "fail", elapsed, detail


def parseArgs(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("testes", help="the testes/ directory of a Lua 5.4.8 checkout")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--weft", help="the weft binary")
    who.add_argument("--lua", help="a reference lua binary (plain mode only)")
    p.add_argument("--mode", default="plain",
                   choices=["plain", "relocate", "workers1", "workers"])
    p.add_argument("--interval", type=int, default=DEFAULT_INTERVAL,
                   help="--gc-interval for the relocate mode (default %(default)s)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help="seconds per file in plain mode (default %(default)s)")
    p.add_argument("--candidates", action="store_true",
                   help="run every non-helper file of the directory, not only LISTED")
    p.add_argument("files", nargs="*", help="run only these files (default: LISTED)")
    return p.parse_intermixed_args(argv)


def chooseFiles(args):
    if args.files:
        return [f if f.endswith(".lua") else f + ".lua" for f in args.files]
    if args.candidates:
        return sorted(f for f in os.listdir(args.testes)
                      if f.endswith(".lua") and f not in EXCLUDED)
    return LISTED


def main(argv):
    args = parseArgs(argv)
    testes = os.path.abspath(args.testes)
    env = dict(os.environ)
    if args.lua:
        if args.mode != "plain":
            sys.exit("testes.py: --lua runs only the plain mode")
        command = [os.path.abspath(args.lua)]
    else:
        command = [os.path.abspath(args.weft)] + modeArgs(args.mode, args.interval)
        if args.mode == "workers":
            env.pop("WEFT_WORKERS", None)
    timeout = args.timeout * (RELOCATE_FACTOR if args.mode == "relocate" else 1)

    files = chooseFiles(args)
    width = max(len(f) for f in files)
    passed = failed = 0
    print("%-*s  %-7s  %7s  %s" % (width, "file", "result", "seconds", "first error line"))
    for name in files:
        result, elapsed, detail = runFile(command, testes, name, timeout, env)
        if result == "pass":
            passed += 1
        else:
            failed += 1
            if args.weft and name in KNOWN_FAILING:
                detail += "  [known: %s]" % KNOWN_FAILING[name]
        print("%-*s  %-7s  %7.1f  %s" % (width, name, result, elapsed, detail[:160]),
              flush=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
