-- Memory per suspended task: `n` tasks (default one million) each blocked in a receive
-- on one shared channel. Resident memory (VmRSS of /proc/self/status) is read before the
-- spawns and again while they all wait; the difference over n is bytes per task. Then
-- the channel is closed, and every task must see it closed and report back.
--   weft [--workers N] blocked.lua [n]
local B = dofile((arg[0]:match("^(.*[/\\])") or "./") .. "common.lua")
local now = B.clock()
local n = B.arg(1, 1000000)

local function residentKiB()
  local f = assert(io.open("/proc/self/status", "r"))
  local status = f:read("a")
  f:close()
  return assert(math.tointeger(tonumber(status:match("VmRSS:%s*(%d+)%s*kB"))), "no VmRSS")
end

local gate = task.channel()    -- every task waits here
local ready = task.channel()   -- each task checks in before it waits
local done = task.channel()    -- each task reports how its wait ended

local function waiter()
  ready:send(true)
  local v, ok = gate:recv()
  done:send((v == nil and ok == false) and 1 or 0)
end

-- The main chunk measures between the phases; the phases themselves run in tasks like
-- any other (the main chunk waits on the OS, not the scheduler).
collectgarbage()
collectgarbage()
local baseKiB = residentKiB()

local spawnSeconds = task.spawn(function()
  local start = now()
  for _ = 1, n do task.spawn(waiter) end
  for _ = 1, n do ready:recv() end
  task.sleep(0.05)   -- every task has checked in; let the last few reach their receive
  return now() - start
end):await()
-- Drop garbage so that only what the waiting tasks hold is counted.
collectgarbage()
collectgarbage()
local blockedKiB = residentKiB()

local closedSeen, releaseSeconds = task.spawn(function()
  local start = now()
  gate:close()
  local seen = 0
  for _ = 1, n do seen = seen + done:recv() end
  return seen, now() - start
end):await()

B.check(closedSeen == n, "%d of %d tasks saw the channel closed", closedSeen, n)
B.result("blocked", { "n", n }, { "workers", task.workers() },
  { "rss_base_kib", baseKiB }, { "rss_blocked_kib", blockedKiB },
  { "bytes_per_task", (blockedKiB - baseKiB) * 1024 / n },
  { "spawn_seconds", spawnSeconds }, { "release_seconds", releaseSeconds },
  { "checksum", closedSeen })
