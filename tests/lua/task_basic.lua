-- weft-only -- weft-tasks
-- The task library: spawn/await with arguments and results, errors re-raised by await,
-- handles (id, status, tostring), task.current, many awaiters, sticky tasks, workers, now.
local NAME = "task_basic"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function errorOf(f, ...)
  local ok, msg = pcall(f, ...)
  return not ok and tostring(msg):gsub("^[^:]*:%d+: ", "") or "no error"
end

-- The library itself.
eq(type(task), "table", "task is a global table")
for _, k in ipairs({"spawn", "spawn_sticky", "yield", "sleep", "workers", "now",
                    "current", "channel", "select"}) do
  eq(type(task[k]), "function", "task." .. k)
end

-- spawn passes arguments and await returns every result, nils included.
local t = task.spawn(function(a, b, ...) return a + b, a * b, select("#", ...), nil end,
                     3, 4, nil, nil)
local r = table.pack(t:await())
eq(r.n, 4, "result count")
eq(r[1], 7, "first result"); eq(r[2], 12, "second result")
eq(r[3], 2, "trailing nil arguments kept"); eq(r[4], nil, "nil result")
r = table.pack(t:await())
eq(r.n, 4, "await twice gives the results again"); eq(r[1], 7, "same results")
eq(select("#", task.spawn(function() end):await()), 0, "no results")
local big = {}
for i = 1, 200 do big[i] = i end
r = table.pack(task.spawn(function(...) return ... end, table.unpack(big)):await())
eq(r.n, 200, "200 arguments through and back")
eq(r[1] + r[100] + r[200], 301, "their values")
eq(task.spawn(function(x) return x.v end, {v = "shared"}):await(), "shared", "tables are shared")
local shared = {}
task.spawn(function() shared.x = 1 end):await()
eq(shared.x, 1, "writes by a finished task are visible")
local up = 0
task.spawn(function() up = up + 10 end):await()
eq(up, 10, "upvalues are shared")

-- await re-raises the task's error: tables stay the same table, strings keep the position.
local errt = {code = 7}
local bad = task.spawn(function() error(errt) end)
local ok, e = pcall(bad.await, bad)
eq(ok, false, "await of a failed task raises")
check(rawequal(e, errt), "the very same error table")
ok, e = pcall(bad.await, bad)
check(not ok and rawequal(e, errt), "awaiting again raises it again")
eq(bad:status(), "panicked", "failed task status")
local function fails() error("deep failure") end
bad = task.spawn(function() fails() end)
ok, e = pcall(bad.await, bad)
eq(ok, false, "string error raised")
eq(e, "task_basic.lua:51: deep failure", "with its position")
local t42 = task.spawn(function() error(42) end)
ok, e = pcall(t42.await, t42)
eq(e, 42, "non-string error values as is")
ok, e = pcall(function() return task.spawn(function() error() end):await() end)
check(not ok and e == nil, "nil error value: " .. tostring(e))
ok, e = pcall(function() return task.spawn(function() local x = nil; return x.y end):await() end)
check(not ok and tostring(e):find("attempt to index a nil value", 1, true), "runtime error: " .. tostring(e))
eq(errorOf(task.spawn, 42), "bad argument #1 to 'task.spawn' (function expected, got number)",
   "spawn needs a function")
eq(errorOf(function() return task.spawn(function() return task.current():await() end):await() end),
   "a task cannot await itself", "self await")

-- Handles: id, status, tostring, current.
local main = task.current()
eq(main:id(), 0, "main task id")
eq(main:status(), "running", "main task is running")
eq(tostring(main), "task 0 (running)", "tostring of main")
check(rawequal(task.current(), main), "current returns the same handle")
local ids, seen = {}, {}
for i = 1, 20 do
  local h = task.spawn(function() return task.current() end)
  ids[i] = h
  check(math.type(h:id()) == "integer" and h:id() > 0, "task id is a positive integer")
  check(not seen[h:id()], "ids are unique")
  seen[h:id()] = true
end
for i = 1, 20 do
  check(rawequal(ids[i]:await(), ids[i]), "current inside a task is its handle")
  eq(tostring(ids[i]), "task " .. ids[i]:id() .. " (completed)", "tostring of a finished task")
  eq(ids[i]:status(), "completed", "completed status")
end
eq(task.spawn(function() return task.current():status() end):await(), "running",
   "a task sees itself running")
local mainch = task.channel()
local watcher = task.spawn(function()
  local deadline = task.now() + 2
  while main:status() ~= "suspended" and task.now() < deadline do task.yield() end
  local st = main:status()
  mainch:send(st)
end)
eq(mainch:recv(), "suspended", "main is suspended while it waits on a channel")
watcher:await()
local gate = task.channel()
local h = task.spawn(function() return gate:recv() end)
-- Another worker may already have run it up to its receive.
local st = h:status()
check(st == "ready" or st == "running" or st == "suspended", "new task ready, running or waiting: " .. st)
task.sleep(0.02)
eq(h:status(), "suspended", "blocked task is suspended")
eq(tostring(h), "task " .. h:id() .. " (suspended)", "tostring while suspended")
gate:send("go")
eq(h:await(), "go", "woken task returns")
eq(h:status(), "completed", "then completed")

-- Many tasks awaiting one task.
local start = task.channel()
local target = task.spawn(function() start:recv(); return "shared result", 2 end)
local waiters = {}
for i = 1, 20 do
  waiters[i] = task.spawn(function() local a, b = target:await(); return a .. "/" .. b .. "/" .. i end)
end
task.yield()
start:send(true)
local all = true
for i = 1, 20 do
  if waiters[i]:await() ~= "shared result/2/" .. i then all = false end
end
check(all, "20 awaiters all get the result")
local failing = task.spawn(function() start:recv(); error(errt) end)
for i = 1, 10 do
  waiters[i] = task.spawn(function() local okw, ew = pcall(failing.await, failing); return not okw and rawequal(ew, errt) end)
end
start:send(true)
all = true
for i = 1, 10 do if waiters[i]:await() ~= true then all = false end end
check(all, "10 awaiters all get the same error table")

-- Nested spawns: a tree of tasks summing 1..64.
local function sum(lo, hi)
  if hi - lo < 4 then
    local s = 0
    for i = lo, hi do s = s + i end
    return s
  end
  local mid = (lo + hi) // 2
  local left = task.spawn(sum, lo, mid)
  local right = task.spawn(sum, mid + 1, hi)
  return left:await() + right:await()
end
eq(sum(1, 64), 2080, "task tree sum")

-- Sticky tasks behave alike for the program.
local st = task.spawn_sticky(function(a, b)
  local n = 0
  for i = 1, 10 do task.yield(); n = n + i end
  task.sleep(0)
  return a .. b, n
end, "x", "y")
local s1, s2 = st:await()
eq(s1, "xy", "sticky task result"); eq(s2, 55, "sticky task loop")
ok, e = pcall(function() return task.spawn_sticky(function() error(errt) end):await() end)
check(not ok and rawequal(e, errt), "sticky task error")
eq(errorOf(task.spawn_sticky, nil), "bad argument #1 to 'task.spawn_sticky' (function expected, got nil)",
   "spawn_sticky needs a function")

-- workers and now.
local w = task.workers()
check(math.type(w) == "integer" and w >= 1, "workers is a positive integer: " .. tostring(w))
local t0 = task.now()
eq(math.type(t0), "float", "now is a float")
local t1 = task.now()
check(t1 >= t0, "now is monotonic")
task.sleep(0.05)
local t2 = task.now()
check(t2 - t1 >= 0.049, "sleep(0.05) takes at least 0.05 s: " .. (t2 - t1))
check(t2 - t1 < 5, "and not forever")

T.done()
