-- weft-only -- weft-tasks
-- expect-exit: 1
-- Waits below a native that re-entered Lua (a sort comparator, a gsub replacement) block
-- their OS thread; the worker's other tasks run meanwhile on another thread, so the
-- tasks that end those waits run even with one worker, and in deterministic mode.
-- A native wait that nothing can end is still a deadlock, reported as such
-- (that task is spawned first so that its id does not depend on timing).

local T = dofile("helpers/check.lua")("task_native_wait")

-- Nobody will ever send on `never`: this comparator's wait can never end.
local never = task.channel()
local stuck = task.spawn(function()
  table.sort({2, 1}, function(a, b) task.select({{never, "recv"}}); return a < b end)
end)

-- A comparison server: the comparator asks it over one channel, waits for the answer
-- on another.
local req, resp = task.channel(), task.channel()
local asked = 0
local server = task.spawn(function()
  while true do
    local pair, ok = req:recv()
    if not ok then return "closed" end
    asked = asked + 1
    resp:send(pair[1] < pair[2])
  end
end)
local sorter = task.spawn(function()
  local t = {5, 3, 9, 1, 7, 2, 8, 6, 4}
  local calls = 0
  table.sort(t, function(a, b)
    calls = calls + 1
    req:send({a, b})
    return (resp:recv())
  end)
  req:close()
  return table.concat(t, " "), calls
end)
local sorted, calls = sorter:await()
T.eq(sorted, "1 2 3 4 5 6 7 8 9", "a sort whose comparator waits on channels")
T.eq(server:await(), "closed", "the comparison server ends")
T.eq(asked, calls, "one request per comparison")

-- gsub's replacement function receives each replacement from a feeder task.
local words = task.channel()
local feeder = task.spawn(function()
  for _, w in ipairs({"one", "two", "three"}) do words:send(w) end
end)
local replacer = task.spawn(function()
  return (string.gsub("a-b-c", "%a", function() return (words:recv()) end))
end)
T.eq(replacer:await(), "one-two-three", "a gsub replacement that waits on a channel")
feeder:await()

-- Nested: a comparator waits inside a gsub function; the peer is queued behind both.
local inner = task.channel()
local nested = task.spawn(function()
  return (string.gsub("x", "x", function()
    local t = {2, 1}
    table.sort(t, function(a, b) return a + inner:recv() < b end)
    return table.concat(t, ",")
  end))
end)
local pump = task.spawn(function()
  local sent = 0
  while nested:status() ~= "completed" do
    if inner:try_send(0) then sent = sent + 1 end
    task.yield()
  end
  return sent > 0
end)
T.eq(nested:await(), "1,2", "a comparator waiting inside a gsub replacement")
T.eq(pump:await(), true, "the nested wait was fed")

T.done()
stuck:await()
print("not reached")
