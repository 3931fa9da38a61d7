-- Spawn and await `n` near-empty tasks (default one million), in batches of 1,000: each
-- task returns its argument, the awaits add them up. Prints ns per task.
--   weft [--workers N] spawn.lua [n]
local B = dofile((arg[0]:match("^(.*[/\\])") or "./") .. "common.lua")
local now = B.clock()
local n = B.arg(1, 1000000)
local kBatch = 1000

local function identity(x) return x end

-- The driver is a task like any other (the main chunk waits on the OS, not the scheduler).
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

local sum, seconds = task.spawn(driver):await()

B.check(sum == n * (n + 1) // 2, "sum %d, expected %d", sum, n * (n + 1) // 2)
B.result("spawn", { "n", n }, { "workers", task.workers() }, { "seconds", seconds },
  { "ns_per_task", seconds * 1e9 / n }, { "checksum", sum })
