-- weft-only
-- weft-args: --heap-limit=2M
-- weft-gc-interval: 50
-- Heap exhaustion (manual §2.3, §4.4 LUA_ERRMEM): under `weft --heap-limit`, every
-- allocating path raises "not enough memory", which pcall catches; the script carries on.
local NAME = "heap_limit"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local MEM = "not enough memory"
local chunk = string.rep("x", 40000)  -- a large object: its own chunk

-- Each grower allocates until the heap is full; the error must be the memory error,
-- and everything it built must be reclaimable afterwards.
-- With `small`, the heap is first filled to a little below the limit with large
-- strings, so that growers of small objects reach it in few steps.
local function exhausts(what, grow, small)
  local ballast
  if small then
    ballast = {}
    pcall(function() for i = 1, 1e6 do ballast[i] = chunk .. i end end)
    for _ = 1, 2 do ballast[#ballast] = nil end
  end
  local ok, err = pcall(grow)
  ballast = nil
  eq(ok, false, what .. " fails")
  eq(err, MEM, what .. " message")
  collectgarbage()
  check(collectgarbage("count") < 1024, what .. " leaves the heap reclaimable: " .. collectgarbage("count"))
end

exhausts("large strings", function()
  local t = {}
  for i = 1, 1e6 do t[i] = chunk .. i end
end)
exhausts("concatenation doubling", function()
  local s = chunk
  while true do s = s .. s end
end)
exhausts("string.rep", function() return string.rep(chunk, 1000) end)
exhausts("string.rep with a separator", function() return string.rep("ab", 1 << 24, ",") end)
exhausts("table constructors", function()
  local t = {}
  for i = 1, 1e6 do
    t[i] = {i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i,
            i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i}
  end
end, true)
exhausts("hash part growth", function()
  local t = {}
  for i = 1, 1e7 do t[i * 1.5] = i end
end, true)
exhausts("array part growth", function()
  local t = {}
  for i = 1, 1e8 do t[i] = i end
end, true)
exhausts("string.upper copies", function()
  local t = {}
  for i = 1, 1e6 do t[i] = chunk:upper() end
end)
exhausts("string.format", function()
  local t = {}
  for i = 1, 1e6 do t[i] = string.format("%s%d", chunk, i) end
end)
exhausts("table.concat", function()
  local t = {}
  for i = 1, 100 do t[i] = chunk end
  local all = {}
  for i = 1, 1e6 do all[i] = table.concat(t) end
end)
exhausts("gsub with a function", function()
  local t = {}
  for i = 1, 1e6 do t[i] = ("x"):rep(100):gsub("x", function() return chunk end) end
end)
exhausts("closures with upvalues", function()
  local t = {}
  for i = 1, 1e6 do
    local a, b, c = i, chunk, {}
    t[i] = function() return a, b, c end
  end
end, true)
exhausts("coroutines", function()
  local t = {}
  for i = 1, 1e6 do
    t[i] = coroutine.create(function() local s = chunk .. i; coroutine.yield(); return s end)
    coroutine.resume(t[i])
  end
end, true)
exhausts("table.insert", function()
  local t = {}
  for i = 1, 1e6 do table.insert(t, chunk .. i) end
end)
exhausts("table.pack", function()
  local t = {}
  for i = 1, 1e6 do t[i] = table.pack(chunk .. i, i, i) end
end)
exhausts("metamethod __index allocating", function()
  local p = setmetatable({}, {__index = function(_, k) return chunk .. k end})
  local t = {}
  for i = 1, 1e6 do t[i] = p[i] end
end)
exhausts("__concat metamethod", function()
  local mt = {}
  mt.__concat = function(a, b) return setmetatable({v = a.v .. chunk}, mt) end
  local o = setmetatable({v = ""}, mt)
  while true do o = o .. o end
end)
exhausts("finalizable objects", function()
  local t = {}
  local mt = {__gc = function() end}
  for i = 1, 1e6 do t[i] = setmetatable({chunk .. i}, mt) end
end)
exhausts("tostring of numbers", function()
  local t = {}
  for i = 1, 1e7 do t[i] = tostring(i + 0.5) end
end, true)
exhausts("table.sort comparator allocating", function()
  local t = {}
  for i = 1, 200 do t[i] = 201 - i end
  local keep = {}
  table.sort(t, function(a, b) keep[#keep + 1] = chunk .. a; return a < b end)
  for i = 1, 1e6 do keep[#keep + 1] = chunk .. i end
end)
exhausts("deep recursion building tables", function()
  local function f(n) local big = chunk .. n; return {big, f(n + 1)} end
  return f(1)
end)

-- Exhaustion inside a coroutine kills it; resume reports the memory error.
do
  local co = coroutine.create(function()
    local t = {}
    for i = 1, 1e6 do t[i] = chunk .. i end
  end)
  local ok, err = coroutine.resume(co)
  eq(ok, false, "coroutine resume fails")
  eq(err, MEM, "coroutine message")
  eq(coroutine.status(co), "dead", "coroutine is dead")
  co = nil
  collectgarbage()
  local wrapped = coroutine.wrap(function() local s = chunk while true do s = s .. s end end)
  local ok2, err2 = pcall(wrapped)
  eq(ok2, false, "wrap propagates")
  eq(err2, MEM, "wrap message")
end

-- xpcall: a memory error does not call the message handler (LUA_ERRMEM).
do
  local called = false
  local ok, err = xpcall(function() local s = chunk while true do s = s .. s end end,
                         function(m) called = true; return m end)
  eq(ok, false, "xpcall fails")
  eq(err, MEM, "xpcall message")
  eq(called, false, "handler not called for memory errors")
end

-- to-be-closed variables are closed with the memory error.
do
  local seen
  local ok, err = pcall(function()
    local guard <close> = setmetatable({}, {__close = function(_, e) seen = e end})
    local s = chunk
    while true do s = s .. s end
  end)
  eq(ok, false, "tbc body fails")
  eq(err, MEM, "tbc message")
  eq(seen, MEM, "__close sees the memory error")
end

-- The same exhaustion many times in a row leaks nothing.
do
  local fails = 0
  for round = 1, 10 do
    local ok, err = pcall(function() local s = chunk while true do s = s .. s end end)
    if not ok and err == MEM then fails = fails + 1 end
  end
  eq(fails, 10, "repeated exhaustion")
  collectgarbage()
  check(collectgarbage("count") < 1024, "nothing retained after repeated exhaustion")
end

-- Exhaustion with the collector stopped: the emergency collection still reclaims.
do
  collectgarbage("stop")
  local ok, err = pcall(function() local t = {} for i = 1, 1e6 do t[i] = chunk .. i end end)
  eq(err, MEM, "stopped collector: message")
  local t = {}
  for i = 1, 1000 do t[i] = {i} end
  eq(#t, 1000, "work after exhaustion with the collector stopped")
  collectgarbage("restart")
  eq(collectgarbage("isrunning"), true, "collector restarted")
end

-- Garbage that fills the heap is collected before it exhausts it.
do
  local ok, err = pcall(function() for i = 1, 2000 do local s = chunk .. i end end)
  check(ok, "garbage alone never exhausts the heap: " .. tostring(err))
end

-- Normal work afterwards.
local t = {}
for i = 1, 10000 do t[i] = tostring(i) end
eq(#t, 10000, "table after exhaustion")
eq(table.concat(t, "", 1, 5), "12345", "strings after exhaustion")
eq(select("#", string.byte(("a"):rep(100), 1, -1)), 100, "varargs after exhaustion")
local f = load("return 1 + ...")
eq(f(41), 42, "load after exhaustion")

T.done()
