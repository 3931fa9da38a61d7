-- weft-only -- weft-tasks
-- weft-gc-interval: 8 (at every safepoint, 4 workers on 2 cores took 3.5 minutes)
-- A local captured by a closure that another task calls, while the function that owns
-- the local keeps running: the owner writes the local with ordinary instructions (LOADI,
-- MOVE, LOADK...) and reads it as a register, while other tasks read and write it
-- through the closure. Every read, on either side, must be a value some write stored;
-- a torn one (one value's type with another's payload) crashes or is counted here.
local NAME = "task_upvalue_race"
local T = dofile("helpers/check.lua")(NAME)
local check = T.check

local T1, T2 = {tag = "t1"}, {tag = "t2"}
local LONG = string.rep("long string ", 8)
-- Uses what it is given as its type says, so a table type with an integer payload
-- (or the reverse) is dereferenced or fails a comparison.
local function valid(v)
  local ty = type(v)
  if ty == "table" then return (v == T1 and v.tag == "t1") or (v == T2 and v.tag == "t2") end
  if ty == "string" then return (#v == 5 and v == "short") or (#v == #LONG and v == LONG) end
  if math.type(v) == "integer" then local y = v * 3 - v * 2; return y == 1 or y == -7 end
  if math.type(v) == "float" then local y = v * 0.5 * 2; return y == 2.5 end
  return false
end

local ctl = {stop = false, ran = {}}
local READERS = 2
local BATCH = 2000
local READ_BATCH = 500  -- short, so that a loaded machine still sees every reader run

-- Tasks that call `get` until told to stop; each returns (bad reads, batches).
local function spawnReaders(get)
  local ts = {}
  ctl.ran = {}
  for r = 1, READERS do
    ts[r] = task.spawn(function()
      local bad, batches = 0, 0
      while not ctl.stop do
        for _ = 1, READ_BATCH do
          if not valid(get()) then bad = bad + 1 end
        end
        batches = batches + 1
        ctl.ran[r] = true
        task.yield()
      end
      return bad, batches
    end)
  end
  return ts
end

-- Whether an owner's loop may end: its second is over and every reader finished a
-- batch (under relocate stress on a loaded machine a batch may take that long; a
-- minute more is the limit, after which the "ran" check fails).
local function ownerDone(deadline)
  local now = task.now()
  if now < deadline then return false end
  if now >= deadline + 60 then return true end
  for r = 1, READERS do
    if not ctl.ran[r] then return false end
  end
  return true
end
local function collect(ts, what)
  local bad, batches = 0, 0
  for _, t in ipairs(ts) do
    local ok, b, n = pcall(t.await, t)
    if ok then bad, batches = bad + b, batches + n
    else bad = bad + 1; print(what .. " task failed: " .. tostring(b)) end
  end
  check(bad == 0, what .. ": " .. bad .. " torn values")
  check(batches > 0, what .. " ran")
end

-- 1. The owner (this chunk) writes x with every kind of register write while readers
-- read it through getX.
do
  local x = 1
  local function getX() return x end
  local readers = spawnReaders(getX)
  local deadline = task.now() + 1.0
  local t1, t2, neg = T1, T2, -7
  while not ownerDone(deadline) do
    for _ = 1, BATCH do
      x = 1; x = t1; x = 2.5; x = "short"; x = t2; x = neg; x = LONG; x = T1
      x = neg + 0; x = t2
    end
    task.yield()
  end
  ctl.stop = true
  collect(readers, "readers of a running local")
  check(valid(x) and x == t2, "owner's last write is the local's value")
end

-- 2. Tasks write x through setX while the owner reads it as a register.
do
  ctl.stop = false
  local x = T1
  local function setX(v) x = v end
  local writers = {}
  local values = {1, T1, 2.5, "short", T2, -7, LONG}
  for w = 1, READERS do
    writers[w] = task.spawn(function()
      local i = w
      while not ctl.stop do
        for _ = 1, BATCH do
          i = i % #values + 1
          setX(values[i])
        end
        task.yield()
      end
      return 0, 1
    end)
  end
  local bad, reads = 0, 0
  local deadline = task.now() + 1.0
  while task.now() < deadline do
    for _ = 1, BATCH do
      local v = x
      if not valid(v) then bad = bad + 1 end
      if not valid(x) then bad = bad + 1 end
    end
    reads = reads + 1
    task.yield()
  end
  ctl.stop = true
  collect(writers, "writers through a closure")
  check(bad == 0, "owner read " .. bad .. " torn values")
  check(reads > 0, "owner read")
  check(valid(x), "the local holds a written value")
end

-- 3. The owner is itself a task on another worker: it publishes getX and writes x.
do
  ctl.stop = false
  ctl.ran = {}
  local shared = {}
  local owner = task.spawn(function()
    local x = T2
    shared.get = function() return x end
    local deadline = task.now() + 1.0
    local t1, t2 = T1, T2
    while not ownerDone(deadline) do
      for _ = 1, BATCH do x = t1; x = 1; x = t2; x = 2.5; x = "short" end
      task.yield()
    end
    return x
  end)
  while not shared.get do task.yield() end
  local readers = spawnReaders(shared.get)
  local ok, last = pcall(owner.await, owner)
  ctl.stop = true
  check(ok and last == "short", "owner task finished: " .. tostring(last))
  collect(readers, "readers of another task's local")
end

-- 4. The same sharing is exact without races: writes on either side are seen by the
-- other, before and after the owner's frame returns and the local is closed.
do
  local get, set
  local function owner()
    local x = 1
    get = function() return x end
    set = function(v) x = v end
    local t = task.spawn(function() local seen = get(); set(seen + 10); return get() end)
    local back = t:await()
    check(back == 11 and x == 11, "a task's write is the owner's local: " .. tostring(x))
    x = x + 1
    check(task.spawn(get):await() == 12, "the owner's write is the task's upvalue")
    return x
  end
  check(owner() == 12, "the owner returns its local")
  set(T1)
  check(task.spawn(get):await() == T1, "closed upvalue shared by tasks")
end

-- Visibility without any call: the main task sets a captured local and then spins in a
-- loop with no call in it until a task, which saw the write through its closure,
-- answers through another captured local. Both writes must cross between the frame's
-- registers and the cells at loop back-edges, or this never ends.
do
  local flag, ack = false, false
  local helper = task.spawn(function()
    while not flag do task.yield() end
    ack = true
  end)
  flag = true
  local spins = 0
  while not ack do spins = spins + 1 end
  helper:await()
  -- No call comes between the write of flag and the loop, so flag goes out at a back-edge
  -- at the earliest: the first test reads ack false, and ack crosses while the loop spins.
  check(spins > 0, "both writes crossed")
  local n = 0
  repeat n = n + 1 until ack  -- a conditional back-edge
  check(n == 1, "a repeat loop reads it too")
end

T.done()
