-- weft-only -- weft-tasks
-- weft-not-deterministic: the order checks are the worker loop's, which that mode's chooser replaces
-- Spawn order (docs/tasks.md, "Order of running"): on one worker a task's spawns start in
-- the order it spawned them, newer spawns before older ready tasks, so a tree of tasks
-- runs depth first and keeps few of them alive; a yield goes behind every ready task. On
-- more workers the order checks hold vacuously and only the results count.
local NAME = "task_spawn_order"
local T = dofile("helpers/check.lua")(NAME)
local check = T.check
local one = task.workers() == 1

-- A flat loop of spawns, awaited afterwards: started in spawn order (past the 16 that
-- wait on the spawner's stack, the rest queue in order behind them).
-- Tasks report through channels: on several workers, appending to one table would race.
local function drain(ch)
  local got = {}
  while true do
    local v, ok = ch:try_recv()
    if not ok then return got end
    got[#got + 1] = v
  end
end
local starts = task.channel(40)
task.spawn(function()
  local ts = {}
  for i = 1, 40 do ts[i] = task.spawn(function() starts:send(i) end) end
  for i = 1, 40 do ts[i]:await() end
end):await()
local started = drain(starts)
check(#started == 40, "every flat task ran: " .. #started)
local inOrder = true
for i = 1, 40 do inOrder = inOrder and started[i] == i end
check(not one or inOrder, "flat spawns start in order: " .. table.concat(started, ","))

-- A tree: each node spawns its children, then sums what they send. Depth first, the
-- number of tasks alive at once stays near depth * fan-out.
local alive, maxAlive = 0, 0
local log = {}
local function node(out, name, depth)
  alive = alive + 1
  if alive > maxAlive then maxAlive = alive end
  if one and #log < 12 then log[#log + 1] = name end
  local sum = 1
  if depth > 0 then
    local ch = task.channel()
    for i = 1, 4 do task.spawn(node, ch, name .. i, depth - 1) end
    for _ = 1, 4 do sum = sum + ch:recv() end
  end
  alive = alive - 1
  out:send(sum)
end
local root = task.channel()
task.spawn(node, root, "r", 5)
local total = root:recv()
check(total == (4 ^ 6 - 1) // 3, "every node counted: " .. total)
check(not one or table.concat(log, " ") == "r r1 r11 r111 r1111 r11111 r11112 r11113 r11114 r1112 r11121 r11122",
      "depth first, children in spawn order: " .. table.concat(log, " "))
check(not one or maxAlive <= 5 * 4 + 1, "a depth-first tree keeps few tasks alive: " .. maxAlive)

-- A yield goes behind the ready tasks, those on the spawner's stack included.
local events = task.channel(3)
task.spawn(function()
  task.spawn(function() events:send("a") end)
  task.spawn(function() events:send("b") end)
  task.yield()
  events:send("parent")
end):await()
local deadline = task.now() + 10
while #events < 3 and task.now() < deadline do task.sleep(0.001) end
local seen = drain(events)
check(#seen == 3, "all three ran: " .. #seen)
check(not one or table.concat(seen, " ") == "a b parent", "the yield waited: " .. table.concat(seen, " "))

T.done()
