-- Parallel compute: `tasks` independent CPU-bound tasks (default 8), each stepping a
-- 64-bit linear congruential generator `n` times (default 50 million, about half a
-- second per task on one worker). Each result is checked against the generator's
-- closed-form jump-ahead. Run once with --workers 1 and once with every worker: the
-- speedup is the ratio of the two times (bench/tasks/run.py does this).
--   weft [--workers N] parallel.lua [n] [tasks]
local B = dofile((arg[0]:match("^(.*[/\\])") or "./") .. "common.lua")
local now = B.clock()
local n = B.arg(1, 50000000)
local count = B.arg(2, 8)
local kMul, kAdd = 6364136223846793005, 1442695040888963407   -- wrapping int64 arithmetic

local function stepMany(x, steps)
  for _ = 1, steps do x = x * kMul + kAdd end
  return x
end

-- x after `steps` steps in O(log steps): compose the affine map x -> a*x + c with itself.
local function jumpAhead(x, steps)
  local accMul, accAdd, curMul, curAdd = 1, 0, kMul, kAdd
  while steps > 0 do
    if steps & 1 == 1 then
      accMul, accAdd = accMul * curMul, accAdd * curMul + curAdd
    end
    curMul, curAdd = curMul * curMul, (curMul + 1) * curAdd
    steps = steps >> 1
  end
  return accMul * x + accAdd
end

-- The driver is a task like any other (the main chunk waits on the OS, not the scheduler).
local results, seconds = task.spawn(function()
  local handles, values = {}, {}
  local start = now()
  for i = 1, count do handles[i] = task.spawn(stepMany, i, n) end
  for i = 1, count do values[i] = handles[i]:await() end
  return values, now() - start
end):await()

local checksum = 0
for i = 1, count do
  local want = jumpAhead(i, n)
  B.check(results[i] == want, "task %d gave %d, expected %d", i, results[i], want)
  checksum = checksum ~ results[i]
end
B.result("parallel", { "n", n }, { "tasks", count }, { "workers", task.workers() },
  { "seconds", seconds }, { "checksum", checksum })
