#!/usr/bin/env python3
"""Differential check of the JIT (docs/design/jit.md): programs run interpreted
(--jit=off), compiled without feedback (--jit=eager: generic code) and compiled with
feedback (--jit=on --jit-threshold=40, calls repeated: specialised code whose guards exit
when types change) must print the same and exit alike. The programs are the fuzz_run
corpus's Lua seeds (tests/fuzz/corpus/fuzz_run, with a small size argument; fuzz_run
itself mutates bytes and has no program generator) and programs this script generates
from a seed: loops of the compiled subset (integer and float arithmetic, comparisons,
numeric for and while loops, table and upvalue reads and writes, math.sqrt) over values
whose types change mid-loop, at the integer limits, with NaNs and errors, and tables that
gain a metatable, lose keys, grow or stop being tables while compiled code reads them. A mismatch
prints the program's seed and both outputs; --keep DIR saves the program."""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

MODES = {
    "interpreted": ["--jit=off"],
    "eager": ["--jit=eager"],
    # Queued within a first call's loop, so the feedback is that call's types.
    "specialised": ["--jit=on", "--jit-threshold=40"],
}
# Processor seconds a generated program repeats its calls for in the specialised run (half
# to warm up): a compilation takes 40 to 100 ms of the compile thread's time here.
REPEAT_SECONDS = "0.6"
CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus", "fuzz_run")
# The seeds' size argument (arg[1]): small enough for three runs each; fib's is a depth.
CORPUS_SIZE = {"bench_fib.lua": "20", "bench_loops.lua": "200"}

# Values an operand may start as or turn into: integers (small, negative, at the limits),
# floats (fractions, huge, NaN-making), and a numeric string (coerced by arithmetic).
ATOMS = ["0", "1", "-3", "7", "255", "math.maxinteger", "math.mininteger", "0.5", "-1.25", "1e308", "2^53",
         "-0.0", "3.0", '"12"']
ARITH = ["+", "-", "*", "/", "//", "%", "^"]
BITWISE = ["&", "|", "~", "<<", ">>"]
COMPARE = ["<", "<=", ">", ">=", "==", "~="]


class Generator:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def operand(self, names):
        r = self.r
        return r.choice(names) if r.random() < 0.7 else r.choice(ATOMS)

    def statement(self, names, depth):
        r = self.r
        target = r.choice(names[:3])  # x, y, z: the loop's variables
        kind = r.randrange(14)
        if kind < 4:
            # Half of them accumulate, so a value depends on every iteration.
            left = target if r.random() < 0.5 else self.operand(names)
            return f"{target} = {left} {r.choice(ARITH)} {self.operand(names)}"
        if kind == 4:
            # Bitwise operators need integers: a float or string operand raises an error.
            # Shifts of 64 and more either way give 0.
            right = r.choice(['i', '0xff', '-1', '63', '-64', '~i'])
            return f"{target} = {self.operand(names)} {r.choice(BITWISE)} {right}"
        if kind == 5 and depth < 2:
            body = self.block(names, depth + 1, r.randint(1, 3))
            other = self.block(names, depth + 1, r.randint(0, 2))
            cond = f"{self.operand(names)} {r.choice(COMPARE)} {self.operand(names)}"
            return f"if {cond} then {body} else {other} end"
        if kind == 6:
            return f"t[i % 8 + 1] = {target}"
        if kind == 7:
            return f"{target} = t[(i * 3) % 8 + 1] or {self.operand(names)}"
        if kind == 8:
            # A type change at one iteration: guards built on feedback exit here.
            return f"if i == {r.randint(1, 40)} then {target} = {r.choice(ATOMS)} end"
        if kind == 10:
            # Array reads inline, in and out of the array part (0, past the end, float keys).
            key = r.choice(["i", "i - 3", "3", "(i * 5) % 11", "#t", "i // 2", "9"])
            return f"{target} = (t[{key}] or {self.operand(names)}) + {self.operand(names)}"
        if kind == 11:
            # Field reads inline: present, cleared or absent, maybe through an __index.
            return f"{target} = {target} + (t.{r.choice(['a', 'b', 'c'])} or {r.choice(ATOMS)})"
        if kind == 12:
            # The table changes under the reads: a metatable with __index, a field or
            # slot cleared, an append (a rebuild), a table that is no table.
            change = r.choice([
                f"setmetatable(t, {{__index = function(_, k) return {r.choice(ATOMS)} end}})",
                f"setmetatable(t, {{__index = {{a = {r.choice(ATOMS)}, c = 1, [9] = 2}}}})",
                "t.a = nil", f"t[{r.randint(1, 8)}] = nil", f"t[#t + 1] = {target}",
                "t = " + r.choice(["{}", "{c = 5}", '"str"', "7"]),
            ])
            return f"if i == {r.randint(1, 40)} then {change} end"
        if kind == 13:
            return f"{target} = t[{r.randint(1, 8)}] + t.b"
        return f"{target} = math.sqrt({r.choice(['i', '2', '0.25'])}) + up"

    def block(self, names, depth, count):
        return "; ".join(self.statement(names, depth) for _ in range(count))

    def loop(self, names):
        r = self.r
        body = self.block(names, 0, r.randint(2, 6))
        if r.random() < 0.3:
            step = r.choice(["1", "2", "3"])
            return f"local i = 0; while i < n do i = i + {step}; {body} end"
        start, step = r.choice([("1", "1"), ("n", "-1"), ("0.5", "0.75"), ("1", "3"), ("n", "-2.5")])
        return f"for i = {start}, {'1' if step.startswith('-') else 'n'}, {step} do {body} end"

    def program(self):
        r = self.r
        names = ["x", "y", "z", "i", "up"]
        head = [
            "local function show(v)",
            '  if math.type(v) == "float" then return string.format("%.17g", v) end',
            "  return tostring(v)",
            "end",
            "local out",
            "local function emit(ok, a, b, c)",
            "  out[#out + 1] = ok and show(a) .. ' ' .. show(b) .. ' ' .. show(c) or 'error ' .. tostring(a)",
            "end",
            "local function emitTable(t)",
            "  local line = {}",
            "  for j = 1, 8 do line[j] = show(t[j]) end",
            "  out[#out + 1] = table.concat(line, ' ')",
            "end",
            f"local up = {r.choice(['1', '0.5', '-2'])}",
        ]
        calls = []
        for k in range(r.randint(2, 4)):
            head += [
                f"local function f{k}(n, x, y, t)",
                f"  local z = {r.choice(ATOMS)}",
                "  " + self.loop(names),
                "  return x, y, z",
                "end",
            ]
            for c in range(r.randint(2, 4)):
                args = f"{r.randint(1, 60)}, {r.choice(ATOMS)}, {r.choice(ATOMS)}"
                table = "{1, 2.5, 3, 4, 5, 6, 7, 8, a = 3, b = 0.5}"
                call = f"do local t = {table} emit(pcall(f{k}, {args}, t)) emitTable(t) end"
                calls.append("  " + call if c == 0 else f"  if not warm then {call} end")
        # One round of calls is the output. Given a number of seconds (the specialised
        # run), the program first repeats each function's first call for half that much
        # processor time (the compile thread's included), so the code is compiled from
        # those calls' types alone; then it repeats whole rounds, whose other calls meet
        # the specialised code with other types (guard exits, recompilation), and prints
        # any round that differs from the first.
        tail = [
            "local function round(warm)",
            "  out = {}",
            *calls,
            "  return table.concat(out, '\\n')",
            "end",
            "local seconds = tonumber(arg and arg[1])",
            "if seconds then",
            "  local deadline = os.clock() + seconds / 2",
            "  repeat round(true) until os.clock() > deadline",
            "end",
            "local first = round(false)",
            "print(first)",
            "if seconds then",
            "  local deadline, rounds = os.clock() + seconds / 2, 1",
            "  repeat",
            "    local again = round(false)",
            "    rounds = rounds + 1",
            "    if again ~= first then print('round ' .. rounds .. ' differs:') print(again) break end",
            "  until os.clock() > deadline",
            "end",
        ]
        return "\n".join(head + tail) + "\n"


STATS = re.compile(r"^jit: (\d+) entries", re.MULTILINE)
RECOMPILED = re.compile(r"^jit: \d+ functions compiled, .* (\d+) recompiled", re.MULTILINE)


class Checker:
    def __init__(self, weft):
        self.weft = weft
        self.entries = {mode: 0 for mode in MODES}  # compiled code entered, over every run
        self.recompiled = 0  # code replaced after its guards failed, over every run

    def run(self, mode, path, args):
        """(exit status, stdout, stderr without the --jit-stats report)."""
        cmd = [self.weft, *MODES[mode], "--jit-stats", path, *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        stats = STATS.search(proc.stderr)
        if stats:
            self.entries[mode] += int(stats.group(1))
        recompiled = RECOMPILED.search(proc.stderr)
        if recompiled:
            self.recompiled += int(recompiled.group(1))
        err = "".join(line for line in proc.stderr.splitlines(keepends=True) if not line.startswith("jit:"))
        return proc.returncode, proc.stdout, err

    def compare(self, path, args, label, repeat):
        """None when both compiled modes agree with the interpreter, else a report. The
        specialised run gets `repeat` (seconds of rounds) after the arguments."""
        want = self.run("interpreted", path, args)
        for mode in ("eager", "specialised"):
            got = self.run(mode, path, args + (repeat if mode == "specialised" else []))
            if got != want:
                return f"{label}: {mode} differs from interpreted\n  interpreted: {want!r}\n  {mode}: {got!r}"
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", required=True)
    parser.add_argument("--programs", type=int, default=25, help="generated programs (default 25)")
    parser.add_argument("--seed", type=int, default=1, help="the first program's seed (default 1)")
    parser.add_argument("--keep", help="directory where a differing program is saved")
    args = parser.parse_args()
    checker = Checker(args.weft)
    failures = []
    for name in sorted(os.listdir(CORPUS)):
        if name.endswith(".lua"):
            size = CORPUS_SIZE.get(name, "2000")
            report = checker.compare(os.path.join(CORPUS, name), [size], f"corpus {name}", [])
            if report:
                failures.append(report)
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seed, args.seed + args.programs):
            path = os.path.join(tmp, f"gen{seed}.lua")
            with open(path, "w") as f:
                f.write(Generator(seed).program())
            report = checker.compare(path, [], f"generated program, seed {seed}", [REPEAT_SECONDS])
            if report:
                failures.append(report)
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    with open(path) as src, open(os.path.join(args.keep, f"gen{seed}.lua"), "w") as dst:
                        dst.write(src.read())
    if failures:
        sys.exit("jit_differential.py:\n" + "\n".join(failures))
    # The check compares compiled code, and code whose guards failed, only if some ran.
    for mode in ("eager", "specialised"):
        if checker.entries[mode] == 0:
            sys.exit(f"jit_differential.py: no {mode} run entered compiled code")
    if checker.recompiled == 0:
        sys.exit("jit_differential.py: no specialised code was recompiled after guard exits")
    print(f"ok: compiled code entered {checker.entries['eager']} times eagerly, "
          f"{checker.entries['specialised']} times specialised; {checker.recompiled} recompilations")


if __name__ == "__main__":
    main()
