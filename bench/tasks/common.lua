-- Shared by the task benchmarks (loaded with dofile from each script): the wall clock,
-- the size argument, the result line and the checks.
local M = {}

-- Monotonic wall seconds: task.now. CPU time (os.clock) adds up every worker's time, so
-- it is no use here. Without task.now, a coarse fallback asks `date` for the wall time
-- (a process start per reading: good for the start and end of a long phase, and said on
-- stderr); `fine` (per-sample timing) insists on task.now.
function M.clock(fine)
  if type(task.now) == "function" then return task.now end
  if fine then
    error("task.now (monotonic wall-clock seconds) is missing from the task library", 2)
  end
  io.stderr:write("warning: no task.now; timing with `date` (coarse)\n")
  return function()
    local p = assert(io.popen("date +%s.%N"))
    local s = p:read("l")
    p:close()
    return assert(tonumber(s), "date gave no time")
  end
end

-- Integer argument i of the script, or `default`.
function M.arg(i, default)
  local v = arg and arg[i]
  if v == nil then return default end
  local n = math.tointeger(tonumber(v))
  if not n or n <= 0 then error(("argument %d must be a positive integer, got %q"):format(i, v), 2) end
  return n
end

function M.check(cond, fmt, ...)
  if not cond then error("checksum failed: " .. fmt:format(...), 2) end
end

-- One machine-readable line: RESULT <name> key=value ... (the runner parses it; the Go
-- versions print the same keys).
function M.result(name, ...)
  local parts = { "RESULT", name }
  for _, kv in ipairs({ ... }) do
    local k, v = kv[1], kv[2]
    if math.type(v) == "float" then v = ("%.6g"):format(v) end
    parts[#parts + 1] = k .. "=" .. tostring(v)
  end
  print(table.concat(parts, " "))
end

-- Allocates short-lived tables (64 pairs and their strings an iteration) for `seconds`
-- of `now`'s clock, checking what it built; returns the gaps between iterations, sorted,
-- and the iteration count. A collection shows as a long gap (pause.lua, old_roots.lua).
function M.churn(now, seconds)
  local gaps, iterations, checksum = {}, 0, 0
  local start = now()
  local last = start
  while last - start < seconds do
    local t = {}
    for i = 1, 64 do t[i] = { i, tostring(i) } end
    checksum = checksum + #t[64][2]
    iterations = iterations + 1
    local at = now()
    gaps[#gaps + 1] = at - last
    last = at
  end
  M.check(checksum == 2 * iterations, "checksum %d for %d iterations", checksum, iterations)
  table.sort(gaps)
  return gaps, iterations
end

-- Nearest-rank percentile of a sorted array.
function M.percentile(sorted, p)
  local rank = math.max(1, math.ceil(p / 100 * #sorted))
  return sorted[rank]
end

-- `count` tasks that park in a receive on a fresh channel, each reporting how its wait
-- ended (blocked.lua, pause.lua). park() spawns them and returns once all of them wait;
-- release() closes the channel and returns how many saw it closed. Both run in a task
-- (the receives they make wait on the scheduler).
function M.parked(count)
  local gate = task.channel()    -- every task waits here
  local ready = task.channel()   -- each task checks in before it waits
  local done = task.channel()    -- each task reports how its wait ended
  local function waiter()
    ready:send(true)
    local v, ok = gate:recv()
    done:send((v == nil and ok == false) and 1 or 0)
  end
  local P = {}
  function P.park()
    for _ = 1, count do task.spawn(waiter) end
    for _ = 1, count do ready:recv() end
    task.sleep(0.05)   -- every task has checked in; let the last few reach their receive
  end
  function P.release()
    gate:close()
    local seen = 0
    for _ = 1, count do seen = seen + done:recv() end
    return seen
  end
  return P
end

return M
