-- Ping-pong: `n` round trips (default one million) between two tasks over two unbuffered
-- channels. The pinger sends 1..n on `ping`; the echo task adds each up and sends it back
-- on `pong`. Prints ns per round trip. With `from` 2 the pinger is the main chunk itself
-- (result `pingpong_main`): the cost of a main chunk that waits (issue 15 wants it within
-- 1.2 times a task's).
--   weft [--workers N] pingpong.lua [n] [from: 1 a task, 2 the main chunk]
local B = dofile((arg[0]:match("^(.*[/\\])") or "./") .. "common.lua")
local now = B.clock()
local n = B.arg(1, 1000000)
local fromMain = B.arg(2, 1) == 2

local ping, pong = task.channel(), task.channel()

local echo = task.spawn(function()
  local sum = 0
  while true do
    local v, ok = ping:recv()
    if not ok then return sum end
    sum = sum + v
    pong:send(v)
  end
end)

local function pinger()
  local sum = 0
  local start = now()
  for i = 1, n do
    ping:send(i)
    sum = sum + pong:recv()
  end
  local seconds = now() - start
  ping:close()
  return sum, seconds
end

local back, seconds
if fromMain then
  back, seconds = pinger()
else
  back, seconds = task.spawn(pinger):await()
end
local echoed = echo:await()
local expected = n * (n + 1) // 2
B.check(back == expected and echoed == expected, "sums %d and %d, expected %d", back, echoed, expected)
B.result(fromMain and "pingpong_main" or "pingpong", { "n", n }, { "workers", task.workers() }, { "seconds", seconds },
  { "ns_per_roundtrip", seconds * 1e9 / n }, { "checksum", back })
