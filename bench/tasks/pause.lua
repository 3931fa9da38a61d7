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

local gate = task.channel()
local ready = task.channel()
local done = task.channel()

local function waiter()
  ready:send(true)
  local v, ok = gate:recv()
  done:send((v == nil and ok == false) and 1 or 0)
end

local result = task.spawn(function()
  for _ = 1, n do task.spawn(waiter) end
  for _ = 1, n do ready:recv() end
  task.sleep(0.05)
  local gaps, iterations = B.churn(now, ms / 1000)
  return gaps[#gaps], B.percentile(gaps, 99), iterations
end)
local longest, p99, iterations = result:await()
gate:close()
local closed = 0
for _ = 1, n do closed = closed + done:recv() end
B.check(closed == n, "%d of %d tasks saw the channel closed", closed, n)
B.result("pause", { "tasks", n }, { "iterations", iterations }, { "max_ms", longest * 1000 },
         { "p99_ms", p99 * 1000 })
