-- weft-only -- weft-tasks
-- weft-not-deterministic: the histograms measure real time
-- task.stats() (docs/tasks.md "Telemetry"): the document of `--stats=json` as a table,
-- with the same names, units (durations in microseconds, suffix _us) and 0-based worker
-- numbers as every rendering; the sampled ready-to-run delay and timer lateness grow
-- with the work the script gives them.
local NAME = "task_stats"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

-- Work for the scheduler: 200 tasks, each woken 5 times through a channel (1,200
-- publications, of which one in 16 is measured), and 20 timers.
local ch = task.channel()
local done = task.channel(200)
for i = 1, 200 do
  task.spawn(function()
    for _ = 1, 5 do ch:recv() end
    done:send(i)
  end)
end
for _ = 1, 1000 do ch:send(true) end
for _ = 1, 200 do done:recv() end
for _ = 1, 20 do task.sleep(0.001) end

local s = task.stats()
eq(s.version, 1, "schema version")
eq(#s.workers, task.workers(), "one entry per worker")
-- Each property is checked once over every worker, so the count of checks does not
-- depend on how many workers there are.
local run, numbered, counts, micros, victims = 0, true, true, true, true
for i, w in ipairs(s.workers) do
  numbered = numbered and w.worker == i - 1
  for _, k in ipairs{"tasks_run", "migrations", "steals_from_injection", "parks", "wakeups",
                     "budget_exhaustions", "queue_depth", "queue_depth_max", "spawns_retargeted", "gc_pauses"} do
    counts = counts and math.type(w[k]) == "integer"
  end
  for _, k in ipairs{"gc_pause_total_us", "gc_pause_max_us"} do
    micros = micros and math.type(w[k]) == "float"
  end
  for _, st in ipairs(w.steals_from) do
    victims = victims and st.worker >= 0 and st.worker < #s.workers and st.worker ~= w.worker and st.tasks > 0
  end
  run = run + w.tasks_run
end
check(numbered, "worker numbers are 0-based")
check(counts, "the counters are integers")
check(micros, "durations are float microseconds")
check(victims, "steals_from lists other workers something was stolen from")
eq(math.type(s.host_tasks_run), "integer", "host_tasks_run")
run = run + s.host_tasks_run
-- Each task runs at least once; a receive that finds its value waiting needs no dispatch
-- (the main chunk's sends may wait for the receivers instead), so 1,200 is not a bound.
check(run >= 200, "every dispatch is counted, the host's too: " .. run)

local function histogram(h, what, atLeast)
  check(h.count >= atLeast, what .. ": at least " .. atLeast .. " records, got " .. h.count)
  eq(#h.counts, #h.bounds_us + 1, what .. ": a count per bound and one beyond the last")
  local sum = 0
  for _, c in ipairs(h.counts) do sum = sum + c end
  eq(sum, h.count, what .. ": the buckets hold every record")
  for i = 2, #h.bounds_us do
    eq(h.bounds_us[i], h.bounds_us[i - 1] * 2, what .. ": bounds double")
  end
  check(h.p50_us <= h.p99_us and h.p99_us <= h.max_us, what .. ": p50 <= p99 <= max")
  check(h.sum_us >= h.max_us, what .. ": the sum holds the largest")
end
eq(s.ready_delay.bounds_us[1], 0.256, "the first bucket ends at 256 ns")
histogram(s.ready_delay, "ready_delay", 50)
histogram(s.timer_lateness, "timer_lateness", 20)

for _, g in ipairs{"minor", "major"} do
  local p = s.gc[g]
  eq(math.type(p.count), "integer", g .. " count")
  check(p.p50_us <= p.max_us, g .. ": p50 <= max")
end
collectgarbage()
check(task.stats().gc.major.count > s.gc.major.count, "a full collection is counted")

-- A ping-pong with the main chunk as one side: the main thread runs the echo each time
-- it waits (the host's lane), so each of the echo's 1,000 steps here is the host's (the
-- last pong:recv wakes it for a step after the loop), and none a worker's. The workers'
-- counts would not show it: the main chunk's sleeps above each left a deadlock probe for
-- a worker to run, which a loaded machine may run during the loop.
local ping, pong = task.channel(), task.channel()
local echo = task.spawn(function()
  for v in ping:iter() do pong:send(v) end
end)
local hostBefore = task.stats().host_tasks_run
for i = 1, 1000 do ping:send(i); pong:recv() end
eq(task.stats().host_tasks_run - hostBefore, 1000, "the host ran every step of the echo")
ping:close()
echo:await()
check(task.stats() ~= task.stats(), "each call takes a fresh snapshot")

T.done()
