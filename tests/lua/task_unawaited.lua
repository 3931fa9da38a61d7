-- weft-only -- weft-tasks
-- expect-exit: 0
-- An error in a task nobody awaits does not stop the program; it is reported on stderr at
-- the end with its traceback (newest task first). Awaited, caught and cancelled ones are not.
local function inner(x) error("inner failed: " .. x) end
local function outer(x) inner(x) end
local failing = {
  task.spawn(function() outer("string") end),
  task.spawn(function() local t = nil; return t.field end),
  task.spawn(function() error({code = 1}) end),
  task.spawn_sticky(function() error("sticky, level 0", 0) end),
}
-- Not reported: awaited by main, awaited by another task, caught inside, cancelled, fine.
local awaited = task.spawn(function() error("awaited") end)
print("awaited:", pcall(awaited.await, awaited))
local byother = task.spawn(function() error("awaited by another task") end)
local other = task.spawn(function() return (pcall(byother.await, byother)) end)
print("other:", other:await())
local caught = task.spawn(function() return pcall(error, "caught") end)
print("caught:", caught:await())
local cancelled = task.spawn(function() task.sleep(100) end)
print("cancel:", cancelled:cancel())
print("fine:", task.spawn(function() return "ok" end):await())
-- Wait until all four have failed, without awaiting them.
for i, t in ipairs(failing) do
  while t:status() ~= "panicked" do task.sleep(0.001) end
end
print("statuses:", failing[1]:status(), failing[4]:status())
-- The program goes on.
local sum = 0
for i = 1, 10 do sum = sum + task.spawn(function() return i end):await() end
print("still running:", sum)
