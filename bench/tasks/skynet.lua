-- Skynet: a tree of tasks with fan-out 10 down to `n` leaves (default one million; a
-- power of 10). Each leaf sends its number on its parent's unbuffered channel; each
-- inner node sums its children's numbers and sends that up. The root gets 0+...+(n-1).
--   weft [--workers N] skynet.lua [n]
local B = dofile((arg[0]:match("^(.*[/\\])") or "./") .. "common.lua")
local now = B.clock()
local n = B.arg(1, 1000000)
local kFanOut = 10

local leaves = 1
while leaves < n do leaves = leaves * kFanOut end
if leaves ~= n then error("n must be a power of 10, got " .. n) end

local function skynet(out, num, size)
  if size == 1 then
    out:send(num)
    return
  end
  local children = task.channel()
  local step = size // kFanOut
  for i = 0, kFanOut - 1 do
    task.spawn(skynet, children, num + i * step, step)
  end
  local sum = 0
  for _ = 1, kFanOut do
    sum = sum + children:recv()
  end
  out:send(sum)
end

-- The root is received by a task like any other (the main chunk waits on the OS).
local sum, seconds = task.spawn(function()
  local start = now()
  local root = task.channel()
  task.spawn(skynet, root, 0, n)
  local total = root:recv()
  return total, now() - start
end):await()

B.check(sum == n * (n - 1) // 2, "sum %d, expected %d", sum, n * (n - 1) // 2)
local tasks = (n * kFanOut - 1) // (kFanOut - 1)
B.result("skynet", { "n", n }, { "tasks", tasks }, { "workers", task.workers() },
  { "seconds", seconds }, { "ns_per_task", seconds * 1e9 / tasks }, { "checksum", sum })
