-- Pause seen by a running task while many others are parked (issue 11): `n` tasks wait
-- on one channel while one task allocates short-lived tables for `ms` milliseconds and
-- records the gap between its iterations; a collection shows as a long gap. Prints the
-- longest gap and the 99th percentile, then closes the channel and checks that every
-- parked task saw it closed.
--   weft [--workers N] [--stats] pause.lua [n] [ms]
local B = dofile((arg[0]:match("^(.*[/\\])") or "./") .. "common.lua")
local now = B.clock(true)
local n = B.arg(1, 100000)
local ms = B.arg(2, 3000)

local P = B.parked(n)
local longest, p99, iterations = task.spawn(function()
  P.park()
  local gaps, iterations = B.churn(now, ms / 1000)
  return gaps[#gaps], B.percentile(gaps, 99), iterations
end):await()
local closed = task.spawn(P.release):await()
B.check(closed == n, "%d of %d tasks saw the channel closed", closed, n)
B.result("pause", { "tasks", n }, { "iterations", iterations }, { "max_ms", longest * 1000 },
         { "p99_ms", p99 * 1000 })
