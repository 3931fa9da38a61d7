-- The pause a major collection makes a running task see (issue 11, gc-v2.md "Incremental
-- majors"): an old heap of `n` small tables (a tree, so marking follows pointers), then
-- one task churns short-lived tables for `iterations` rounds while it replaces 32 old
-- tables each round, so the old generation grows and majors come during the churn.
-- A full collection before the churn leaves the tree old, so no minor promotes it then. Prints the longest gap between the churn's iterations, the 99th percentile, and
-- the majors and slices the collector made meanwhile (task.stats(): count and longest
-- pause). With --gc-incremental=off every major is one stop-the-world pause; with it on
-- the marking is spread over slices. Checks the tree's checksum at the end.
--   weft [--gc-incremental=on|off] [--stats] major_pause.lua [n] [iterations]
local B = dofile((arg[0]:match("^(.*[/\\])") or "./") .. "common.lua")
local now = B.clock(true)
local n = B.arg(1, 300000)
local rounds = B.arg(2, 30000)

local leaves = {}
for i = 1, n do leaves[i] = { i, i * 2 } end
local root = { leaves = leaves }
collectgarbage()

local function gcStats()
  local g = task.stats().gc
  return g.major.count, g.major.max_us, g.slice.count, g.slice.max_us, g.incremental_cycles
end

local result = task.spawn(function()
  local majors0, _, slices0, _, cycles0 = gcStats()
  local gaps, iterations, checksum = {}, 0, 0
  local last = now()
  local k = 0
  while iterations < rounds do
    local t = {}
    for i = 1, 64 do t[i] = { i, tostring(i) } end
    checksum = checksum + #t[64][2]
    for _ = 1, 32 do
      k = k % n + 1
      leaves[k] = { k, k * 2 }
    end
    iterations = iterations + 1
    local at = now()
    gaps[#gaps + 1] = at - last
    last = at
  end
  B.check(checksum == 2 * iterations, "checksum %d for %d iterations", checksum, iterations)
  table.sort(gaps)
  local majors1, majorMax, slices1, sliceMax, cycles1 = gcStats()
  return gaps[#gaps], B.percentile(gaps, 99), iterations, majors1 - majors0, majorMax, slices1 - slices0,
         sliceMax, cycles1 - cycles0
end)
local longest, p99, iterations, majors, majorMax, slices, sliceMax, cycles = result:await()
local sum = 0
for i = 1, n do sum = sum + root.leaves[i][2] - root.leaves[i][1] end
B.check(sum == n * (n + 1) // 2, "tree checksum %d", sum)
B.result("major_pause", { "tables", n }, { "iterations", iterations }, { "max_ms", longest * 1000 },
         { "p99_ms", p99 * 1000 }, { "majors", majors }, { "major_max_ms", majorMax / 1000 },
         { "cycles", cycles }, { "slices", slices }, { "slice_max_ms", sliceMax / 1000 })
