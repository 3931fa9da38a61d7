#!/usr/bin/env python3
"""The C module loader against lua5.4: tests/package/cmodules.lua with the test modules,
and package.cpath/package.path from the environment.

- cmodules.lua runs under weft, weft --gc-stress=relocate --gc-verify, and lua5.4, with
  WEFT_CMODULES naming the directory of the test modules; every run must print
  cmodules.expected (so the modules, built against Weft's headers, also load in lua5.4).
- package.cpath and package.path as weft and lua5.4 print them: the defaults, LUA_CPATH
  and LUA_CPATH_5_4 (which wins), ";;" for the default at the start, middle and end, and
  -E, which ignores them all; the two must print the same.

  python3 tests/package/cmodules_test.py --weft build/tools/weft --lua lua5.4 --modules DIR
      [--no-oracle-modules]
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHOW = "print(package.cpath) print(package.path)"
ENVIRONMENTS = [
    ("the defaults", {}, []),
    ("LUA_CPATH", {"LUA_CPATH": "/a/?.so"}, []),
    ("LUA_CPATH_5_4 before LUA_CPATH", {"LUA_CPATH": "/a/?.so", "LUA_CPATH_5_4": "/b/?.so"}, []),
    ("';;' at the end", {"LUA_CPATH": "/a/?.so;;"}, []),
    ("';;' at the start", {"LUA_CPATH_5_4": ";;/a/?.so"}, []),
    ("';;' in the middle, once", {"LUA_CPATH": "/a/?.so;;/b/?.so;;"}, []),
    ("';;' alone", {"LUA_CPATH": ";;"}, []),
    ("LUA_PATH beside", {"LUA_PATH": "/p/?.lua;;", "LUA_CPATH": "/c/?.so"}, []),
    ("-E", {"LUA_CPATH": "/a/?.so", "LUA_CPATH_5_4": "/b/?.so", "LUA_PATH": "/p/?.lua"}, ["-E"]),
]
failures = []


def check(ok, what, detail=""):
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        print(detail)
        failures.append(what)


def run(cmd, env, cwd=None):
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", required=True)
    parser.add_argument("--lua", default="lua5.4")
    parser.add_argument("--modules", required=True)
    parser.add_argument("--no-oracle-modules", action="store_true",
                        help="skip cmodules.lua under lua5.4 (modules built with sanitizers)")
    args = parser.parse_args()
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LUA_")}

    with open(os.path.join(HERE, "cmodules.expected")) as f:
        expected = f.read()
    env = dict(clean, WEFT_CMODULES=os.path.abspath(args.modules))
    for label, cmd in [("weft", [args.weft]), ("weft relocate", [args.weft, "--gc-stress=relocate", "--gc-verify"]),
                       ("lua5.4", None if args.no_oracle_modules else [args.lua])]:
        if cmd is None:
            continue
        p = run(cmd + ["cmodules.lua"], env, cwd=HERE)
        check(p.returncode == 0 and p.stdout == expected and not p.stderr, "cmodules.lua under %s" % label,
              "exit %d\n--- stdout\n%s--- stderr\n%s" % (p.returncode, p.stdout, p.stderr))

    for label, extra, flags in ENVIRONMENTS:
        env = dict(clean, **extra)
        w = run([args.weft] + flags + ["-e", SHOW], env)
        l = run([args.lua] + flags + ["-e", SHOW], env)
        check(w.returncode == 0 and w.stdout == l.stdout, "package.cpath and package.path with %s" % label,
              "weft:\n%s%s\nlua5.4:\n%s" % (w.stdout, w.stderr, l.stdout))
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
