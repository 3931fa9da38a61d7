-- weft-only -- weft-tasks
-- Channels: unbuffered rendezvous, buffered capacity, #ch and cap, try_send/try_recv,
-- recv timeouts, close semantics, iter, nil values, many senders and receivers, pipelines.
local NAME = "task_channels"
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

-- Unbuffered: cap 0, send waits for a receiver.
local c = task.channel()
eq(c:cap(), 0, "default capacity"); eq(#c, 0, "empty")
eq(task.channel(0):cap(), 0, "explicit 0")
eq(c:try_send(1), false, "try_send without a receiver")
local v, ok = c:try_recv()
check(v == nil and ok == false, "try_recv without a sender")
local sender = task.spawn(function() c:send("hello"); return "sent" end)
eq(waitFor(sender, "suspended"), "suspended", "unbuffered send waits")
eq(#c, 0, "a waiting sender is not buffered")
v, ok = c:recv()
eq(v, "hello", "received value"); eq(ok, true, "ok flag")
eq(sender:await(), "sent", "sender released")
local receiver = task.spawn(function() return c:recv() end)
eq(waitFor(receiver, "suspended"), "suspended", "receiver waits")
eq(c:try_send("direct"), true, "try_send hands to a waiting receiver")
local rv, rok = receiver:await()
eq(rv, "direct", "receiver got it"); eq(rok, true, "with ok")
sender = task.spawn(function() c:send("taken") end)
eq(waitFor(sender, "suspended"), "suspended", "sender waits again")
v, ok = c:try_recv()
eq(v, "taken", "try_recv takes from a waiting sender"); eq(ok, true, "ok")
sender:await()

-- nil and false travel like any value, through both kinds of channel.
sender = task.spawn(function() c:send(nil); c:send(false) end)
local v1, ok1 = c:recv()
local v2, ok2 = c:recv()
check(v1 == nil and ok1 == true, "nil over an unbuffered channel")
check(v2 == false and ok2 == true, "false over an unbuffered channel")
sender:await()

-- Buffered: holds cap values, then send waits.
local b = task.channel(3)
eq(b:cap(), 3, "cap"); eq(#b, 0, "#ch empty")
b:send(nil); b:send(false); b:send(1)
eq(#b, 3, "#ch full")
eq(b:try_send(2), false, "try_send on a full channel")
eq(#b, 3, "unchanged")
sender = task.spawn(function() b:send("fourth"); return "done" end)
eq(waitFor(sender, "suspended"), "suspended", "send waits while full")
v, ok = b:recv()
check(v == nil and ok == true, "nil first (FIFO)")
eq(sender:await(), "done", "the waiting sender got in")
eq(#b, 3, "full again")
v, ok = b:try_recv(); check(v == false and ok == true, "false second")
v, ok = b:try_recv(); check(v == 1 and ok == true, "1 third")
v, ok = b:try_recv(); check(v == "fourth" and ok == true, "the late sender's value last")
v, ok = b:try_recv(); check(v == nil and ok == false, "empty again")
eq(#b, 0, "#ch back to 0")
eq(b:try_send("t"), true, "try_send with room"); eq(#b, 1, "#ch 1")
eq(b:recv(), "t", "recv it")

-- Order from one sender is kept through a small buffer.
local o = task.channel(2)
local prod = task.spawn(function() for i = 1, 200 do o:send(i) end end)
local inorder = true
for i = 1, 200 do if o:recv() ~= i then inorder = false end end
check(inorder, "FIFO order through a buffer of 2")
prod:await()

-- recv timeouts.
local e = task.channel(1)
local r1, r2, r3 = e:recv(0)
check(r1 == nil and r2 == false and r3 == "timeout", "recv(0) on empty: nil, false, timeout")
local t0 = task.now()
r1, r2, r3 = e:recv(0.03)
check(r1 == nil and r2 == false and r3 == "timeout", "recv(0.03) times out")
check(task.now() - t0 >= 0.029, "after waiting the timeout")
r1, r2, r3 = c:recv(0.01)
check(r1 == nil and r2 == false and r3 == "timeout", "unbuffered recv times out")
e:send("ready")
r1, r2, r3 = e:recv(0)
check(r1 == "ready" and r2 == true and r3 == nil, "recv(0) with a value")
local late = task.spawn(function() task.sleep(0.01); e:send("late") end)
r1, r2, r3 = e:recv(10)
check(r1 == "late" and r2 == true and r3 == nil, "a value arriving before the timeout")
late:await()
late = task.spawn(function() task.sleep(0.01); c:send(nil) end)
r1, r2, r3 = c:recv(10)
check(r1 == nil and r2 == true and r3 == nil, "nil arriving before the timeout")
late:await()
eq(c:try_send(1), false, "a timed-out receiver does not linger")

-- close: drains, then nil,false; send raises; close twice raises; waiters wake.
local d = task.channel(4)
d:send("a"); d:send("b")
d:close()
eq(#d, 2, "close keeps buffered values")
eq(errorOf(d.send, d, "c"), "send on closed channel", "send on closed")
eq(errorOf(d.send, d, nil), "send on closed channel", "send nil on closed")
eq(errorOf(d.close, d), "close of closed channel", "close twice")
eq(errorOf(d.try_send, d, "c"), "send on closed channel", "try_send on closed")
v, ok = d:recv(); check(v == "a" and ok == true, "drain a")
v, ok = d:try_recv(); check(v == "b" and ok == true, "drain b")
r1, r2, r3 = d:recv()
check(r1 == nil and r2 == false and r3 == nil, "closed and drained: nil, false")
r1, r2, r3 = d:recv(0)
check(r1 == nil and r2 == false and r3 == nil, "closed: no timeout marker")
v, ok = d:try_recv(); check(v == nil and ok == false, "try_recv on closed")
eq(#d, 0, "drained")
eq(d:cap(), 4, "cap survives close")

local w = task.channel()
local recvs, sends = {}, {}
for i = 1, 5 do recvs[i] = task.spawn(function() return table.pack(w:recv()) end) end
local w2 = task.channel()
for i = 1, 5 do sends[i] = task.spawn(function() return pcall(w2.send, w2, i) end) end
for i = 1, 5 do waitFor(recvs[i], "suspended"); waitFor(sends[i], "suspended") end
w:close(); w2:close()
local allr, alls = true, true
for i = 1, 5 do
  local p = recvs[i]:await()
  if not (p.n == 2 and p[1] == nil and p[2] == false) then allr = false end
  local sok, serr = sends[i]:await()
  if sok ~= false or not tostring(serr):find("send on closed channel", 1, true) then alls = false end
end
check(allr, "close wakes 5 receivers with nil, false")
check(alls, "close wakes 5 senders with an error")
local tw = task.channel(1)
local timed = task.spawn(function() return table.pack(tw:recv(10)) end)
waitFor(timed, "suspended")
tw:close()
local p = timed:await()
check(p[1] == nil and p[2] == false and p[3] == nil, "close wakes a receiver with a timeout")

-- iter: until closed and drained.
local it = task.channel(2)
local feeder = task.spawn(function()
  for i = 1, 10 do it:send(i * i) end
  it:close()
end)
local got = {}
for x in it:iter() do got[#got + 1] = x end
eq(table.concat(got, ","), "1,4,9,16,25,36,49,64,81,100", "iter yields every value in order")
feeder:await()
local n = 0
for _ in it:iter() do n = n + 1 end
eq(n, 0, "iter over a closed, drained channel")
local pre = task.channel(3)
pre:send("x"); pre:send("y"); pre:close()
got = {}
local iok, ierr = pcall(function() for x in pre:iter() do got[#got + 1] = x end end)
check(iok, "iter over string values: " .. tostring(ierr))
eq(table.concat(got, ","), "x,y", "iter drains a closed channel")
-- The loop's control value (the last value received) must not act as a recv timeout.
local slow = task.channel(4)
local slowp = task.spawn(function() slow:send(0); task.sleep(0.03); slow:send(1); slow:close() end)
got = {}
for x in slow:iter() do got[#got + 1] = x end
eq(table.concat(got, ","), "0,1", "iter waits for the next value after a 0")
slowp:await()

-- Argument errors.
eq(errorOf(task.channel, -1), "bad argument #1 to 'task.channel' (capacity out of range)", "negative capacity")
eq(errorOf(task.channel, 1.5), "bad argument #1 to 'task.channel' (number has no integer representation)",
   "fractional capacity")
eq(errorOf(task.channel, {}), "bad argument #1 to 'task.channel' (number expected, got table)", "table capacity")

-- Many senders and receivers on one channel: every value once.
local m = task.channel(5)
local out = task.channel(5)
local producers, consumers = {}, {}
for pi = 1, 8 do
  producers[pi] = task.spawn(function() for k = 1, 25 do m:send(pi * 1000 + k) end end)
end
for ci = 1, 4 do
  consumers[ci] = task.spawn(function()
    local cnt, sum = 0, 0
    for x in m:iter() do cnt = cnt + 1; sum = sum + x end
    return cnt, sum
  end)
end
for pi = 1, 8 do producers[pi]:await() end
m:close()
local tc, ts = 0, 0
for ci = 1, 4 do local cnt, sum = consumers[ci]:await(); tc = tc + cnt; ts = ts + sum end
eq(tc, 200, "200 values received once each")
eq(ts, 36000 * 25 + 8 * 325, "their sum")

-- A pipeline: generate -> square -> filter odd -> collect, each stage closing its output.
local function stage(input, f)
  local output = task.channel(2)
  task.spawn(function()
    for x in input:iter() do
      local y = f(x)
      if y ~= nil then output:send(y) end
    end
    output:close()
  end)
  return output
end
local src = task.channel()
task.spawn(function() for i = 1, 100 do src:send(i) end src:close() end)
local sq = stage(src, function(x) return x * x end)
local odd = stage(sq, function(x) if x % 2 == 1 then return x end end)
local total, count = 0, 0
for x in odd:iter() do total = total + x; count = count + 1 end
eq(count, 50, "pipeline count")
eq(total, 166650, "pipeline sum of odd squares up to 99^2")

-- Fan-out/fan-in with results sorted.
local jobs, results = task.channel(), task.channel(10)
local workers = {}
for wi = 1, 4 do
  workers[wi] = task.spawn(function()
    for j in jobs:iter() do results:send(j .. "=" .. j * 3) end
  end)
end
task.spawn(function() for j = 1, 12 do jobs:send(j) end jobs:close() end)
local coll = task.spawn(function()
  local rs = {}
  for r in results:iter() do rs[#rs + 1] = r end
  table.sort(rs)
  return table.concat(rs, " ")
end)
for wi = 1, 4 do workers[wi]:await() end
results:close()
eq(coll:await(), "10=30 11=33 12=36 1=3 2=6 3=9 4=12 5=15 6=18 7=21 8=24 9=27", "fan-out results")

-- Channels carry any value: tables, functions, handles, channels, coroutines.
local any = task.channel(5)
local tbl, fn = {}, function() return "fn" end
local co = coroutine.create(function() end)
any:send(tbl); any:send(fn); any:send(task.current()); any:send(any); any:send(co)
check(rawequal(any:recv(), tbl), "table identity")
eq(any:recv()(), "fn", "function")
check(rawequal(any:recv(), task.current()), "task handle")
check(rawequal(any:recv(), any), "the channel itself")
check(rawequal(any:recv(), co), "a coroutine")

T.done()
