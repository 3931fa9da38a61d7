-- weft-only
-- expect-exit: 3
-- weft-env: WEFT_FAULT=rt.restore
-- A failed root restoration (a task's first dispatch) closes the runtime: exit 3.
-- Printed before the spawn: the failure may close the runtime (and stop the main chunk
-- at its next safepoint) as soon as the task is published.
print("spawning")
local t = task.spawn(function() return 1 end)
print(t:await())
