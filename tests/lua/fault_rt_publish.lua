-- weft-only
-- expect-exit: 3
-- weft-env: WEFT_FAULT=rt.publish
-- A failed root publication (a task leaving its worker) closes the runtime: exit 3.
local t = task.spawn(function() task.yield() return 1 end)
print("spawned")
print(t:await())
