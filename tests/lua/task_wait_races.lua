-- weft-only -- weft-tasks
-- The wait protocol's races seen from Lua (runtime/wait_state.h): round after round, one
-- receive in a select with a timeout, raced by a sender (itself waiting with a timeout),
-- a close of the channel and a cancel of the receiver. Each round checks that exactly
-- one outcome ended the receive and that the sender agrees with it. The receiver is a
-- task (its wait suspends) or the main chunk under a pcall (its wait blocks the thread,
-- so the claimer holds it and signals it). tests/cli/deterministic.py runs this script
-- under --explore too: every schedule must pass.
local NAME = "task_wait_races"
local T = dofile("helpers/check.lua")(NAME)

local kRounds = 48
local tally = { value = 0, closed = 0, timeout = 0, cancelled = 0 }
-- What went wrong in the current round: one check per round, whatever its outcome, so
-- that the output is the same in every run.
local problems
local function check(cond, msg)
  if not cond then problems[#problems + 1] = msg end
end

-- The receiver's outcome: "value", "closed", "timeout" or "cancelled".
local function outcomeOf(round, ok, index, v, vok)
  if not ok then
    check(tostring(index):find("task cancelled", 1, true), "round " .. round .. ": receiver error " .. tostring(index))
    return "cancelled"
  end
  if index == nil then return "timeout" end
  check(index == 1, "round " .. round .. ": select fired case " .. tostring(index))
  if vok then
    check(v == round, "round " .. round .. ": received " .. tostring(v))
    return "value"
  end
  check(v == nil, "round " .. round .. ": a closed channel delivered " .. tostring(v))
  return "closed"
end

local function round(i)  -- 0-based
  problems = {}
  local ch = task.channel()
  local close, cancel, mainReceives = i % 4 == 1 or i % 4 == 3, i % 4 >= 2, i % 6 == 5
  -- Every mix of a close, a cancel, the sender's delay and the receiver's timeout.
  local delay, timeout = (i // 4) % 4, 0.001 * ((i // 16) % 3 + 1)
  local receiver
  if not mainReceives then
    receiver = task.spawn(function() return task.select({ { ch, "recv" } }, timeout) end)
  end
  local sender = task.spawn(function()
    if delay == 0 then task.yield() else task.sleep(0.001 * delay) end
    local ok, r = pcall(task.select, { { ch, "send", i } }, 0.002)
    if ok then return r == 1 and "sent" or "timeout" end
    check(tostring(r):find("send on closed channel", 1, true), "round " .. i .. ": sender error " .. tostring(r))
    return "closed"
  end)
  local helpers = {}
  if close then helpers[#helpers + 1] = task.spawn(function() task.yield() ch:close() end) end
  if cancel and receiver then
    helpers[#helpers + 1] = task.spawn(function() task.yield() receiver:cancel() end)
  end

  local got
  if mainReceives then
    got = outcomeOf(i, pcall(task.select, { { ch, "recv" } }, timeout))
  else
    got = outcomeOf(i, pcall(receiver.await, receiver))
  end
  local sent = sender:await()
  for _, h in ipairs(helpers) do h:await() end

  tally[got] = tally[got] + 1
  -- The send and the receive agree: a value received was sent; a value sent went to the
  -- receiver, unless a cancellation ended the receiver after the value ended its wait.
  if got == "value" then check(sent == "sent", "round " .. i .. ": received, but the sender says " .. sent) end
  if sent == "sent" then
    check(got == "value" or got == "cancelled", "round " .. i .. ": sent, but the receiver says " .. got)
  end
  if got == "closed" then check(close, "round " .. i .. ": closed, but nobody closed") end
  if got == "cancelled" then check(cancel, "round " .. i .. ": cancelled, but nobody cancelled") end
  T.check(#problems == 0, table.concat(problems, "; "))
end

for i = 0, kRounds - 1 do round(i) end
T.eq(tally.value + tally.closed + tally.timeout + tally.cancelled, kRounds, "one outcome per round")

-- A select's send raced by a close, without timers, so that the close often lands
-- between the select's first try and its registering one: the send then fails, or
-- sends to the receiver, and returns only the case's index.
local kQuickRounds = 400
local disagreements, extraResults = 0, 0
for i = 1, kQuickRounds do
  local ch = task.channel()
  local receiver = task.spawn(function() return task.select({ { ch, "recv" } }) end)
  local sender = task.spawn(function()
    task.yield()
    local r = table.pack(pcall(task.select, { { ch, "send", i } }))
    if not r[1] then return "closed" end
    if r.n ~= 2 then extraResults = extraResults + 1 end
    return "sent"
  end)
  local closer = task.spawn(function() task.yield() ch:close() end)
  local _, v, ok = receiver:await()
  local sent = sender:await()
  closer:await()
  if (sent == "sent") ~= (ok == true and v == i) then disagreements = disagreements + 1 end
end
T.eq(disagreements, 0, "quick rounds where the send and the receive disagree")
T.eq(extraResults, 0, "quick rounds where a select's send returned more than its index")
T.done()
-- A failed round fails the run too, so that the explorer stops at it.
assert(T.failures == 0, "a wait race ended wrongly")
