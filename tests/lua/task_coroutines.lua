-- weft-only -- weft-tasks
-- Coroutines inside tasks: generators, task switches inside coroutines, coroutines handed
-- between tasks, resuming a coroutine another task is running, yield outside a coroutine.
local NAME = "task_coroutines"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function errorOf(f, ...)
  local ok, msg = pcall(f, ...)
  return not ok and tostring(msg):gsub("^[^:]*:%d+: ", "") or "no error"
end
local function waitFor(t, status)
  local deadline = task.now() + 3
  while t:status() ~= status and task.now() < deadline do task.sleep(0.001) end
  return t:status()
end

-- Generators inside tasks, many tasks at once.
local function gen(n)
  return coroutine.wrap(function() for i = 1, n do coroutine.yield(i) end end)
end
local ts = {}
for k = 1, 20 do
  ts[k] = task.spawn(function()
    local s = 0
    for v in gen(k) do s = s + v; if v % 3 == 0 then task.yield() end end
    return s
  end)
end
local ok = true
for k = 1, 20 do if ts[k]:await() ~= k * (k + 1) // 2 then ok = false end end
check(ok, "20 tasks with generators")

-- Task switches (yield, sleep, channel waits) inside a coroutine keep it intact.
local ch = task.channel()
local t = task.spawn(function()
  local co = coroutine.create(function(a)
    task.yield()
    local b = coroutine.yield(a + 1)
    task.sleep(0.001)
    local c = ch:recv()
    local d = coroutine.yield(b + c)
    return "end", d
  end)
  local r = {}
  local _, x = coroutine.resume(co, 1); r[#r + 1] = x
  local _, y = coroutine.resume(co, 10); r[#r + 1] = y
  local _, e, d = coroutine.resume(co, "D"); r[#r + 1] = e; r[#r + 1] = d
  r[#r + 1] = coroutine.status(co)
  return table.concat(r, " ")
end)
ch:send(100)
eq(t:await(), "2 110 end D dead", "coroutine across task switches")

-- Nested coroutines, each doing task switches.
local nest = task.spawn(function()
  local inner = coroutine.wrap(function()
    for i = 1, 3 do task.yield(); coroutine.yield("i" .. i) end
  end)
  local outer = coroutine.wrap(function()
    for i = 1, 3 do task.sleep(0); coroutine.yield("o" .. i .. inner()) end
  end)
  return outer() .. outer() .. outer()
end)
eq(nest:await(), "o1i1o2i2o3i3", "nested coroutines")

-- Errors inside a coroutine in a task stay in the coroutine.
local errt = {}
eq(task.spawn(function()
  local co = coroutine.create(function() task.yield(); error(errt) end)
  local okc, e = coroutine.resume(co)
  return not okc and rawequal(e, errt) and coroutine.status(co)
end):await(), "dead", "error caught by resume")
local escaping = task.spawn(function() coroutine.wrap(function() task.yield(); error(errt) end)() end)
local okw, ew = pcall(escaping.await, escaping)
check(not okw and rawequal(ew, errt), "error through wrap ends the task with the same table")

-- A suspended coroutine can be handed from task to task and resumed there.
local counter = coroutine.create(function()
  local n = 0
  while true do n = n + 1; coroutine.yield(n) end
end)
local hops = {}
for k = 1, 10 do
  hops[k] = task.spawn(function() return select(2, coroutine.resume(counter)) end)
  hops[k]:await()
end
eq(select(2, coroutine.resume(counter)), 11, "a coroutine resumed by 10 tasks in turn")
local handed = task.channel(1)
local maker = task.spawn(function()
  local co = coroutine.create(function(x) local y = coroutine.yield(x * 2); return y + 1 end)
  coroutine.resume(co, 21)
  handed:send(co)
end)
maker:await()
local co = handed:recv()
eq(coroutine.status(co), "suspended", "handed coroutine suspended")
local okh, v = coroutine.resume(co, 41)
check(okh and v == 42, "resumed by the receiving task")

-- Resuming a coroutine that another task is running fails.
local gate = task.channel()
local shared = coroutine.create(function() gate:recv(); return "finished" end)
local runner = task.spawn(function() return coroutine.resume(shared) end)
eq(waitFor(runner, "suspended"), "suspended", "runner blocked inside the coroutine")
eq(coroutine.status(shared), "running", "status of a coroutine another task runs")
local okr, er = coroutine.resume(shared)
check(okr == false and er == "cannot resume non-suspended coroutine", "resume from main: " .. tostring(er))
local other = task.spawn(function() return coroutine.resume(shared) end)
local oko, eo = other:await()
check(oko == false and eo == "cannot resume non-suspended coroutine", "resume from a third task: " .. tostring(eo))
local wrapped = coroutine.wrap(function() gate:recv() end)
local wrunner = task.spawn(function() wrapped(); return "wrapped done" end)
eq(waitFor(wrunner, "suspended"), "suspended", "runner blocked inside a wrapped coroutine")
eq(errorOf(wrapped), "cannot resume non-suspended coroutine", "calling a wrap another task runs")
eq(errorOf(coroutine.close, shared), "cannot close a running coroutine", "closing it fails too")
gate:send(1); gate:send(2)
local r1, r2 = runner:await()
check(r1 == true and r2 == "finished", "the owner finishes the coroutine")
eq(wrunner:await(), "wrapped done", "the wrap's owner finishes it")
eq(coroutine.status(shared), "dead", "dead afterwards")

-- Two tasks racing to resume one suspended coroutine: exactly one wins each step.
local steps = coroutine.create(function()
  for i = 1, 1000 do coroutine.yield(i) end
  return "over"
end)
local racers = {}
for k = 1, 4 do
  racers[k] = task.spawn(function()
    local wins, fails = 0, 0
    for i = 1, 100 do
      local okr2, val = coroutine.resume(steps)
      if okr2 then wins = wins + 1
      elseif val == "cannot resume non-suspended coroutine" then fails = fails + 1
      else return "unexpected: " .. tostring(val) end
      if i % 10 == 0 then task.yield() end
    end
    return wins, fails
  end)
end
local totalwins, good = 0, true
for k = 1, 4 do
  local w, f = racers[k]:await()
  if type(w) ~= "number" then good = false; print(w) else totalwins = totalwins + w end
end
check(good, "racing resumes only fail with the expected message")
local okl, last = coroutine.resume(steps)
eq(last, totalwins + 1, "every successful resume advanced the coroutine once")

-- Yield outside a coroutine in a task.
eq(errorOf(function() return task.spawn(function() coroutine.yield(1) end):await() end),
   "attempt to yield from outside a coroutine", "a task's body is not a coroutine")
eq(task.spawn(function() return coroutine.isyieldable() end):await(), false,
   "isyieldable is false in a task's body")
eq(task.spawn(function() return coroutine.wrap(function() return coroutine.isyieldable() end)() end):await(),
   true, "isyieldable is true in a coroutine in a task")
local th, ismain = coroutine.running()
eq(type(th), "thread", "running in main")
local cothread = task.spawn(function() local c = coroutine.running(); return c end):await()
eq(type(cothread), "thread", "running in a task gives a thread")
check(cothread ~= th, "a task's thread is not main's")

-- coroutine.close inside a task closes variables of the coroutine.
local closed = {}
eq(task.spawn(function()
  local c = coroutine.create(function()
    local x <close> = setmetatable({}, {__close = function() closed[#closed + 1] = "x" end})
    task.yield()
    coroutine.yield()
  end)
  coroutine.resume(c)
  return coroutine.close(c)
end):await(), true, "close in a task")
eq(table.concat(closed), "x", "its variable closed")

-- The debug library on another task's coroutines: one running (or waiting) there is
-- refused, never read while it changes; a suspended one is held while it is inspected.
do
  local gate = task.channel()
  local co
  local owner = task.spawn(function()
    co = coroutine.create(function(a)
      local here = a
      gate:recv()
      return here
    end)
    return coroutine.resume(co, 7)
  end)
  while not co or coroutine.status(co) ~= "running" do task.sleep(0.001) end
  eq(errorOf(debug.getlocal, co, 1, 1), "cannot inspect a coroutine running in another task", "getlocal refused")
  eq(errorOf(debug.getinfo, co, 1), "cannot inspect a coroutine running in another task", "getinfo refused")
  eq(errorOf(debug.setlocal, co, 1, 1, 0), "cannot inspect a coroutine running in another task", "setlocal refused")
  eq(errorOf(debug.sethook, co, print, "l"), "cannot inspect a coroutine running in another task", "sethook refused")
  check(debug.traceback(co, "msg"):find("msg\nstack traceback:\n\t%(cannot inspect"), "traceback says why")
  gate:send(true)
  local ok, v = owner:await()
  eq(ok, true, "the owner's coroutine finished")
  eq(v, 7, "with its local untouched")

  local paused = task.spawn(function()
    local c = coroutine.create(function(x) local y = x * 2; coroutine.yield(y); return y end)
    coroutine.resume(c, 21)
    return c
  end):await()
  local name, value = debug.getlocal(paused, 1, 2)
  eq(name, "y", "a suspended coroutine of a finished task can be inspected")
  eq(value, 42, "its local")
  eq(coroutine.status(paused), "suspended", "and is suspended again after")
  eq(select(2, coroutine.resume(paused)), 42, "and resumes")
end

T.done()
