-- The collector's cycle as scripts see it (manual §2.5 and collectgarbage in §6.1):
-- what "step" reports, collectgarbage inside a finalizer, which dead registers and dead
-- table entries keep objects alive. Memory checks use sizes far above the noise.
-- weft-from-source
local NAME = "lang_gc_cycle"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

local MB = 1024  -- in collectgarbage("count") units

-- A long string of about n KB that no register of the caller keeps.
local function blob(n, c) return string.rep(c or "x", n * 1024) end

-- "step" in incremental mode: steps of n KB finish a cycle after about as many KB of
-- steps as the heap holds, and report true exactly on the step that finished it.
collectgarbage("incremental")
do
  local keep = {}
  for i = 1, 5000 do keep[i] = {i} end   -- a heap of about a MB
  collectgarbage()
  local heapKB = collectgarbage("count")
  local function stepsUntilCycle(size)
    collectgarbage()
    local n = 0
    repeat n = n + 1 until collectgarbage("step", size)
    return n
  end
  local small, large = stepsUntilCycle(16), stepsUntilCycle(256)
  check(small > 1 and small < 4 * heapKB / 16 + 2, "16 KB steps finish a cycle in proportion to the heap: " .. small)
  check(large < small, "bigger steps finish a cycle in fewer steps")
  eq(stepsUntilCycle(64 * MB), 1, "a step bigger than the heap finishes a cycle")
  eq(collectgarbage("step", 64 * MB), true, "and does so every time")
  eq(#keep, 5000, "steps keep what is reachable")
end

-- A step that finishes a cycle frees what was garbage when the cycle began. The first
-- loop ends the cycle the blob's allocation may have started while junk held it (under
-- --gc-stress every safepoint collects, so whether one did depends on where the code
-- has safepoints: compiled code has fewer); the second runs a whole cycle.
do
  collectgarbage()
  local before = collectgarbage("count")
  local junk = {blob(2 * MB)}
  junk = nil
  repeat until collectgarbage("step", 0)
  repeat until collectgarbage("step", 0)
  check(collectgarbage("count") < before + MB, "a finished cycle freed the garbage")
end

-- A stopped collector collects nothing on its own (under --gc-stress neither): garbage
-- piles up until it restarts.
do
  collectgarbage()
  collectgarbage("stop")
  local before = collectgarbage("count")
  local rounds = 0
  repeat
    for _ = 1, 1000 do _ENV.junk = {} end
    rounds = rounds + 1
  until collectgarbage("count") > before + MB or rounds > 1000
  check(rounds <= 1000, "garbage piles up while stopped")
  collectgarbage("restart")
  _ENV.junk = nil
end

-- Steps run while the collector is stopped, and leave it stopped.
collectgarbage("stop")
eq(collectgarbage("step", 64 * MB), true, "a step runs while stopped")
eq(collectgarbage("isrunning"), false, "a step leaves the collector stopped")
collectgarbage("restart")
eq(collectgarbage("isrunning"), true, "restarted")

-- Mode switches return the previous mode and accept their parameters.
eq(collectgarbage("generational", 20, 100), "incremental", "generational with parameters")
eq(collectgarbage("generational"), "generational", "generational again")
eq(collectgarbage("incremental", 200, 100, 13), "generational", "incremental with parameters")
eq(collectgarbage("setpause", 200), 200, "the pause given to incremental")
eq(collectgarbage("setstepmul", 100), 100, "the step multiplier given to incremental")

-- Inside a finalizer every option fails (returns fail, nil): the collector is busy.
do
  local results
  local function finalizable()
    setmetatable({}, {__gc = function()
      results = {n = 7, collectgarbage(), collectgarbage("count"), collectgarbage("step"),
                 collectgarbage("isrunning"), collectgarbage("incremental"),
                 collectgarbage("setpause", 100), collectgarbage("stop")}
    end})
  end
  finalizable()
  collectgarbage()
  collectgarbage()
  check(results ~= nil, "the finalizer ran")
  for i = 1, 7 do eq(results and results[i], nil, "option " .. i .. " inside a finalizer") end
  eq(collectgarbage("isrunning"), true, "a stop inside a finalizer stopped nothing")
  eq(collectgarbage("setpause", 200), 200, "a setpause inside a finalizer set nothing")
end

-- Registers the program no longer uses keep nothing alive: an object whose only copy
-- was in a temporary register (a call's argument or result, a dead loop local) is
-- collected while the loop that replaces it runs, so these loops end.
do
  local u
  local b  -- above u in the stack: must survive
  local done = false
  local function armed() done = false; return setmetatable({}, {__gc = function() done = true end}) end
  u = armed(); b = {34}
  repeat u = {} until done
  eq(b[1], 34, "a live register above it kept its table")
  u = armed()
  local i = 1
  repeat i = i + 1; u = tostring(i) .. tostring(i) until done
  u = armed()
  repeat local x; u = function() return x end until done
  u = {armed()}
  repeat u = {{}} until done
  u = {armed()}
  while not done do u = {tostring(i) .. "x"}; i = i + 1 end
  u = armed()
  for _ = 1, math.huge do u = {}; if done then break end end
  eq(done, true, "every loop saw its finalizer run")
end

-- A table entry assigned nil holds its key no longer (Lua's dead keys): the key is
-- collected when nothing else reaches it.
do
  collectgarbage()
  local before = collectgarbage("count")
  local t = {}
  local function fill() t[blob(2 * MB, "k")] = true end
  fill()
  check(collectgarbage("count") > before + 2 * MB - 64, "the key takes its memory")
  local function clear() for k in pairs(t) do t[k] = nil end end
  clear()
  collectgarbage()
  check(collectgarbage("count") < before + MB, "a dead entry's key was collected")
  eq(next(t), nil, "the table is empty")
  t.x = 1
  eq(t.x, 1, "the table still works")
end

-- A traversal that clears the fields it visits may collect between steps: the key it
-- holds stays, so next continues from it.
do
  local t = {}
  for i = 1, 50 do t[{}] = i; t["s" .. i] = i end
  local visited = 0
  for k in pairs(t) do
    t[k] = nil
    visited = visited + 1
    if visited % 10 == 0 then collectgarbage() end
  end
  eq(visited, 100, "every entry visited once")
  eq(next(t), nil, "every entry cleared")
end

-- In a table weak in both keys and values, a string key lives as long as its entry: an
-- entry whose value is collected frees its key in the same collection.
do
  collectgarbage()
  local before = collectgarbage("count")
  local a = setmetatable({}, {__mode = "kv"})
  local keep = {}
  local function fill()
    a[blob(MB, "a")] = 25          -- a number value: the entry stays
    a[blob(MB, "b")] = {}          -- a dead value: entry and key go
    a[blob(MB, "c")] = keep        -- a live value: the entry stays
    a[{}] = 14                     -- a dead key
  end
  fill()
  collectgarbage()
  local count = collectgarbage("count")
  check(count > before + 2 * MB - 64 and count < before + 3 * MB - 64, "one key was collected")
  local n = 0
  for k, v in pairs(a) do
    n = n + 1
    check((k:sub(1, 1) == "a" and v == 25) or (k:sub(1, 1) == "c" and v == keep), "entry kept: " .. k:sub(1, 1))
  end
  eq(n, 2, "two entries stay")
  eq(a[blob(MB, "b")], nil, "no entry for the collected key")
  a[blob(MB, "a")] = nil
  a[blob(MB, "c")] = nil
  collectgarbage()
  eq(next(a), nil, "all cleared")
  check(collectgarbage("count") < before + MB, "everything collected")
end

-- In a table weak in values only, keys are strong: a string key whose value died
-- stays until the next collection finds its entry dead.
do
  local a = setmetatable({}, {__mode = "v"})
  local function fill() a[blob(MB, "v")] = {} end
  collectgarbage()
  local before = collectgarbage("count")
  fill()
  collectgarbage()
  eq(next(a), nil, "the dead value's entry is gone")
  collectgarbage()
  check(collectgarbage("count") < before + MB, "its key is collected by then")
end

-- A finalizable object that survived collections and then died is found by the
-- collections of an allocation loop that promotes nothing (the old generation never
-- grows, so only the finalizer's own rule brings a major).
do
  local finished = false
  local u = {setmetatable({}, {__gc = function() finished = true end})}
  for _ = 1, 3 do collectgarbage("step") end   -- now old in a generational collector
  local b = {34}
  local n = 0
  repeat u = {{}}; n = n + 1 until finished or n > 5e6
  check(finished, "a promoted finalizable object dropped later is finalized")
  eq(b[1], 34, "and what stays reachable stays")
end

-- In incremental mode a finalizer runs only after a whole cycle: by the time a loop sees
-- its finalizer run, the cycle also cleared the dead entries of an old ephemeron table.
do
  local a = setmetatable({}, {__mode = "k"})
  local x
  for _ = 1, 100 do local n = {}; a[n] = {k = {x}}; x = n end
  collectgarbage()
  collectgarbage()
  x = nil
  local finished = false
  local u = {setmetatable({}, {__gc = function() finished = true end})}
  repeat u = {{}} until finished
  eq(next(a), nil, "the chain of ephemerons went with the cycle that ran the finalizer")
end

collectgarbage("generational")
T.done()
