-- weft-only
-- expect-exit: 3
-- weft-env: WEFT_FAULT=rt.attach
-- A worker that cannot attach to the collector closes the runtime: exit 3.
local t = task.spawn(function() return 1 end)
print("spawned")
print(t:await())
