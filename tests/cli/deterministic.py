#!/usr/bin/env python3
"""Deterministic mode (docs/design/deterministic.md, docs/tasks.md "Finding concurrency
bugs"): the same seed gives byte-identical runs, time is logical, a recording replays
exactly and a different program diverges with a report, and the explorer finds each bug
script of tests/det/ under each strategy, writes a schedule that --replay reproduces, and
passes every schedule of the wait protocol's races (tests/lua/task_wait_races.lua)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BUGS = os.path.join(HERE, "..", "det")
LUA = os.path.join(HERE, "..", "lua")

# Tasks, channels, select, sleeps, random numbers and the clocks: everything whose order
# or value the seed decides.
BUSY = """
local ch, out = task.channel(4), task.channel()
for i = 1, 6 do
  task.spawn(function()
    for j = 1, 3 do ch:send(i * 10 + j) end
    task.sleep(math.random() / 100)
    out:send(i)
  end)
end
local got = {}
for _ = 1, 18 do got[#got + 1] = ch:recv() end
local done = {}
for _ = 1, 6 do
  local _, v = task.select({ { out, "recv" } })
  done[#done + 1] = v
end
print(table.concat(got, " "))
print(table.concat(done, " "))
print(math.random(1000), os.time(), task.now() > 0, os.clock() > 0)
"""


def fail(what, detail=""):
    sys.exit(f"deterministic.py: {what}\n{detail}")


def run(weft, args, script=None, path=None, code=0, cwd=None, script_args=()):
    cmd = [weft, *args] + (["-e", script] if script is not None else [path]) + list(script_args)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd)
    if code is not None and proc.returncode != code:
        fail(f"{args} {path or ''}: exit status {proc.returncode}, expected {code}", proc.stdout + proc.stderr)
    return proc


def check_same_seed(weft):
    runs = [run(weft, ["--deterministic=7"], BUSY) for _ in range(3)]
    if any(r.stdout != runs[0].stdout or r.stderr != runs[0].stderr for r in runs):
        fail("the same seed gave different runs", "\n---\n".join(r.stdout for r in runs))
    outputs = {run(weft, [f"--deterministic={s}"], BUSY).stdout for s in range(1, 9)}
    if len(outputs) < 2:
        fail("eight seeds gave one schedule", outputs.pop())
    wide = run(weft, ["--deterministic=7", "--workers", "4"], BUSY)
    if wide.stdout != runs[0].stdout:
        fail("--workers 4 changed a deterministic run", wide.stdout + "\n---\n" + runs[0].stdout)


# CPU-bound tasks that print, talk over a channel, sleep, get cancelled and are awaited:
# steps long enough for runners to run them ahead (parallel steps).
PARALLEL = """
local results = task.channel(16)
local function work(i)
  local x = i
  for j = 1, 300000 do x = (x * 31 + j) % 1000003 end
  return x
end
local tasks = {}
for i = 1, 8 do
  tasks[i] = task.spawn(function()
    local a = work(i)
    print("task", i, "first half", a, os.clock())
    task.sleep(0.001 * i)
    results:send(i * 1000000 + work(a))
    return a
  end)
end
local victim = task.spawn(function() while true do work(1) end end)
local sum = 0
for _ = 1, 8 do sum = sum + results:recv() end
victim:cancel()
print("victim", pcall(victim.await, victim))
for i = 1, 8 do print("await", i, tasks[i]:await(), tasks[i]:status()) end
print("sum", sum, task.now())
"""


def check_parallel_steps(weft):
    one = run(weft, ["--deterministic=11", "--workers", "1"], PARALLEL)
    for seed in (11, 12):
        base = one if seed == 11 else run(weft, [f"--deterministic={seed}", "--workers", "1"], PARALLEL)
        wide = run(weft, [f"--deterministic={seed}", "--workers", "4", "--stats=json"], PARALLEL)
        if wide.stdout != base.stdout:
            fail(f"seed {seed}: --workers 4 changed a deterministic run", wide.stdout + "\n---\n" + base.stdout)
        stats = json.loads(wide.stderr[wide.stderr.index("{"):])
        ahead = sum(w["tasks_run"] for w in stats["workers"] if w["worker"] != 0)
        if ahead == 0:
            fail(f"seed {seed}: no runner ran a step ahead", wide.stderr)


# Tasks that share one io.lines iterator: each read is an effect on the world, so a step
# run ahead waits at its gate and the lines go to the tasks in decision order.
SHARED_LINES = """
local path = ...
local next_line = io.lines(path)
local function work(i)
  local x = i
  for j = 1, 3000 + (i * 7919) % 5000 do x = (x * 31 + j) % 1000003 end
  return x
end
local tasks = {}
for i = 1, 8 do
  tasks[i] = task.spawn(function()
    local got = {}
    for round = 1, 40 do
      work(i + round)
      got[#got + 1] = next_line():sub(5)
    end
    return table.concat(got, ",")
  end)
end
for i = 1, 8 do print(i, tasks[i]:await()) end
"""


def check_parallel_lines(weft, tmp):
    path = os.path.join(tmp, "lines.txt")
    with open(path, "w") as f:
        f.write("".join(f"line{i}\n" for i in range(320)))
    script = os.path.join(tmp, "shared_lines.lua")
    with open(script, "w") as f:
        f.write(SHARED_LINES)
    for seed in (5, 6):
        base = run(weft, [f"--deterministic={seed}", "--workers", "1"], path=script, script_args=[path])
        for _ in range(3):
            wide = run(weft, [f"--deterministic={seed}", "--workers", "4"], path=script, script_args=[path])
            if wide.stdout != base.stdout:
                fail(f"seed {seed}: --workers 4 handed an io.lines iterator's lines out of order",
                     wide.stdout + "\n---\n" + base.stdout)


def check_logical_time(weft):
    script = """
local t0, c0, w0 = task.now(), os.clock(), os.time()
task.sleep(10)
local ch = task.channel()
local v, ok, why = ch:recv(5)
assert(v == nil and why == "timeout")
print(task.now() - t0 >= 15, os.clock() - c0 >= 15, os.time() - w0 >= 15)
"""
    start = time.monotonic()
    r = run(weft, ["--deterministic"], script)
    if r.stdout.strip() != "true\ttrue\ttrue":
        fail("logical time did not advance through the sleep and the timeout", r.stdout)
    if time.monotonic() - start > 10:
        fail("a 15 s logical wait took real time")


def check_record_replay(weft, tmp):
    sched = os.path.join(tmp, "busy.sched")
    rec = run(weft, ["--deterministic=3", "--record", sched], BUSY)
    rep = run(weft, [f"--replay={sched}"], BUSY)
    if rep.stdout != rec.stdout:
        fail("the replay's output differs from the recorded run's", rec.stdout + "\n---\n" + rep.stdout)
    other = run(weft, [f"--replay={sched}"], BUSY.replace("1, 6 do", "1, 5 do", 1), code=1)
    if "replay diverged from the recording at step" not in other.stderr:
        fail("a changed program replayed without a divergence report", other.stderr)
    with open(sched, "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0x40
    bad = os.path.join(tmp, "bad.sched")
    with open(bad, "wb") as f:
        f.write(data)
    corrupt = run(weft, [f"--replay={bad}"], BUSY, code=1)
    if "checksum mismatch" not in corrupt.stderr:
        fail("a corrupt schedule was not refused", corrupt.stderr)
    exited = os.path.join(tmp, "exit.sched")
    run(weft, ["--deterministic", f"--record={exited}"], "task.spawn(print, 'x') task.yield() os.exit(3)", code=3)
    if not os.path.exists(exited):
        fail("os.exit lost the recording")
    refused = run(weft, [f"--record={sched}"], "print(1)", code=1)
    if "--record needs --deterministic" not in refused.stderr:
        fail("--record alone was accepted", refused.stderr)


def check_deadlock(weft):
    r = run(weft, ["--deterministic"], "local ch = task.channel() task.spawn(function() ch:recv() end) ch:recv()", code=1)
    if "deadlock: all tasks are blocked" not in r.stderr:
        fail("a deterministic deadlock was not reported", r.stderr)


STRATEGIES = [["--explore=100"], ["--explore=50", "--explore-depth=2"], ["--explore=systematic", "--explore-depth=2"]]


def check_explore(weft, tmp):
    for name in sorted(os.listdir(BUGS)):
        path = os.path.abspath(os.path.join(BUGS, name))
        for strategy in STRATEGIES:
            sched = os.path.join(tmp, name + ".sched")
            found = run(weft, [*strategy, f"--record={sched}"], path=path, code=None)
            if found.returncode == 0 or "explore: schedule" not in found.stderr:
                fail(f"{name} {strategy}: the bug was not found", found.stderr)
            again = run(weft, [f"--replay={sched}"], path=path, code=found.returncode)
            if again.stdout != found.stdout:
                fail(f"{name} {strategy}: the replay's output differs", found.stdout + "\n---\n" + again.stdout)
    default = run(weft, ["--explore=20"], path=os.path.join(BUGS, "lost_update.lua"), code=None, cwd=tmp)
    if default.returncode == 0 or not os.path.exists(os.path.join(tmp, "weft-failure.sched")):
        fail("--explore without --record did not write weft-failure.sched", default.stderr)
    ok = run(weft, ["--explore=20"], BUSY)
    if "every schedule passed" not in ok.stderr or "(1 distinct)" in ok.stderr:
        fail("a correct program's exploration did not report its distinct schedules", ok.stderr)
    racy_print = "for i = 1, 3 do task.spawn(print, i) end"
    differs = run(weft, ["--explore=20", "--explore-output", f"--record={os.path.join(tmp, 'o.sched')}"], racy_print,
                  code=1)
    if "output differs from the first run" not in differs.stderr:
        fail("--explore-output did not catch a changed output", differs.stderr)
    refused = run(weft, ["--explore=systematic"], "print(1)", code=1)
    if "needs a bound" not in refused.stderr:
        fail("an unbounded systematic exploration was accepted", refused.stderr)


# The wait protocol's races (tests/lua/task_wait_races.lua: a receive raced by a send, a
# close, a cancel and its timeout) pass under every explored schedule.
def check_wait_races(weft):
    for strategy in [["--explore=200"], ["--explore=50", "--explore-depth=2"]]:
        r = run(weft, strategy, path="task_wait_races.lua", code=None, cwd=LUA)
        if r.returncode != 0 or "every schedule passed" not in r.stderr or "(1 distinct)" in r.stderr:
            fail(f"task_wait_races.lua {strategy}: a schedule failed", r.stdout + r.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weft", required=True)
    args = parser.parse_args()
    args.weft = os.path.abspath(args.weft)
    with tempfile.TemporaryDirectory() as tmp:
        check_same_seed(args.weft)
        check_parallel_steps(args.weft)
        check_parallel_lines(args.weft, tmp)
        check_logical_time(args.weft)
        check_record_replay(args.weft, tmp)
        check_deadlock(args.weft)
        check_explore(args.weft, tmp)
        check_wait_races(args.weft)
    print("deterministic.py: ok")


if __name__ == "__main__":
    main()
