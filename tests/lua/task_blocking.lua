-- weft-only -- weft-tasks
-- weft-not-deterministic: blocking calls run on the pool in parallel with the tasks
-- weft-args: --blocking-threads=4
-- weft-gc-interval: 2000
-- The blocking pool (docs/tasks.md "Blocking calls"): os.execute and the reads and
-- closes of pipes run on a bounded pool of threads while their tasks suspend, so tasks
-- blocked on the operating system hold no worker. Eight blocked tasks on a pool of four
-- threads: four run, four queue, and every worker still runs CPU-bound tasks; a queued
-- call that is cancelled never runs, a running one finishes first.
local NAME = "task_blocking"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir " .. dir))
local go = dir .. "/go"
-- A command that blocks until `go` exists.
local waitForGo = "while [ ! -e " .. go .. " ]; do sleep 0.01; done"

local function poolStats() return task.stats().blocking_pool end
-- Waits (sleeping, not spinning) until pred() holds; false after about 30 s.
local function waitFor(pred)
  for _ = 1, 3000 do
    if pred() then return true end
    task.sleep(0.01)
  end
  return false
end

eq(poolStats().size, 4, "--blocking-threads sets the pool's size")

-- 1. Eight blockers on four threads: four run, four wait in the queue.
local blockers = {}
for i = 1, 8 do
  blockers[i] = task.spawn(function() return os.execute(waitForGo) end)
end
check(waitFor(function() local p = poolStats() return p.busy == 4 and p.queued == 4 end),
      "four jobs run and four queue")
eq(poolStats().threads, 4, "the pool starts no more threads than its size")

-- 2. Meanwhile every worker runs CPU-bound tasks: each worker's count of dispatches grows.
-- Batches of them run until it has on every worker (a worker held by a blocked task would
-- never run one); on a loaded machine one batch may not reach a worker whose thread got no
-- processor time.
local function cpuBatch()
  local cpu = {}
  for i = 1, 10 * task.workers() do
    cpu[i] = task.spawn(function()
      local x = 0
      for j = 1, 50000 do x = x + j end
      return x
    end)
  end
  local results = true
  for i = 1, #cpu do results = results and cpu[i]:await() == 1250025000 end
  return results
end
local before = task.stats().workers
local results, everyWorker = true, false
for _ = 1, 50 do
  results = results and cpuBatch()
  local after = task.stats().workers
  everyWorker = true
  for w = 1, #after do everyWorker = everyWorker and after[w].tasks_run > before[w].tasks_run end
  if everyWorker then break end
end
check(results, "the CPU-bound tasks' results")
check(everyWorker, "every worker ran tasks while eight tasks were blocked")
local p = poolStats()
check(p.busy == 4 and p.queued == 4, "the blockers still wait")
for i = 1, 8 do eq(blockers[i]:status(), "suspended", "a blocked task is suspended, not running") end

-- 3. Release them all.
assert(io.open(go, "w")):close()
for i = 1, 8 do
  local a, b, c = blockers[i]:await()
  check(a == true and b == "exit" and c == 0, "a blocker's os.execute results")
end
p = poolStats()
eq(p.jobs_run, 8, "eight jobs ran")
eq(p.queue_depth_max >= 4, true, "the deepest queue is counted")
eq(task.stats().blocking_wait.count, 8, "each run job's wait is in the histogram")

-- 4. Cancelling: a queued job is dropped unrun, a running one finishes first. Four new
-- blockers fill the four threads, so each of them runs; a fifth job queues.
os.remove(go)
local running = {}
for i = 1, 4 do running[i] = task.spawn(function() return os.execute(waitForGo) end) end
check(waitFor(function() return poolStats().busy == 4 end), "four jobs run")
local marker = dir .. "/marker"
local queued = task.spawn(function() return os.execute("touch " .. marker) end)
check(waitFor(function() return poolStats().queued == 1 end), "a fifth job queues")
check(queued:cancel(), "cancel a task whose job is queued")
check(waitFor(function() return queued:status() == "cancelled" end), "it ends at once")
eq(poolStats().queued, 0, "its job left the queue")
check(running[1]:cancel(), "cancel a task whose job is running")
check(waitFor(function() return running[1]:status() == "suspended" end), "it waits for its job, suspended")
assert(io.open(go, "w")):close()
local ok1, msg1 = pcall(running[1].await, running[1])
check(not ok1 and tostring(msg1):find("task cancelled", 1, true), "the running job's task ends cancelled")
for i = 2, 4 do eq(running[i]:await(), true, "the other running jobs complete") end
eq(io.open(marker) == nil, true, "the cancelled queued command never ran")
eq(poolStats().jobs_run, 12, "the running job ran, the queued one did not")

-- 5. Pipes: lines read and the close's status, from tasks, through the pool.
local function piped(cmd)
  local f = assert(io.popen(cmd))
  local lines = {}
  for l in f:lines() do lines[#lines + 1] = l end
  return table.concat(lines, ","), f:close()
end
local h1 = task.spawn(piped, "echo a; echo b")
local h2 = task.spawn(piped, "printf 'x\\ny'; exit 7")
local s1, ok1b, how1, code1 = h1:await()
eq(s1, "a,b", "lines of a pipe")
check(ok1b == true and how1 == "exit" and code1 == 0, "a pipe's close")
local s2, ok2, how2, code2 = h2:await()
eq(s2, "x,y", "lines of a pipe without a final newline")
check(ok2 == nil and how2 == "exit" and code2 == 7, "a pipe's exit status")
local h3 = task.spawn(function()
  local f = assert(io.popen("echo 12 34; echo rest"))
  local a, b, c, d = f:read("n", "n", "l", "l")
  f:close()
  return a, b, c, d
end)
local a, b, c, d = h3:await()
check(a == 12 and b == 34 and c == "" and d == "rest", "read formats on a pipe")
local h4 = task.spawn(function()
  local f = assert(io.popen("echo 1"))
  local r = table.pack(pcall(function() return f:read("l", "x") end))
  f:close()
  return r
end)
local r = h4:await()
check(not r[1] and tostring(r[2]):find("bad argument #2 to 'read' (invalid format)", 1, true),
      "an invalid format is raised after the formats before it")
local h5 = task.spawn(function() return os.execute("exit 3") end)
local e1, e2, e3 = h5:await()
check(e1 == nil and e2 == "exit" and e3 == 3, "os.execute's failure status")

-- An OS wait (a child process) while the task that sets the flag waits its turn: the
-- setter runs meanwhile, even with one worker.
local flag = false
local setter
local waiter = task.spawn(function()
  setter = task.spawn(function() flag = true end)
  os.execute("sleep 0.5")
  return flag
end)
eq(waiter:await(), true, "a task runs while another waits on the OS")
setter:await()

os.remove(go)
os.remove(dir)
T.done()
