-- weft-only
-- expect-exit: 3
-- weft-env: WEFT_FAULT=rt.attach
-- A worker that cannot attach to the collector closes the runtime: exit 3.
-- Printed before the spawn: the failure may close the runtime (and stop the main chunk
-- at its next safepoint) as soon as the task is published.
print("spawning")
-- The task yields first: the main thread runs the tasks it spawns itself while it waits
-- (the host lane), and only a worker attaches.
local t = task.spawn(function() task.yield(); return 1 end)
print(t:await())
