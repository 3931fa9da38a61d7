-- weft-only -- weft-tasks
-- What a task leaves behind: results kept after its thread is gone, a thread the script
-- captured staying dead and usable while later tasks reuse others' stacks, handles and
-- channels collected while their task still runs, and channel buffers that wrap and grow.
local NAME = "task_lifecycle"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

-- Results survive the task, a collection, and many later tasks reusing stacks.
local kept = task.spawn(function(a) return a, {a * 2}, "s" .. a, nil end, 21)
eq(select("#", kept:await()), 4, "four results, a nil included")
for i = 1, 2000 do task.spawn(function() return i end):await() end
collectgarbage()
local a, t, s, z = kept:await()
eq(a, 21, "first result after reuse")
eq(t[1], 42, "a table result after a collection")
eq(s, "s21", "a string result")
eq(z, nil, "the trailing nil")
eq(kept:status(), "completed", "status after completion")

-- An error value stays the same table after the task's thread went back to the pool.
local errValue = {code = 7}
local failing = task.spawn(function() error(errValue) end)
for i = 1, 500 do task.spawn(function() return i end):await() end
collectgarbage()
local ok, got = pcall(failing.await, failing)
check(not ok and got == errValue, "await raises the very error table")

-- A thread the script captured is never reused: it stays dead, with no frames.
local captured = task.spawn(function() return coroutine.running() end):await()
eq(type(captured), "thread", "coroutine.running inside a task gives a thread")
for i = 1, 2000 do task.spawn(function(x) local y = {x} return y[1] end, i):await() end
collectgarbage()
eq(coroutine.status(captured), "dead", "the captured thread is dead")
local rok, rmsg = coroutine.resume(captured)
check(not rok and rmsg == "cannot resume dead coroutine", "resuming it fails: " .. tostring(rmsg))
check(debug.traceback(captured):find("stack traceback:", 1, true) ~= nil, "its traceback is empty")

-- Handles have no __gc: they release their task from the collector.
eq(rawget(getmetatable(kept), "__gc"), nil, "no __gc on task handles")
eq(rawget(getmetatable(task.channel()), "__gc"), nil, "no __gc on channels")

-- A task whose handle is collected while it waits still runs to its end.
local ch, out = task.channel(), task.channel(10)
for i = 1, 5 do task.spawn(function() out:send(ch:recv() * 2) end) end
task.sleep(0.02)
collectgarbage(); collectgarbage()
for i = 1, 5 do ch:send(i) end
local sum = 0
for _ = 1, 5 do sum = sum + out:recv() end
eq(sum, 30, "tasks without handles finish their work")

-- A channel collected while its tasks are gone; a fresh one per task in a loop.
for i = 1, 300 do
  local c = task.channel(1)
  c:send(i)
  eq(c:recv(), i, "a channel per iteration")
end
collectgarbage()

-- Buffered channels: wrap around the ring, grow while wrapped, keep FIFO order.
local ring = task.channel(100)
for i = 1, 50 do ring:send(i) end
for i = 1, 25 do eq(ring:recv(), i, "first half in order") end
for i = 51, 120 do ring:send(i) end           -- wraps, then grows while wrapped
eq(#ring, 95, "buffered count after the wrap")
local inOrder = true
for i = 26, 120 do
  if ring:recv() ~= i then inOrder = false end
end
check(inOrder, "every value in order across the wrap and the growth")
eq(#ring, 0, "drained")
eq(ring:try_recv(), nil, "nothing left")

-- A full buffered channel blocks its sender until a receive frees a place.
local small = task.channel(2)
small:send("a"); small:send("b")
eq(small:try_send("c"), false, "full")
local sender = task.spawn(function() small:send("c"); return "sent" end)
task.sleep(0.01)
eq(small:recv(), "a", "oldest first")
eq(sender:await(), "sent", "the blocked sender got the freed place")
eq(small:recv(), "b", "then the next")
eq(small:recv(), "c", "then the blocked sender's value")
small:close()
local v, okc = small:recv()
check(v == nil and okc == false, "closed and drained")

T.done()
