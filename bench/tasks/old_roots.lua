-- What a minor collection walks besides the survivors (issue 11, gc-v2.md): one task
-- allocates short-lived tables for `ms` milliseconds twice over the same old heap of
-- `n` tables and `n` more in groups of ten: first as plain tables (the baseline), then
-- with a __gc metamethod set on each of the `n` (finalizer registrations) and each
-- group sent into a channel of its own (`n / 10` buffers). The live heap, and so the
-- nursery, is about the same size in both runs. A minor that walks every finalizer
-- registration and every channel's buffer pauses longer in the second run; one that
-- visits only what may be young pauses about the same. Prints, for each run, the mean
-- minor pause (task.stats(), the collections during the run) and the longest gap
-- between the allocating task's iterations, and the ratios second / baseline. Checks
-- that every finalizer ran once, after the objects were dropped, and that every
-- buffered value came back.
--   weft [--workers N] [--stats] old_roots.lua [n] [ms]
local B = dofile((arg[0]:match("^(.*[/\\])") or "./") .. "common.lua")
local now = B.clock(true)
local n = B.arg(1, 1000000)
local ms = B.arg(2, 2000)
local perChannel = 10

local finalized = 0
local meta = { __gc = function() finalized = finalized + 1 end }

local function minors()
  local m = task.stats().gc.minor
  return m.count, m.total_us
end

-- The mean minor pause (ms) and the longest gap (ms) while churning.
local function churn()
  local count0, total0 = minors()
  local gaps = B.churn(now, ms / 1000)
  local count1, total1 = minors()
  B.check(count1 > count0, "no minor collection while churning for %d ms", ms)
  return (total1 - total0) / (count1 - count0) / 1000, gaps[#gaps] * 1000, count1 - count0
end

local result = task.spawn(function()
  local objects, groups, channels = {}, {}, {}
  for i = 1, n do objects[i] = { i } end
  for c = 1, n // 10 do
    local group = {}
    for j = 1, perChannel do group[j] = { c, j } end
    groups[c] = group
  end
  collectgarbage()  -- every one of them is old from here on
  local baseMean, baseMax, baseMinors = churn()
  for i = 1, n do setmetatable(objects[i], meta) end
  for c = 1, #groups do
    local ch = task.channel(perChannel)
    for j = 1, perChannel do ch:send(groups[c][j]) end
    channels[c] = ch
  end
  groups = nil
  collectgarbage()
  local mean, max, loadedMinors = churn()
  local sum = 0
  for _, ch in ipairs(channels) do
    for _ = 1, perChannel do sum = sum + ch:recv()[2] end
  end
  local expected = #channels * perChannel * (perChannel + 1) // 2
  B.check(sum == expected, "channels gave back %d, expected %d", sum, expected)
  B.check(#objects == n and finalized == 0, "%d finalizers ran early", finalized)
  return { baseMean, baseMax, baseMinors, mean, max, loadedMinors, #channels }
end)
local r = result:await()
result = nil
collectgarbage()
collectgarbage()
B.check(finalized == n, "%d of %d finalizers ran", finalized, n)
B.result("old_roots", { "finalizable", n }, { "channels", r[7] },
         { "base_minors", r[3] }, { "base_minor_ms", r[1] }, { "base_max_gap_ms", r[2] },
         { "minors", r[6] }, { "minor_ms", r[4] }, { "max_gap_ms", r[5] },
         { "minor_ratio", r[4] / r[1] }, { "max_gap_ratio", r[5] / r[2] })
