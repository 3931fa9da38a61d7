-- weft-only -- weft-tasks
-- Scheduling: a hot loop cannot starve a ready peer (preemption at safepoints), yield and
-- sleep(0) let peers run, sleep wakes in deadline order, yields across pcall, metamethods,
-- iterators and C functions, task.now, sticky tasks.
local NAME = "task_sched"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function errorOf(f, ...)
  local ok, msg = pcall(f, ...)
  return not ok and tostring(msg):gsub("^[^:]*:%d+: ", "") or "no error"
end

-- The main task spins on a flag that only a peer sets: no yields in the loop.
local flag = false
local setter = task.spawn(function() flag = true end)
local spins = 0
while not flag do spins = spins + 1 end
check(flag, "main hot loop saw the peer's write")
setter:await()

-- A task spins without yielding on a flag the main task sets after it runs.
local go, started = false, false
local spinner = task.spawn(function()
  started = true
  local n = 0
  while not go do n = n + 1 end
  return "spinner done"
end)
while not started do task.yield() end
go = true
eq(spinner:await(), "spinner done", "spinning task ended after the flag was set")

-- Many hot spinners and a sleeping main task: main still wakes, and every spinner started.
local stop = false
local began = {}
for i = 1, 8 do began[i] = false end
local spinners = {}
for i = 1, 8 do
  spinners[i] = task.spawn(function()
    began[i] = true
    local n = 0
    while not stop do n = n + 1 end
    return i
  end)
end
task.sleep(0.02)
stop = true
local sum = 0
for i = 1, 8 do sum = sum + spinners[i]:await() end
eq(sum, 36, "8 spinners finished")
local allbegan = true
for i = 1, 8 do if not began[i] then allbegan = false end end
check(allbegan, "every spinner ran")

-- A chain of hot spinners, each waiting for the previous one's flag.
local flags = {}
for i = 0, 6 do flags[i] = false end
local chain = {}
for i = 1, 6 do
  chain[i] = task.spawn(function()
    while not flags[i - 1] do end
    flags[i] = true
  end)
end
flags[0] = true
for i = 1, 6 do chain[i]:await() end
check(flags[6], "a chain of 6 spinning tasks completed")

-- yield and sleep(0) let a ready peer run.
local ran = false
local peer = task.spawn(function() ran = true end)
local loops = 0
while not ran and loops < 1000000 do task.yield(); loops = loops + 1 end
check(ran, "yield let the peer run")
peer:await()
ran = false
peer = task.spawn(function() ran = true end)
loops = 0
while not ran and loops < 1000000 do task.sleep(0); loops = loops + 1 end
check(ran, "sleep(0) let the peer run")
peer:await()
eq(select("#", task.yield()), 0, "yield returns nothing")
eq(select("#", task.sleep(0)), 0, "sleep returns nothing")
eq(errorOf(task.sleep, "x"), "bad argument #1 to 'task.sleep' (number expected, got string)",
   "sleep needs a number")
local t0 = task.now()
task.sleep(-1)
check(task.now() - t0 < 1, "negative sleep returns at once")

-- Yielding tasks interleave: two tasks counting in turn through yields both finish.
local counts = {0, 0}
local stopc = false
local ya = task.spawn(function() while not stopc do counts[1] = counts[1] + 1; task.yield() end end)
local yb = task.spawn(function() while not stopc do counts[2] = counts[2] + 1; task.yield() end end)
while counts[1] < 10 or counts[2] < 10 do task.yield() end
stopc = true
ya:await(); yb:await()
check(counts[1] >= 10 and counts[2] >= 10, "both yielding tasks progressed")

-- Sleep wakes in deadline order. The deadlines are 50 ms apart and counted from one
-- moment, so a task that starts late under load still sleeps until its own deadline.
-- The sleepers' function runs once before that moment: with --jit=eager its first call
-- compiles it, which under ThreadSanitizer took the sleepers past every deadline.
local order = task.channel(5)
local function sleeper(i, deadline)
  task.sleep(deadline - task.now())
  order:send(i)
end
task.spawn(sleeper, 0, task.now()):await()
order:recv()
local durations = {0.15, 0.05, 0.25, 0.10, 0.20}
local base = task.now()
for i, d in ipairs(durations) do task.spawn(sleeper, i, base + d) end
local got = {}
for i = 1, 5 do got[i] = order:recv() end
eq(table.concat(got, " "), "2 4 1 5 3", "sleepers woke in deadline order")
t0 = task.now()
local sl = task.spawn(function() task.sleep(0.04); return task.now() end)
local woke = sl:await()
check(woke - t0 >= 0.039, "a sleeping task sleeps at least its time")
check(woke - t0 < 5, "and wakes")

-- task.now is monotonic across tasks.
local last = task.now()
local mono = true
local stamps = {}
for i = 1, 10 do stamps[i] = task.spawn(function() task.yield(); return task.now() end) end
for i = 1, 10 do if stamps[i]:await() < last then mono = false end end
check(mono, "stamps taken after a point are not earlier")
check(task.now() >= last, "now does not go back")

-- Task switches inside pcall, metamethods, iterators and C functions calling Lua.
local sw = task.spawn(function()
  local r = {}
  local ok, v = pcall(function() task.yield(); task.sleep(0.001); return "pcall" end)
  r[#r + 1] = v
  local prox = setmetatable({}, {__index = function(_, k) task.sleep(0); return k .. "!" end,
                                 __add = function(x, y) task.yield(); return 99 end})
  r[#r + 1] = prox.meta
  r[#r + 1] = tostring(prox + 1)
  local arr = {5, 3, 9, 1, 7}
  table.sort(arr, function(x, y) task.yield(); return x < y end)
  r[#r + 1] = table.concat(arr, ",")
  r[#r + 1] = (string.gsub("abc", "%w", function(ch) task.yield(); return ch:upper() end))
  for k in function(_, c) task.yield(); if c < 3 then return c + 1 end end, nil, 0 do r[#r + 1] = k end
  local okx, e = pcall(error, setmetatable({}, {__tostring = function() task.yield(); return "E" end}))
  r[#r + 1] = tostring(e)
  return table.concat(r, "|")
end)
eq(sw:await(), "pcall|meta!|99|1,3,5,7,9|ABC|1|2|3|E", "switching everywhere")

-- Sticky tasks run to completion with yields and sleeps, alongside ordinary ones.
local st = {}
for i = 1, 4 do
  st[i] = task.spawn_sticky(function()
    local s = 0
    for k = 1, 20 do s = s + k; if k % 5 == 0 then task.yield() else task.sleep(0) end end
    return s
  end)
end
local stsum = 0
for i = 1, 4 do stsum = stsum + st[i]:await() end
eq(stsum, 840, "four sticky tasks")
local stspin = false
local sticky_spinner = task.spawn_sticky(function() while not stspin do end return "out" end)
task.sleep(0.01)
stspin = true
eq(sticky_spinner:await(), "out", "a sticky hot loop ends when the flag is set")

-- Many short tasks.
local many = {}
for i = 1, 300 do many[i] = task.spawn(function(x) task.yield(); return x * 2 end, i) end
local ms = 0
for i = 1, 300 do ms = ms + many[i]:await() end
eq(ms, 90300, "300 tasks")

-- math.random keeps its state per task: two tasks seeded alike draw alike, however their
-- draws interleave; a coroutine draws from its task's generator.
local function draws(seed)
  math.randomseed(seed)
  local out = {}
  for i = 1, 6 do
    out[i] = math.random(1000000)
    task.yield()
  end
  out[7] = coroutine.wrap(function() return math.random(1000000) end)()
  return table.concat(out, ",")
end
local da, db = task.spawn(draws, 77), task.spawn(draws, 77)
local dc = task.spawn(draws, 78)
local sa, sb, sc = da:await(), db:await(), dc:await()
eq(sa, sb, "equal seeds in two tasks give equal sequences")
check(sa ~= sc, "different seeds differ")

T.done()
