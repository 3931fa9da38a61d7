-- Spawn and await `n` near-empty tasks (default one million), in batches of 1,000: each
-- task returns its argument, the awaits add them up. Prints ns per task. With `from` 2
-- the main chunk itself spawns and awaits (result `spawn_main`).
--   weft [--workers N] spawn.lua [n] [from: 1 a task, 2 the main chunk]
local B = dofile((arg[0]:match("^(.*[/\\])") or "./") .. "common.lua")
local now = B.clock()
local n = B.arg(1, 1000000)
local fromMain = B.arg(2, 1) == 2
local kBatch = 1000

local function identity(x) return x end

-- The driver is a task like any other, or the main chunk.
local function driver()
  local handles = {}
  local sum, started = 0, 0
  local start = now()
  while started < n do
    local count = math.min(kBatch, n - started)
    for i = 1, count do
      handles[i] = task.spawn(identity, started + i)
    end
    for i = 1, count do
      sum = sum + handles[i]:await()
    end
    started = started + count
  end
  return sum, now() - start
end

local sum, seconds
if fromMain then
  sum, seconds = driver()
else
  sum, seconds = task.spawn(driver):await()
end

B.check(sum == n * (n + 1) // 2, "sum %d, expected %d", sum, n * (n + 1) // 2)
B.result(fromMain and "spawn_main" or "spawn", { "n", n }, { "workers", task.workers() }, { "seconds", seconds },
  { "ns_per_task", seconds * 1e9 / n }, { "checksum", sum })
