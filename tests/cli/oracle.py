#!/usr/bin/env python3
"""The `lua` command's behaviour, compared with lua5.4's byte for byte.

Each case runs `lua ARGS` twice, once through a symlink named `lua` to weft and once
through one to lua5.4, both found on PATH so that argv[0] is `lua` in both; standard
output, standard error and the exit status must be identical. Messages must therefore
name the program as invoked (`lua:`), and a bad command line must print lua's short
usage.

  python3 tests/cli/oracle.py --weft build/tools/weft [--lua lua5.4]

Prints one line per case and closes with `N passed, M failed`; exit 1 on any failure.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

CASES = [
    ("an unknown option", ["-x"]),
    ("an unknown long option", ["--nope"]),
    ("-e without its argument", ["-e"]),
    ("-l without its argument", ["-l"]),
    ("an uncaught error", ["-e", "error('boom')"]),
    ("an error with a table value", ["-e", "error({})"]),
    ("a syntax error", ["-e", "x ="]),
    ("a missing script", ["no-such-script.lua"]),
    ("arguments after the script", ["-e", "print(...)", "-", "a", "b"]),
]


def run_as_lua(target, args, workdir):
    bindir = os.path.join(workdir, os.path.basename(target) + ".bin")
    os.makedirs(bindir, exist_ok=True)
    link = os.path.join(bindir, "lua")
    if not os.path.islink(link):
        os.symlink(os.path.abspath(target), link)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LUA_")}
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    proc = subprocess.run(["lua"] + args, cwd=workdir, env=env, input=b"", capture_output=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", required=True)
    parser.add_argument("--lua", default="lua5.4")
    args = parser.parse_args()
    lua = shutil.which(args.lua) or args.lua
    passed = failed = 0
    with tempfile.TemporaryDirectory() as workdir:
        for label, argv in CASES:
            want = run_as_lua(lua, argv, workdir)
            got = run_as_lua(args.weft, argv, workdir)
            if got == want:
                passed += 1
                print("ok   %s" % label)
                continue
            failed += 1
            print("FAIL %s: lua %s" % (label, " ".join(argv)))
            for name, w, g in zip(("exit status", "stdout", "stderr"), want, got):
                if w != g:
                    print("  %s: lua5.4 %r\n  %s  weft   %r" % (name, w, " " * len(name), g))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
