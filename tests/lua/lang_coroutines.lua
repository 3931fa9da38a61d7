-- To-be-closed variables (manual §3.3.8) and coroutines (§2.6, §6.2): closing order,
-- errors inside __close, yields across pcall, metamethods and iterators, close.
local NAME = "lang_coroutines"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function errorOf(f, ...)
  local ok, msg = pcall(f, ...)
  return not ok and tostring(msg):gsub("^[^:]*:%d+: ", "") or "no error"
end

-- To-be-closed variables close in reverse order, with the error (or nil).
local events = {}
local function closer(name)
  return setmetatable({}, {__close = function(_, err)
    events[#events + 1] = name .. ":" .. (err == nil and "nil" or tostring(err):gsub("^[^:]*:%d+: ", ""))
  end})
end
do
  local a <close> = closer("a")
  local b <close> = closer("b")
  local c <const> = 1
  events[#events + 1] = "body"
end
eq(table.concat(events, " "), "body b:nil a:nil", "reverse order at block end")
events = {}
local ok = pcall(function()
  local a <close> = closer("a")
  local b <close> = closer("b")
  error("boom")
end)
eq(ok, false, "error propagates through closes")
eq(table.concat(events, " "), "b:boom a:boom", "closes get the error")
events = {}
local ok2, msg2 = pcall(function()
  local a <close> = closer("a")
  local b <close> = setmetatable({}, {__close = function() error("in close") end})
  local c <close> = closer("c")
end)
eq(ok2, false, "error in __close is raised")
eq(tostring(msg2):gsub("^[^:]*:%d+: ", ""), "in close", "its message")
eq(table.concat(events, " "), "c:nil a:in close", "later closes see the new error")
events = {}
local function ret()
  local a <close> = closer("a")
  return "value"
end
eq(ret(), "value", "return value survives closing")
eq(events[1], "a:nil", "closed on return")
eq(errorOf(function()
  do local n <close> = nil end
  local f <close> = false
end), "no error", "nil and false are allowed as to-be-closed values")
eq(errorOf(function() local x <close> = {} end), "variable 'x' got a non-closable value", "non-closable value")
eq(select(2, load("local x <const> = 1; x = 2", "=src")), "src:1: attempt to assign to const variable 'x'", "assign to const")
eq(select(2, load("local x <foo> = 1", "=src")), "src:1: unknown attribute 'foo'", "unknown attribute")
eq(select(2, load("local a <close>, b <close> = 1, 2", "=src")), "src:1: multiple to-be-closed variables in local list", "two tbc in one list")

-- Coroutines: create, resume, yield, status.
local co = coroutine.create(function(a, b)
  local c = coroutine.yield(a + b)
  local d, e = coroutine.yield(c * 2)
  return d + e
end)
eq(coroutine.status(co), "suspended", "new coroutine is suspended")
local r1, v1 = coroutine.resume(co, 1, 2)
eq(v1, 3, "first yield")
local _, v2 = coroutine.resume(co, 10)
eq(v2, 20, "value passed to resume returned by yield")
local _, v3 = coroutine.resume(co, 3, 4)
eq(v3, 7, "return value")
eq(coroutine.status(co), "dead", "finished coroutine is dead")
local rd, md = coroutine.resume(co)
eq(rd, false, "resume dead")
eq(md, "cannot resume dead coroutine", "dead message")
eq(coroutine.isyieldable(), false, "main is not yieldable")
local mainCo, isMain = coroutine.running()
eq(isMain, true, "running in main")
eq(type(mainCo), "thread", "main thread object")

local statusInside
local self
self = coroutine.create(function()
  statusInside = coroutine.status(self)
  local _, m = coroutine.resume(self)
  return m
end)
local _, nonSusp = coroutine.resume(self)
eq(statusInside, "running", "status while running")
eq(nonSusp, "cannot resume non-suspended coroutine", "resume running coroutine")
local outerCo
outerCo = coroutine.create(function()
  local inner = coroutine.create(function() return coroutine.status(outerCo) end)
  return select(2, coroutine.resume(inner))
end)
eq(select(2, coroutine.resume(outerCo)), "normal", "status of a resuming coroutine")

-- wrap.
local gen = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end return "done" end)
eq(gen() + gen() + gen(), 6, "wrap yields")
eq(gen(), "done", "wrap return")
eq(errorOf(gen), "cannot resume dead coroutine", "wrap dead raises")
local failing = coroutine.wrap(function() error("wrapped") end)
eq(errorOf(failing), "wrapped", "wrap propagates errors")
local tableErr = coroutine.wrap(function() error({code = 7}) end)
local okT, errT = pcall(tableErr)
eq(type(errT) == "table" and errT.code, 7, "error objects pass through wrap")

-- Yield across pcall, metamethods and iterators.
local acrossPcall = coroutine.wrap(function()
  local okp, val = pcall(function() local got = coroutine.yield("in pcall"); error("after " .. got) end)
  coroutine.yield(okp)
  return val
end)
eq(acrossPcall(), "in pcall", "yield inside pcall")
eq(acrossPcall("resume"), false, "pcall caught the error after resuming")
check(tostring(acrossPcall()):match("after resume$") ~= nil, "error message after yield")
local Y = setmetatable({}, {
  __add = function(a, b) return coroutine.yield("add") end,
  __index = function(t, k) return coroutine.yield("index " .. k) end,
  __lt = function() return coroutine.yield("lt") end,
  __concat = function() return coroutine.yield("concat") end,
  __eq = function() return coroutine.yield("eq") end,
  __len = function() return coroutine.yield("len") end,
  __call = function(_, x) return coroutine.yield("call " .. x) end,
})
local meta = coroutine.wrap(function()
  local s = Y + 1
  local i = Y.key
  local l = Y < Y
  local c = Y .. "x"
  local e = Y == setmetatable({}, getmetatable(Y))
  local n = #Y
  local k = Y("arg")
  return table.concat({tostring(s), tostring(i), tostring(l), tostring(c), tostring(e), tostring(n), tostring(k)}, ",")
end)
eq(meta(), "add", "yield in __add")
eq(meta(5), "index key", "yield in __index")
eq(meta("I"), "lt", "yield in __lt")
eq(meta(true), "concat", "yield in __concat")
eq(meta("C"), "eq", "yield in __eq")
eq(meta(false), "len", "yield in __len")
eq(meta(9), "call arg", "yield in __call")
eq(meta("K"), "5,I,true,C,false,9,K", "metamethod results after resumes")
local iterCo = coroutine.wrap(function()
  local sum = 0
  for v in function(_, c) c = (c or 0) + 1; if c <= 3 then return coroutine.yield(c) end end do sum = sum + v end
  return sum
end)
eq(iterCo(), 1, "yield inside an iterator")
eq(iterCo(1), 2, "iterator resumed")
eq(iterCo(2), 3, "again")
eq(iterCo(3), 6, "loop finished with resumed values")
local sorter = coroutine.wrap(function()
  return pcall(table.sort, {3, 2, 1}, function(a, b) coroutine.yield() return a < b end)
end)
local okS, msgS = sorter()
eq(okS, false, "yield across a native without continuation fails")
eq(tostring(msgS):gsub("^[^:]*:%d+: ", ""), "attempt to yield across a C-call boundary", "its message")
eq(errorOf(coroutine.yield, 1), "attempt to yield from outside a coroutine", "yield from main")

-- close.
local closedCo = coroutine.create(function()
  local t <close> = setmetatable({}, {__close = function() events[#events + 1] = "co closed" end})
  coroutine.yield()
end)
coroutine.resume(closedCo)
events = {}
eq(coroutine.close(closedCo), true, "close suspended coroutine")
eq(events[1], "co closed", "pending to-be-closed variables closed")
eq(coroutine.status(closedCo), "dead", "closed coroutine is dead")
local errCo = coroutine.create(function() error("E") end)
coroutine.resume(errCo)
local cOk, cErr = coroutine.close(errCo)
eq(cOk, false, "close of an errored coroutine")
check(tostring(cErr):match("E$") ~= nil, "returns its error")
-- The error is reported once: closing again finds a dead coroutine with nothing to report.
eq(coroutine.close(errCo), true, "second close of an errored coroutine")
eq(select("#", coroutine.close(errCo)), 1, "second close returns only true")
local tbcErrCo = coroutine.create(function()
  local t <close> = setmetatable({}, {__close = function() error("in close", 0) end})
  coroutine.yield()
end)
coroutine.resume(tbcErrCo)
local tOk, tErr = coroutine.close(tbcErrCo)
eq(tOk, false, "close whose __close fails")
eq(tErr, "in close", "returns the __close error")
eq(coroutine.close(tbcErrCo), true, "closing it again succeeds")
eq(coroutine.resume(tbcErrCo), false, "a closed coroutine cannot resume")
-- A __close that fails while closing a suspended coroutine does not stop the others: each
-- lower variable still closes, seeing the latest error, and close returns the last one.
local seen = {}
local chainCo = coroutine.create(function()
  local low <close> = setmetatable({}, {__close = function(_, e) seen[#seen + 1] = "low:" .. tostring(e) end})
  local mid <close> = setmetatable({}, {__close = function(_, e) seen[#seen + 1] = "mid:" .. tostring(e); error("mid", 0) end})
  local top <close> = setmetatable({}, {__close = function(_, e) seen[#seen + 1] = "top:" .. tostring(e); error("top", 0) end})
  coroutine.yield()
end)
coroutine.resume(chainCo)
local chOk, chErr = coroutine.close(chainCo)
eq(chOk, false, "close with failing __close handlers")
eq(chErr, "mid", "the last error is returned")
eq(table.concat(seen, " "), "top:nil mid:top low:mid", "every variable closed, each with the latest error")
eq(errorOf(coroutine.close, coroutine.running()), "cannot close a running coroutine", "close running")

-- Many coroutines alive at once, and deep ones.
local cos = {}
for i = 1, 200 do cos[i] = coroutine.wrap(function() local x = i; while true do x = x + coroutine.yield(x) end end) end
local total = 0
for round = 1, 3 do for i = 1, 200 do total = total + cos[i](round) end end
eq(total, 3 * 20100 + 200 * (0 + 2 + 5), "200 interleaved coroutines")
local function nest(d) if d == 0 then return coroutine.yield("bottom") end return nest(d - 1) end
local deepCo = coroutine.wrap(function() return nest(1000) end)
eq(deepCo(), "bottom", "yield from deep recursion")
eq(deepCo("up"), "up", "resume deep recursion")

T.done()
