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

-- One round: `count` tasks each wait in a receive on a fresh channel (B.parked);
-- `measure` runs in the main chunk while they all wait. The phases run in tasks like any
-- other (the main chunk waits on the OS, not the scheduler).
local function round(count, measure)
  local P = B.parked(count)
  local spawnSeconds = task.spawn(function()
    local start = now()
    P.park()
    return now() - start
  end):await()
  local measured = measure()
  local seen, releaseSeconds = task.spawn(function()
    local start = now()
    local seen = P.release()
    return seen, now() - start
  end):await()
  B.check(seen == count, "%d of %d tasks saw the channel closed", seen, count)
  return spawnSeconds, measured, releaseSeconds
end

-- Resident memory with only live data counted: garbage dropped first.
local function liveKiB()
  collectgarbage()
  collectgarbage()
  return residentKiB()
end

-- A first round of a thousand tasks runs the same code before the base is read, so that
-- what any program pays once is not counted per task: the JIT compiling the spawn loop
-- (with LLVM loaded), the runtime's first worker and timer start-up. What it leaves for
-- reuse is at most a thousand tasks' memory, 1 byte per task of the million measured.
round(math.min(n, 1000), function() end)
local baseKiB = liveKiB()
local spawnSeconds, blockedKiB, releaseSeconds = round(n, liveKiB)
local closedSeen = n

B.result("blocked", { "n", n }, { "workers", task.workers() },
  { "rss_base_kib", baseKiB }, { "rss_blocked_kib", blockedKiB },
  { "bytes_per_task", (blockedKiB - baseKiB) * 1024 / n },
  { "spawn_seconds", spawnSeconds }, { "release_seconds", releaseSeconds },
  { "checksum", closedSeen })
