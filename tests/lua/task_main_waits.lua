-- weft-only -- weft-tasks
-- The main chunk's waits (docs/design/scheduler.md, "The main task's waits"): a wait at
-- the bottom of the main chunk suspends it and the main thread runs the tasks it woke;
-- a wait under a native frame blocks it as before. Every kind of wait, from the main
-- chunk, inside its coroutines and under native frames, and tasks that the main thread
-- runs waiting under native frames on what only the main chunk does next.
local NAME = "task_main_waits"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

-- Ping-pong with the main chunk as one side (where the echo runs: task_stats.lua).
local ping, pong = task.channel(), task.channel()
local echo = task.spawn(function()
  local n = 0
  for v in ping:iter() do n = n + 1; pong:send(v * 2) end
  return n
end)
local sum = 0
for i = 1, 5000 do ping:send(i); sum = sum + pong:recv() end
ping:close()
eq(sum, 5000 * 5001, "ping-pong sum")
eq(echo:await(), 5000, "echo count")

-- Spawn and await, one at a time and many at once.
local total = 0
for i = 1, 500 do total = total + task.spawn(function(x) return x + 1 end, i):await() end
eq(total, 500 * 501 // 2 + 500, "spawn-await one at a time")
local handles = {}
for i = 1, 200 do handles[i] = task.spawn(function() task.yield(); return i end) end
total = 0
for i = 1, 200 do total = total + handles[i]:await() end
eq(total, 200 * 201 // 2, "spawn many, then await")

-- Errors reach the main chunk through its resumed wait.
local failing = task.spawn(function() task.yield(); error("boom", 0) end)
local ok, err = pcall(failing.await, failing)
check(not ok and err == "boom", "await raises the task's error: " .. tostring(err))
local closed = task.channel()
task.spawn(function() closed:close() end)
ok, err = pcall(closed.send, closed, 1)
check(not ok and tostring(err):find("send on closed channel", 1, true), "send on a channel closed while waiting")

-- Timeouts, sleeps and select from the main chunk.
local quiet = task.channel()
local v, got, why = quiet:recv(0.01)
check(v == nil and got == false and why == "timeout", "recv timeout")
local t0 = task.now()
task.sleep(0.01)
check(task.now() - t0 >= 0.009, "sleep")
local a, b = task.channel(), task.channel()
task.spawn(function() b:send("from b") end)
local index, value = task.select({ { a, "recv" }, { b, "recv" } })
check(index == 2 and value == "from b", "select")

-- A wait inside a coroutine of the main chunk suspends the whole chain.
local co = task.channel()
task.spawn(function() co:send("into the coroutine") end)
local wrapped = coroutine.wrap(function() return "got " .. co:recv() end)
eq(wrapped(), "got into the coroutine", "wait inside a coroutine")

-- A wait of the main chunk under a native frame blocks its thread as before.
local sorter = task.channel(10)
task.spawn(function() for i = 1, 10 do sorter:send(i) end end)
local list = { 3, 1, 2 }
table.sort(list, function(x, y) sorter:recv(); return x < y end)
eq(table.concat(list, ","), "1,2,3", "wait in the main chunk's sort comparator")

-- A task the main thread runs waits under a native frame (a gsub function) for what
-- only the main chunk sends after its own wait ends: the main chunk goes on inside it.
local req, resp = task.channel(), task.channel()
local rpc = task.spawn(function()
  return (("abc"):gsub("%a", function(c) req:send(c); return resp:recv() end))
end)
for _ = 1, 3 do resp:send(req:recv():upper()) end
eq(rpc:await(), "ABC", "gsub function waiting on the main chunk")

-- The same through a metamethod, and through a sort comparator.
local proxy = setmetatable({}, { __index = function(_, k) req:send(k); return resp:recv() end })
local viaIndex = task.spawn(function() return proxy.x .. proxy.y end)
for _ = 1, 2 do resp:send(req:recv() .. "!") end
eq(viaIndex:await(), "x!y!", "__index waiting on the main chunk")
local viaSort = task.spawn(function()
  local l = { 2, 1 }
  table.sort(l, function(x, y) req:send(x); resp:recv(); return x < y end)
  req:close()
  return l[1]
end)
for _ in req:iter() do resp:send(true) end
eq(viaSort:await(), 1, "sort comparator waiting on the main chunk")

T.done()
