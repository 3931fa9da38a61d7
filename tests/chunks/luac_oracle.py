#!/usr/bin/env python3
"""Binary chunks across interpreters: Weft's string.dump against luac5.4 and lua5.4.

Over a corpus of scripts (tests/lua/*.lua by default), run from the corpus directory so
chunk names agree ("@NAME.lua"):
  bytes     where Weft's listing (weft --list --list) equals `luac5.4 -l -l`, Weft's
            string.dump of the script is byte for byte luac5.4's output, with and
            without -s (stripping); with --lua548, every script's dump equals Lua
            5.4.8's (whose code generator carries the 5.4.5 fixes Weft follows)
  luac>weft luac5.4's output (and luac5.4 -s's) loads under weft; for the scripts the
            oracle runs (no "-- weft-only", no tasks, no expected stderr) and whose
            output lua5.4 itself reproduces from luac5.4's chunk, running it under weft
            prints NAME.expected (but "-- weft-from-source" scripts: binary chunks keep
            their dead registers alive, docs/design/gc-dead-slots.md)
  weft>lua  Weft's dump of those scripts runs under lua5.4 and prints NAME.expected;
            Weft's dumps of every script load under lua5.4 (and under --lua548)
  relocate  luac5.4's output of the --relocate scripts runs under
            weft --gc-stress=relocate --gc-verify and prints NAME.expected
Prints one line per failure and a summary; exits 1 on any failure. Standard library only.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

MIN_BYTE_EQUAL = 10  # a corpus where fewer scripts compare would make the test vacuous

DUMP = "io.write(string.dump(assert(loadfile(%r)), %s))"
LOADS = "local f, e = loadfile(%r) if not f then io.stderr:write(e) os.exit(1) end"


def headers(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        head = "".join(line for _, line in zip(range(5), f))
    return head


def oracle_runs(path):
    """Whether lua5.4 runs the script (tests/lua/CMakeLists.txt's oracle mode) and its
    output alone decides (no expected stderr, exit status 0)."""
    head = headers(path)
    base = path[:-4]
    return ("-- weft-only" not in head and "-- weft-tasks" not in head and "expect-exit" not in head
            and not os.path.exists(base + ".expected-stderr") and os.path.exists(base + ".expected"))


def normalise_listing(text):
    # Function addresses: luac prints pointers, weft prints F0, F0.1, ...
    return re.sub(r"0x[0-9a-f]+|\bF0(?:\.[0-9]+)*", "ADDR", text)


class Run:
    def __init__(self, args, directory, tmp):
        self.args = args
        self.dir = directory
        self.tmp = tmp
        self.failures = 0
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("LUA_")}
        self.weft_env = dict(self.env, WEFT_TEST="1")

    def run(self, cmd, weft=False, timeout=300):
        return subprocess.run(cmd, cwd=self.dir, env=self.weft_env if weft else self.env,
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)

    def fail(self, what):
        self.failures += 1
        print("FAIL: " + what, flush=True)

    def out(self, name, suffix):
        return os.path.join(self.tmp, name + suffix)

    def weft_dump(self, script, strip):
        p = self.run([self.args.weft, "-e", DUMP % (script, "true" if strip else "false")], weft=True)
        return p.stdout if p.returncode == 0 else None

    def lua_dump(self, lua, script):
        p = self.run([lua, "-e", DUMP % (script, "false")])
        return p.stdout if p.returncode == 0 else None

    def luac(self, script, strip):
        out = self.out(script, ".s.luac" if strip else ".luac")
        p = self.run([self.args.luac] + (["-s"] if strip else []) + ["-o", out, script])
        if p.returncode != 0:
            return None
        with open(out, "rb") as f:
            return f.read()

    def expected(self, script):
        with open(os.path.join(self.dir, script[:-4] + ".expected"), "rb") as f:
            return f.read()

    def loads(self, interpreter, chunk_file, weft=False):
        p = self.run([interpreter, "-e", LOADS % chunk_file], weft=weft)
        return p.returncode == 0, p.stderr.decode("utf-8", "replace").strip()

    def binary_neutral(self, script):
        """Whether lua5.4 prints NAME.expected from luac5.4's chunk as from the source. Not
        every script does: Lua's loader gives each long string constant an object of its
        own where its compiler shares one, and `%p` shows it."""
        p = self.run([self.args.lua, self.out(script, ".luac")], timeout=self.args.timeout)
        return p.returncode == 0 and p.stdout == self.expected(script)

    def runs_as_expected(self, what, cmd, script, weft):
        p = self.run(cmd, weft=weft, timeout=self.args.timeout)
        if p.returncode != 0 or p.stdout != self.expected(script):
            self.fail("%s: exit %d, output differs from %s.expected; stderr: %s" %
                      (what, p.returncode, script[:-4], p.stderr.decode("utf-8", "replace")[:300]))
            return False
        return True

    def script(self, script, counts):
        full = self.luac(script, False)
        if full is None:
            return  # a script that does not compile (it tests syntax errors)
        stripped = self.luac(script, True)
        counts["scripts"] += 1
        wfull, wstripped = self.weft_dump(script, False), self.weft_dump(script, True)
        if wfull is None or wstripped is None:
            self.fail("%s: weft cannot dump it" % script)
            return
        wlist = self.run([self.args.weft, "--list", "--list", script], weft=True).stdout.decode("utf-8", "replace")
        llist = self.run([self.args.luac, "-l", "-l", "-p", script]).stdout.decode("utf-8", "replace")
        if normalise_listing(wlist) == normalise_listing(llist):
            counts["byte-equal"] += 1
            if wfull != full:
                self.fail("%s: same listing as luac5.4, different bytes" % script)
            if wstripped != stripped:
                self.fail("%s: same listing as luac5.4, different stripped bytes" % script)
        if self.args.lua548:
            if self.lua_dump(self.args.lua548, script) != wfull:
                self.fail("%s: bytes differ from Lua 5.4.8's string.dump" % script)
            else:
                counts["5.4.8-equal"] += 1

        wfile = self.out(script, ".weft.luac")
        with open(wfile, "wb") as f:
            f.write(wfull)
        for chunk in (self.out(script, ".luac"), self.out(script, ".s.luac")):
            ok, err = self.loads(self.args.weft, chunk, weft=True)
            if not ok:
                self.fail("%s: weft cannot load luac5.4's %s: %s" % (script, os.path.basename(chunk), err))
        for lua in [self.args.lua] + ([self.args.lua548] if self.args.lua548 else []):
            ok, err = self.loads(lua, wfile)
            if not ok:
                self.fail("%s: %s cannot load Weft's dump: %s" % (script, lua, err))
        if (oracle_runs(os.path.join(self.dir, script)) and self.binary_neutral(script)
                and "-- weft-from-source" not in headers(os.path.join(self.dir, script))):
            counts["run both ways"] += 1
            self.runs_as_expected("%s compiled by luac5.4, under weft" % script,
                                  [self.args.weft, self.out(script, ".luac")], script, weft=True)
            self.runs_as_expected("%s dumped by weft, under lua5.4" % script, [self.args.lua, wfile], script,
                                  weft=False)
        if script in self.args.relocate:
            counts["relocate"] += 1
            self.runs_as_expected("%s compiled by luac5.4, under weft relocate stress" % script,
                                  [self.args.weft, "--gc-stress=relocate", "--gc-verify", self.out(script, ".luac")],
                                  script, weft=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", required=True)
    parser.add_argument("--lua", default="lua5.4")
    parser.add_argument("--luac", default="luac5.4")
    parser.add_argument("--lua548", help="a Lua 5.4.8 interpreter (optional)")
    parser.add_argument("--corpus", required=True, help="a directory of scripts (tests/lua)")
    parser.add_argument("--relocate", action="append", default=[], help="a corpus script to run under relocation")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()

    directory = os.path.abspath(args.corpus)
    for attr in ("weft", "lua", "luac", "lua548"):  # the runs start in the corpus directory
        value = getattr(args, attr)
        if value and os.sep in value:
            setattr(args, attr, os.path.abspath(value))
    counts = {"scripts": 0, "byte-equal": 0, "5.4.8-equal": 0, "run both ways": 0, "relocate": 0}
    with tempfile.TemporaryDirectory(prefix="weft-luac-") as tmp:
        run = Run(args, directory, tmp)
        for path in sorted(glob.glob(os.path.join(directory, "*.lua"))):
            run.script(os.path.basename(path), counts)
        if counts["byte-equal"] < MIN_BYTE_EQUAL:
            run.fail("only %d scripts compile as luac5.4 does (at least %d expected)" %
                     (counts["byte-equal"], MIN_BYTE_EQUAL))
        if len(args.relocate) != counts["relocate"]:
            run.fail("relocate scripts not found in the corpus: %s" % args.relocate)
    print(", ".join("%s %d" % kv for kv in counts.items()) + "; %d failures" % run.failures)
    return 1 if run.failures else 0


if __name__ == "__main__":
    sys.exit(main())
