-- weft-only -- weft-tasks
-- weft-gc-interval: 400
-- Majors while several tasks run (gc-v2.md "Parallel majors"): the workers parked in a
-- major help mark, racing to claim the same objects (shared metatables, a shared weak
-- table, objects reached from several tasks). Every task's data must come through
-- whole, and weak entries must go exactly when nothing else holds their objects.
-- tools/tsan.sh runs this at --workers 4 under ThreadSanitizer.
local NAME = "task_gc_parallel"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

local weakValues = setmetatable({}, {__mode = "v"})
local weakKeys = setmetatable({}, {__mode = "k"})
local Point = {__index = {norm = function(p) return p.x * p.x + p.y * p.y end}}
local shared = {}
for i = 1, 1000 do shared[i] = {i} end

local function worker(id)
  local keep = {}
  local modes = {}
  for i = 1, 50 do modes[i] = {__mode = (i % 3 == 0) and "k" or nil} end
  local sum = 0
  for round = 1, 12 do
    for i = 1, 1000 do
      local p = setmetatable({x = i, y = round}, Point)
      keep[i % 200 + 1] = p
      local w = setmetatable({}, modes[i % 50 + 1])
      w[p] = shared[i]
      keep[200 + i % 100 + 1] = w
      weakValues[id * 1000 + i % 500] = p
      weakKeys[p] = round
      sum = sum + p:norm() % 7 + w[p][1]
    end
    if round % 4 == id % 4 then collectgarbage() end
    task.yield()
  end
  -- The last round's points are still held by keep: their weak entries stay.
  local held = 0
  for i = 1, 200 do
    if weakKeys[keep[i]] == 12 then held = held + 1 end
  end
  return sum, held
end

local want = 0
for round = 1, 12 do
  for i = 1, 1000 do want = want + (i * i + round * round) % 7 + i end
end
local tasks = {}
for id = 1, 4 do tasks[id] = task.spawn(worker, id) end
for id = 1, 4 do
  local sum, held = tasks[id]:await()
  eq(sum, want, "task " .. id .. " sum")
  eq(held, 200, "task " .. id .. " points still held")
end
tasks = nil
collectgarbage()
collectgarbage()
local left = 0
for _ in pairs(weakKeys) do left = left + 1 end
eq(left, 0, "weak keys whose objects died")
left = 0
for _ in pairs(weakValues) do left = left + 1 end
eq(left, 0, "weak values whose objects died")
for i = 1, 1000 do
  if shared[i][1] ~= i then check(false, "shared table " .. i) break end
end
T.done()
