-- Timer latency under load: a task sleeps 1 ms `n` times (default 500) while `spinners`
-- CPU-bound tasks (default 4) keep every worker busy. Each sample is the sleep's wall time
-- minus 1 ms; prints p50, p99 and the maximum in ms. A sleep that ends early fails.
--   weft [--workers N] timers.lua [n] [spinners]
local B = dofile((arg[0]:match("^(.*[/\\])") or "./") .. "common.lua")
local now = B.clock(true)
local n = B.arg(1, 500)
local spinnerCount = B.arg(2, 4)
local kSleep = 0.001
local kMul, kAdd = 6364136223846793005, 1442695040888963407

local stop = false   -- set once by the main task; the spinners poll it

local function spin()
  local x, rounds = 1, 0
  while not stop do
    for _ = 1, 1000 do x = x * kMul + kAdd end
    rounds = rounds + 1
  end
  return rounds, x
end

local function sample()
  task.sleep(0.02)   -- let the spinners occupy the workers first
  local extra = {}
  for i = 1, n do
    local t0 = now()
    task.sleep(kSleep)
    extra[i] = now() - t0 - kSleep
  end
  return extra
end

local spinners = {}
for i = 1, spinnerCount do spinners[i] = task.spawn(spin) end
local extra = task.spawn(sample):await()
stop = true
local rounds = 0
for i = 1, spinnerCount do
  local r = spinners[i]:await()
  B.check(r > 0, "spinner %d never ran", i)
  rounds = rounds + r
end

table.sort(extra)
B.check(#extra == n, "%d samples, expected %d", #extra, n)
-- The timer and task.now read one monotonic clock; allow only float rounding.
B.check(extra[1] > -1e-6, "a %g s sleep ended %g s early", kSleep, -extra[1])
B.result("timers", { "n", n }, { "spinners", spinnerCount }, { "workers", task.workers() },
  { "p50_extra_ms", B.percentile(extra, 50) * 1e3 },
  { "p99_extra_ms", B.percentile(extra, 99) * 1e3 },
  { "max_extra_ms", extra[n] * 1e3 }, { "spinner_rounds", rounds })
