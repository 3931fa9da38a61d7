-- weft-only -- weft-tasks
-- task.select: recv and send cases, several ready cases, closed channels, timeouts,
-- waking on the first case that becomes ready, argument errors.
local NAME = "task_select"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function errorOf(f, ...)
  local ok, msg = pcall(f, ...)
  return not ok and tostring(msg):gsub("^[^:]*:%d+: ", "") or "no error"
end
local function waitFor(t, status)
  local deadline = task.now() + 3
  while t:status() ~= status and task.now() < deadline do task.sleep(0.001) end
  return t:status()
end

-- One ready recv case among several.
local a, b, c = task.channel(1), task.channel(1), task.channel()
b:send("bee")
local i, v, ok = task.select({{a, "recv"}, {b, "recv"}, {c, "recv"}})
eq(i, 2, "the ready case"); eq(v, "bee", "its value"); eq(ok, true, "its ok")
b:send(nil)
local r = table.pack(task.select({{a, "recv"}, {b, "recv"}}))
check(r.n == 3 and r[1] == 2 and r[2] == nil and r[3] == true, "a received nil")

-- Several ready cases: any one of them, and only that one is consumed.
local okall, seen = true, {}
for k = 1, 40 do
  a:try_send("A"); b:try_send("B")
  local idx, val = task.select({{a, "recv"}, {b, "recv"}})
  if not ((idx == 1 and val == "A" and #a == 0 and #b == 1) or
          (idx == 2 and val == "B" and #b == 0 and #a == 1)) then okall = false end
  seen[idx] = true
  a:try_recv(); b:try_recv()
end
check(okall, "one of the ready cases, the other untouched")

-- Send cases.
local s = task.channel(1)
i = task.select({{s, "send", "payload"}})
eq(i, 1, "send case index")
eq(#s, 1, "the value was sent")
eq(s:recv(), "payload", "payload")
local full = task.channel(1); full:send(0)
a:try_send("ready")
i, v, ok = task.select({{full, "send", 1}, {a, "recv"}})
eq(i, 2, "the ready recv beats the blocked send"); eq(v, "ready", "value")
i, v, ok = task.select({{a, "recv"}, {s, "send", "x"}})
eq(i, 2, "the ready send beats the empty recv")
check(v == nil and ok == nil, "a send case returns only the index")
eq(s:recv(), "x", "sent")
i = task.select({{s, "send", nil}})
eq(i, 1, "nil can be sent by select")
v, ok = s:recv(); check(v == nil and ok == true, "and received")
i = task.select({{s, "send"}})
eq(i, 1, "a missing value sends nil")
v, ok = s:recv(); check(v == nil and ok == true, "received nil")
-- Mixed ready send and recv: one of them.
a:send("m")
i = task.select({{a, "recv"}, {s, "send", "n"}})
check(i == 1 or i == 2, "mixed ready cases: one of them")
check((i == 1 and #s == 0 and #a == 0) or (i == 2 and #a == 1 and s:recv() == "n"), "only the chosen case happened")
a:try_recv(); s:try_recv()

-- Waiting: the select wakes when another task makes a case ready.
local x, y = task.channel(), task.channel()
local waiter = task.spawn(function() return task.select({{x, "recv"}, {y, "recv"}}) end)
eq(waitFor(waiter, "suspended"), "suspended", "select waits")
y:send("why")
local wi, wv, wok = waiter:await()
eq(wi, 2, "woken by the second case"); eq(wv, "why", "its value"); eq(wok, true, "ok")
local sendsel = task.spawn(function() return task.select({{x, "send", "to x"}, {y, "send", "to y"}}) end)
eq(waitFor(sendsel, "suspended"), "suspended", "send select waits on unbuffered channels")
eq(x:recv(), "to x", "receiving completes the first send case")
eq(sendsel:await(), 1, "and it reports case 1")
eq(y:try_recv(), nil, "the other send case did not happen")
-- An unbuffered recv case pairs with a waiting sender.
local sender = task.spawn(function() x:send("rendezvous") end)
eq(waitFor(sender, "suspended"), "suspended", "sender waits")
i, v, ok = task.select({{y, "recv"}, {x, "recv"}})
eq(i, 2, "select takes from the waiting sender"); eq(v, "rendezvous", "value")
sender:await()
-- Two selects meet: one sending, one receiving, on two channels.
local p = task.spawn(function() return task.select({{x, "send", 1}, {y, "send", 2}}) end)
local q = task.spawn(function() return task.select({{x, "recv"}, {y, "recv"}}) end)
local pi_ = p:await()
local qi, qv = q:await()
check(pi_ == qi and qv == pi_, "two selects pair up on the same channel")

-- Closed channels: recv cases are ready with nil, false; send cases raise.
local closed = task.channel(); closed:close()
i, v, ok = task.select({{x, "recv"}, {closed, "recv"}})
check(i == 2 and v == nil and ok == false, "closed recv case is ready")
eq(errorOf(task.select, {{closed, "send", 1}}), "send on closed channel", "closed send case raises")
local closing = task.channel()
local cw = task.spawn(function() return table.pack(task.select({{closing, "recv"}, {x, "recv"}})) end)
eq(waitFor(cw, "suspended"), "suspended", "waiting select")
closing:close()
r = cw:await()
check(r[1] == 1 and r[2] == nil and r[3] == false, "closing wakes a select with nil, false")

-- Timeouts.
local t0 = task.now()
eq(task.select({{x, "recv"}, {y, "recv"}}, 0.03), nil, "timeout returns nil")
check(task.now() - t0 >= 0.029, "after the timeout")
eq(select("#", task.select({{x, "recv"}}, 0)), 1, "timeout 0 returns just nil")
eq(task.select({{full, "send", 9}}, 0), nil, "blocked send times out")
eq(#full, 1, "nothing sent")
a:send("now")
i, v = task.select({{a, "recv"}}, 0)
check(i == 1 and v == "now", "a ready case with timeout 0")
local later = task.spawn(function() task.sleep(0.01); y:send("late") end)
i, v = task.select({{x, "recv"}, {y, "recv"}}, 10)
check(i == 2 and v == "late", "a case that becomes ready before the timeout")
later:await()
eq(x:try_send(1), false, "a timed-out select does not linger on x")
eq(y:try_send(1), false, "nor on y")
eq(full:try_recv(), 0, "a timed-out send select sent nothing")
eq(#full, 0, "channel empty")

-- A select loop multiplexing two producers until both close.
local c1, c2 = task.channel(2), task.channel()
task.spawn(function() for k = 1, 30 do c1:send(k) end c1:close() end)
task.spawn(function() for k = 1, 20 do c2:send(-k) end c2:close() end)
local open1, open2, sum, count = true, true, 0, 0
while open1 or open2 do
  local cases, map = {}, {}
  if open1 then cases[#cases + 1] = {c1, "recv"}; map[#cases] = 1 end
  if open2 then cases[#cases + 1] = {c2, "recv"}; map[#cases] = 2 end
  local idx, val, vok = task.select(cases)
  if not vok then
    if map[idx] == 1 then open1 = false else open2 = false end
  else
    sum = sum + val; count = count + 1
  end
end
eq(count, 50, "multiplexed count"); eq(sum, 465 - 210, "multiplexed sum")

-- The most cases a select takes (a case's index is 16 bits in the wait): it waits on
-- all of them, and the case a sender takes fires, with its index and the value.
-- (One case table 65,535 times, copied by table.move: the stress modes collect at every
-- safepoint, and a loop making 65,535 tables took them minutes.)
local wide = task.channel()
local many = {{wide, "recv"}}
while #many < 65535 do table.move(many, 1, math.min(#many, 65535 - #many), #many + 1) end
local sender = task.spawn(function() task.sleep(0.01); wide:send(7) end)
local wi, wv, wok = task.select(many)
check(math.type(wi) == "integer" and wi >= 1 and wi <= 65535, "a case of 65,535 fired")
eq(wv, 7, "its value"); eq(wok, true, "its ok")
sender:await()
many[65536] = {wide, "recv"}
eq(errorOf(task.select, many), "bad argument #1 to 'task.select' (too many cases (at most 65535))",
   "too many cases")

-- Argument errors.
eq(errorOf(task.select, {}), "bad argument #1 to 'task.select' (no cases)", "no cases")
eq(errorOf(task.select, {{x, "bogus"}}),
   "bad argument #1 to 'task.select' (case 1 must be {channel, \"recv\"} or {channel, \"send\", value})",
   "bad case kind")
eq(errorOf(task.select, {{x, "recv"}, {42, "recv"}}),
   "bad argument #1 to 'task.select' (case 2 must be {channel, \"recv\"} or {channel, \"send\", value})",
   "bad channel")
check(errorOf(task.select, nil):find("bad argument #1 to 'task.select'", 1, true), "nil cases")

T.done()
