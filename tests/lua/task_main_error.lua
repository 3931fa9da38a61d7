-- weft-only -- weft-tasks
-- expect-exit: 1
-- An uncaught error in the main task ends the run with status 1, as in lua, even while other
-- tasks are sleeping, blocked, yielding or spinning.
local ch = task.channel()
local sleeper = task.spawn(function() task.sleep(100) end)
local blocked = task.spawn(function() ch:recv() end)
local yielder = task.spawn(function() while true do task.yield() end end)
local spinner = task.spawn(function() local n = 0; while true do n = n + 1 end end)
local sticky = task.spawn_sticky(function() while true do task.sleep(0.001) end end)
local function waitFor(t, status)
  while t:status() ~= status do task.sleep(0.001) end
end
waitFor(sleeper, "suspended")
waitFor(blocked, "suspended")
print("tasks alive:", sleeper:status(), blocked:status())
local function fail(x)
  error("main failed with " .. x)
end
fail(task.spawn(function() return 42 end):await())
print("not reached")
