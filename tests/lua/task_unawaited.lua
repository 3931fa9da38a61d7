-- weft-only -- weft-tasks
-- expect-exit: 0
-- An error in a task nobody awaits does not stop the program; it is reported on stderr at
-- the end with its traceback (newest task first). Awaited, caught and cancelled ones are not.
local T = dofile("helpers/check.lua")("task_unawaited")
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
T.eq(T.msgOf(awaited.await, awaited), "task_unawaited.lua:15: awaited", "awaited by main")
local byother = task.spawn(function() error("awaited by another task") end)
local other = task.spawn(function() return (pcall(byother.await, byother)) end)
T.eq(other:await(), false, "awaited by another task")
local caught = task.spawn(function() return pcall(error, "caught") end)
T.check(select("#", caught:await()) == 2 and not caught:await(), "caught inside")
T.eq(select(2, caught:await()), "caught", "caught inside: its message")
local cancelled = task.spawn(function() task.sleep(100) end)
T.eq(cancelled:cancel(), true, "cancelled")
T.eq(task.spawn(function() return "ok" end):await(), "ok", "fine")
-- All four fail, unawaited (their status says so within a few seconds).
for i, t in ipairs(failing) do
  local deadline = task.now() + 10
  while t:status() ~= "panicked" and task.now() < deadline do task.sleep(0.001) end
  T.eq(t:status(), "panicked", "unawaited failing task " .. i .. "'s status")
end
-- The program goes on.
local sum = 0
for i = 1, 10 do sum = sum + task.spawn(function() return i end):await() end
T.eq(sum, 55, "the program goes on")
T.done()
