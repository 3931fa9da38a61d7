#!/usr/bin/env python3
"""Compiled code and tasks (docs/design/jit.md, docs/tasks.md): with --jit=eager, tasks
whose loops run in compiled code move between workers mid-loop and keep exact results,
a compiled hot loop is preempted by its budget so a ready peer on the same worker makes
progress, and a task spinning in a compiled loop is cancelled at the loop's safepoint
(its to-be-closed variable closed). --jit-stats shows that the loops ran compiled and left
their code at safepoints; the same script runs under --gc-stress=relocate --gc-verify,
so compiled frames are moved while their tasks migrate. Tasks also read a table in compiled
loops while another rebuilds it: every read sees its key's value or nil; and store into
distinct keys of a table another rebuilds: no store is lost. bench/tasks/skynet.lua with
--jit=on: its tasks enter compiled code at their loops only."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# tasks.lua MODE [N]. migrate: twelve tasks each run `sums` (one numeric loop, line 4)
# over a different length and the main task checks each result; it prints the workers'
# migrations meanwhile (task.stats()). preempt: `spin` (line 48) spins on a field
# its peer sets after five yields; on one worker the peer runs only when the spinner's
# compiled loop is preempted, and a starved peer lets the loop reach its limit instead.
# recurse: as preempt, `tree` (line 56) recursing without loops, its calls of itself
# passing deferred frames (jit.md, "Deferred frames"): a starved peer never stops it.
# cancel: `victim` (line 65) spins until cancelled.
SCRIPT = """\
local mode, n = arg[1], tonumber(arg[2] or "0")

-- An integer and a float sum over 1..n in one compiled numeric loop.
local function sums(n)
  local s, h = 0, 0.0
  for i = 1, n do
    s = s + i
    h = h + 0.5
  end
  return s, h
end

-- Runs `body` in a task beside a peer that sets `peerDone.stop` after five yields; on
-- one worker the peer runs only when the body, which never yields, is preempted.
local peerDone = {started = false, stop = false, rounds = 0}
local function besidePeer(body)
  local spinner = task.spawn(function()
    peerDone.started = true
    return body()
  end)
  local peer = task.spawn(function()
    while not peerDone.started do task.yield() end
    for r = 1, 5 do peerDone.rounds = r; task.yield() end
    peerDone.stop = true
  end)
  local result = spinner:await()
  peer:await()
  return result
end

local function migrations()
  local total = 0
  for _, w in ipairs(task.stats().workers) do total = total + w.migrations end
  return total
end

if mode == "migrate" then
  local before = migrations()
  local tasks = {}
  for k = 1, 12 do tasks[k] = task.spawn(sums, n + k * (n // 8)) end
  for k = 1, 12 do
    local m = n + k * (n // 8)
    local s, h = tasks[k]:await()
    assert(s == m * (m + 1) // 2 and h == m * 0.5, "task " .. k .. ": wrong sums")
  end
  print("migrate ok", migrations() - before)
elseif mode == "preempt" then
  local function spin()
    local i = 0
    while not peerDone.stop and i < 1000000000 do i = i + 1 end
    return peerDone.stop
  end
  assert(besidePeer(spin) == true, "the spinner's loop ran to its limit: its peer was starved")
  print("preempt ok", peerDone.rounds)
elseif mode == "recurse" then
  local function tree(d)
    if peerDone.stop then return 1 end
    if d == 0 then return 0 end
    return tree(d - 1) + tree(d - 1)
  end
  assert(besidePeer(function() return tree(60) end) > 0)
  print("recurse ok", peerDone.rounds)
elseif mode == "cancel" then
  local started, closed = false, false
  local victim = task.spawn(function()
    local c <close> = setmetatable({}, {__close = function() closed = true end})
    started = true
    local i = 0
    while true do i = i + 1 end
  end)
  while not started do task.yield() end
  task.sleep(0.01)
  assert(victim:cancel() == true)
  local ok, e = pcall(victim.await, victim)
  assert(not ok and tostring(e):find("task cancelled", 1, true), "await of the cancelled task: " .. tostring(e))
  assert(victim:status() == "cancelled" and closed, "status and to-be-closed variable after cancel")
  print("cancel ok")
elseif mode == "shared" then
  -- Three tasks run f(t, stop, k) in compiled loops while writer(t, n), started once all
  -- three have, changes t; stop[1] is set when it is done. Returns the three tasks.
  local function race(t, f, writer)
    local started, stop, tasks = {}, {false}, {}
    for k = 1, 3 do
      tasks[k] = task.spawn(function()
        started[k] = true
        return f(t, stop, k)
      end)
    end
    task.spawn(function()
      while not (started[1] and started[2] and started[3]) do task.yield() end
      writer(t, n)
      stop[1] = true
    end):await()
    return tasks
  end

  -- Readers of one table in compiled loops (inline array and field reads) while a writer
  -- grows and shrinks its array part and rebuilds its hash part: a read sees its key's
  -- value or nil, never another key's or a torn one.
  local t = {x = 1}
  for i = 1, 64 do t[i] = i * 2 end
  local function reader(t, stop)
    local bad, seen, rounds = 0, 0, 0
    while not stop[1] or rounds < 20 do
      rounds = rounds + 1
      for i = 1, 300 do
        local v = t[i]
        if v ~= nil then
          if v == i * 2 then seen = seen + 1 else bad = bad + 1 end
        end
        local x = t.x
        if x ~= nil and x ~= 1 then bad = bad + 1 end
      end
    end
    return bad, seen, rounds
  end
  local function writer(t, rounds)
    for r = 1, rounds do
      for i = 65, 300 do t[i] = i * 2 end
      for i = 300, 65, -1 do t[i] = nil end
      t["k" .. r] = r
      t.x = nil
      t.x = 1
      local j = r % 64 + 1
      t[j] = nil
      t[j] = j * 2
    end
  end
  local readers = race(t, reader, writer)
  for k = 1, 3 do
    local bad, seen, rounds = readers[k]:await()
    assert(bad == 0, "reader " .. k .. ": " .. bad .. " reads saw another key's value")
    assert(seen > 0 and rounds > 0, "reader " .. k .. " read nothing")
  end

  -- Storers of distinct existing keys in compiled loops (inline array and field stores)
  -- while a writer grows and shrinks the same table's array part and rebuilds its hash
  -- part: each storer finds the value it stored a round before in each of its keys (a
  -- store that a rebuild's copy missed and nobody repeated leaves an older one), and
  -- every key ends with its storer's last value.
  local s = {f1 = 0, f2 = 0, f3 = 0}
  for i = 1, 63 do s[i] = 0 end
  local function storer(t, stop, k)
    local rounds, lost = 0, 0
    while not stop[1] or rounds < 20 do
      for i = k, 63, 3 do
        if t[i] ~= rounds then lost = lost + 1 end
        t[i] = rounds + 1
      end
      if k == 1 then
        if t.f1 ~= rounds then lost = lost + 1 end
        t.f1 = rounds + 1
      elseif k == 2 then
        if t.f2 ~= rounds then lost = lost + 1 end
        t.f2 = rounds + 1
      else
        if t.f3 ~= rounds then lost = lost + 1 end
        t.f3 = rounds + 1
      end
      rounds = rounds + 1
    end
    return rounds, lost
  end
  local function rebuilder(t, rounds)
    for r = 1, rounds do
      for i = 64, 300 do t[i] = i end
      for i = 300, 64, -1 do t[i] = nil end
      -- A new key, then dead: the hash part stays small and is rehashed every few rounds,
      -- which shrinks the array part for the next round's appends to grow it again.
      t["k" .. r] = r
      t["k" .. r] = nil
    end
  end
  local storers = race(s, storer, rebuilder)
  for k = 1, 3 do
    local rounds, lost = storers[k]:await()
    assert(lost == 0, "storer " .. k .. ": " .. lost .. " stores lost")
    for i = k, 63, 3 do assert(s[i] == rounds, "storer " .. k .. ": key " .. i .. " holds " .. s[i] .. ", not " .. rounds) end
    assert(s["f" .. k] == rounds, "storer " .. k .. ": field f" .. k .. " holds " .. s["f" .. k] .. ", not " .. rounds)
  end
  print("shared ok")
end
"""
READER_LINE = 1 + next(n for n, line in enumerate(SCRIPT.splitlines()) if "local function reader" in line)
STORER_LINE = 1 + next(n for n, line in enumerate(SCRIPT.splitlines()) if "local function storer" in line)
# bench/tasks/skynet.lua: a tree of tasks, its leaves returning before its loops.
SKYNET = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "bench", "tasks", "skynet.lua")

STATS = re.compile(r"^jit: (\d+) entries, (\d+) exits to the interpreter \((\d+) at safepoints\)", re.MULTILINE)
FUNCTION = re.compile(r"^jit:\s+tasks\.lua:(\d+)\s+\d+ ops\s+[\d.]+ ms\s+(\d+) entries\s+(\d+) exits(, deferred frames)?$",
                      re.MULTILINE)
STRESS = ["--gc-stress=relocate", "--gc-verify", "--gc-interval=1000"]


def fail(message):
    sys.exit(f"jit_tasks.py: {message}")


def run(weft, tmp, flags, *script_args, jit=("--jit=eager",)):
    """Runs tasks.lua; returns its output and, by line defined, each compiled function's
    entries, with the run's safepoint exits."""
    cmd = [weft, *jit, "--jit-stats", *flags, "tasks.lua", *script_args]
    proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=240)
    label = " ".join(cmd[1:])
    if proc.returncode != 0:
        fail(f"{label}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}")
    stats = STATS.search(proc.stderr)
    if not stats:
        fail(f"{label}: no --jit-stats report\n{proc.stderr}")
    entries = {int(m.group(1)): int(m.group(2)) for m in FUNCTION.finditer(proc.stderr)}
    deferring = {int(m.group(1)) for m in FUNCTION.finditer(proc.stderr) if m.group(4)}
    return proc.stdout, entries, int(stats.group(3)), label, deferring


def expect_compiled(label, entries, line, at_least):
    if entries.get(line, 0) < at_least:
        fail(f"{label}: the function of line {line} entered compiled code {entries.get(line, 0)} times, "
             f"expected at least {at_least}")


def expect_tree_entered_at_loops(weft):
    cmd = [weft, "--jit=on", "--jit-threshold=50", "--jit-stats", "--workers=2", SKYNET, "1000000"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    label = " ".join(cmd[1:])
    if proc.returncode != 0 or "checksum=499999500000" not in proc.stdout:
        fail(f"{label}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}")
    line = 1 + next(n for n, text in enumerate(open(SKYNET).read().splitlines()) if "local function skynet" in text)
    found = re.search(r"^jit:\s+\S*skynet\.lua:%d\s+\d+ ops\s+[\d.]+ ms\s+(\d+) entries" % line, proc.stderr, re.MULTILINE)
    entries = int(found.group(1)) if found else 0
    if entries < 1000 or entries > 250000:
        fail(f"{label}: skynet's tasks entered compiled code {entries} times, expected at most about one "
             "entry per inner node (111,111), and some")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "tasks.lua"), "w") as f:
            f.write(SCRIPT)
        # Migrations depend on when workers run out of work: one of three runs must see some.
        moved = []
        for _ in range(3):
            out, entries, safepoints, label, _ = run(args.weft, tmp, ["--workers=4"], "migrate", "3000000")
            m = re.fullmatch(r"migrate ok\t(\d+)\n", out)
            if not m:
                fail(f"{label}: printed {out!r}")
            expect_compiled(label, entries, 4, 12)
            if safepoints < 12:
                fail(f"{label}: {safepoints} safepoint exits for twelve long compiled loops")
            moved.append(int(m.group(1)))
            if moved[-1] > 0:
                break
        if not any(moved):
            fail(f"no task migrated in three runs of twelve compiled loops on four workers: {moved}")

        out, entries, safepoints, label, _ = run(args.weft, tmp, ["--workers=1"], "preempt")
        if out != "preempt ok\t5\n":
            fail(f"{label}: printed {out!r}")
        # Every round of the peer needed the spinner to leave its code at a safepoint.
        expect_compiled(label, entries, 48, 6)
        if safepoints < 5:
            fail(f"{label}: {safepoints} safepoint exits, but the peer ran five rounds")

        # A recursion whose frames are deferred is preempted as a loop is: it calls on, so
        # it leaves its code at a call, not a safepoint.
        out, entries, _, label, deferring = run(args.weft, tmp, ["--workers=1"], "recurse")
        if out != "recurse ok\t5\n":
            fail(f"{label}: printed {out!r}")
        expect_compiled(label, entries, 56, 6)
        if 56 not in deferring:
            fail(f"{label}: the recursion's calls of itself did not defer their frames")

        for workers in ("--workers=1", "--workers=4"):
            out, entries, _, label, _ = run(args.weft, tmp, [workers], "cancel")
            if out != "cancel ok\n":
                fail(f"{label}: printed {out!r}")
            expect_compiled(label, entries, 65, 1)

        # A task's frame returns through the interpreter, so compiled code that reached its
        # return would leave at once: a task is entered at its loops, not at its start (a
        # leaf returns before any), nor at a return it goes on at after a send that waited
        # (jit.md, "Compiled tail calls"). Entered either way, skynet's million leaves made
        # as many entries; its 111,111 inner nodes' loops make at most about one each
        # (those that run before the code is ready none). Whether the leaves or an inner
        # node's loop reach the threshold first, the function is compiled (jit.md, "Cold
        # loops").
        expect_tree_entered_at_loops(args.weft)

        # Compiled reads and stores of a table another task rebuilds (jit.md, "Inline table
        # reads" and "Inline table stores").
        for flags in (["--workers=4"], ["--workers=4"] + STRESS):
            out, entries, _, label, _ = run(args.weft, tmp, flags, "shared", "3000" if flags == ["--workers=4"] else "200")
            if out != "shared ok\n":
                fail(f"{label}: printed {out!r}")
            expect_compiled(label, entries, READER_LINE, 3)
            expect_compiled(label, entries, STORER_LINE, 3)

        for flags, script_args, want in ((["--workers=4"], ["migrate", "20000"], "migrate ok\t"),
                                         (["--workers=1"], ["preempt"], "preempt ok\t5\n"),
                                         (["--workers=1"], ["recurse"], "recurse ok\t5\n"),
                                         (["--workers=4"], ["cancel"], "cancel ok\n")):
            out, _, _, label, _ = run(args.weft, tmp, flags + STRESS, *script_args)
            if not out.startswith(want):
                fail(f"{label}: printed {out!r}")
    print("ok")


if __name__ == "__main__":
    main()
