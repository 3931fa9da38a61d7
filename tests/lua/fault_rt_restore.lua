-- weft-only
-- expect-exit: 3
-- weft-env: WEFT_FAULT=rt.restore
-- A failed root restoration (a task's first dispatch) closes the runtime: exit 3.
local t = task.spawn(function() return 1 end)
print("spawned")
print(t:await())
