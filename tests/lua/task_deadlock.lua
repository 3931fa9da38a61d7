-- weft-only -- weft-tasks
-- expect-exit: 1
-- Deadlock: the main task waits and nothing can ever run. Sleeping tasks and receives with
-- a timeout are not deadlocks: the report comes only after they are done. (The blocked
-- tasks are spawned first so that their ids do not depend on timing.)
local T = dofile("helpers/check.lua")("task_deadlock")
local main = task.current()
local a, b = task.channel(), task.channel(1)
local t1 = task.spawn(function() main:await() end)
local t2 = task.spawn(function() t1:await() end)
local t3 = task.spawn(function() task.select({{a, "recv"}, {b, "recv"}}) end)
local sleeper = task.spawn(function() task.sleep(0.05); return "slept" end)
local timed = task.spawn(function() return select(3, task.channel():recv(0.05)) end)
T.eq(sleeper:await(), "slept", "a sleeping task is not deadlocked")
T.eq(timed:await(), "timeout", "a receive with a timeout is not deadlocked")
T.done()
t2:await()
print("not reached")
