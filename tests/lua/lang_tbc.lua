-- To-be-closed variables (manual §3.3.8): order, errors in __close, closing on break,
-- return, goto and error, generic-for closing values, coroutine.close.
local NAME = "lang_tbc"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function msgOf(f, ...)
  local ok, msg = pcall(f, ...)
  if ok then return "no error" end
  return msg
end
local function bare(f, ...)
  local m = msgOf(f, ...)
  return type(m) == "string" and (m:gsub("^[^:]*:%d+: ", "")) or m
end

local log = {}
local function closer(name, fail)
  return setmetatable({name = name}, {__close = function(self, err)
    log[#log + 1] = name .. (err ~= nil and ("(" .. tostring(err):gsub("^.-:%d+: ", "") .. ")") or "")
    if fail then error(fail, 0) end
  end})
end
local function logged() local s = table.concat(log, " "); log = {}; return s end

-- Order: reverse of declaration, at the end of the block.
do
  local a <close> = closer("a")
  local b <close> = closer("b")
  local c <close> = closer("c")
  eq(#log, 0, "nothing closed inside the block")
end
eq(logged(), "c b a", "reverse order at block end")

-- nil and false are allowed and ignored.
do
  local x <close> = nil
  local y <close> = false
  local z <close> = closer("z")
end
eq(logged(), "z", "nil and false are not closed")

-- The value is constant.
eq(select(2, load("local x <close> = nil; x = 1")):gsub("^.-:%d+: ", ""), "attempt to assign to const variable 'x'", "tbc is const")
eq(select(2, load("local x <close>, y <close> = nil, nil")):gsub("^.-:%d+: ", ""), "multiple to-be-closed variables in local list", "one tbc per list")
eq(select(2, load("local x <foo> = 1")):gsub("^.-:%d+: ", ""), "unknown attribute 'foo'", "unknown attribute")
do
  local k <const> = 10
  eq(k, 10, "const attribute")
end

-- Non-closable values.
eq(bare(function() local x <close> = {} end), "variable 'x' got a non-closable value", "table without __close")
eq(bare(function() local y <close> = 42 end), "variable 'y' got a non-closable value", "number")
eq(bare(function() local z <close> = "s" end), "variable 'z' got a non-closable value", "string")
eq(bare(function() local a <close> = closer("ok"); local w <close> = setmetatable({}, {}) end),
   "variable 'w' got a non-closable value", "metatable without __close")
eq(logged(), "ok(variable 'w' got a non-closable value)", "earlier tbc closed with the error")

-- Close on break, return, goto and error.
for i = 1, 3 do
  local v <close> = closer("loop" .. i)
  if i == 2 then break end
end
eq(logged(), "loop1 loop2", "closed on break")
local function ret()
  local r <close> = closer("r")
  return "value"
end
eq(ret(), "value", "return value kept")
eq(logged(), "r", "closed on return")
local function retMany()
  local p <close> = closer("p")
  local q <close> = closer("q")
  return 1, 2, 3
end
eq(select("#", retMany()), 3, "multiple results kept")
eq(logged(), "q p", "closed on multiple return")
local function tailish()
  local t1 <close> = closer("t1")
  return ret()
end
eq(tailish(), "value", "return of a call")
eq(logged(), "r t1", "return of a call closes after the callee")
do
  local n = 0
  ::again::
  do
    local g <close> = closer("g" .. n)
    n = n + 1
    if n < 2 then goto again end
  end
end
eq(logged(), "g0 g1", "closed on goto")
do
  local ok, err = pcall(function()
    local e1 <close> = closer("e1")
    local e2 <close> = closer("e2")
    error("boom")
  end)
  eq(ok, false, "error propagates")
  eq(err:gsub("^.-:%d+: ", ""), "boom", "error value kept")
  eq(logged(), "e2(boom) e1(boom)", "closed with the error")
end

-- __close receives the value and nil on normal exit.
do
  local got = {}
  do
    local obj <close> = setmetatable({}, {__close = function(o, e) got.o = o; got.e = e; got.n = select("#", o, e) end})
    got.expect = obj
  end
  eq(got.o, got.expect, "__close gets the value")
  eq(got.e, nil, "error argument nil on normal exit")
  eq(got.n, 2, "two arguments")
end

-- Errors in __close.
do
  local ok, err = pcall(function()
    local a <close> = closer("a")
    local b <close> = closer("b", "close error")
  end)
  eq(ok, false, "error in __close on normal exit is raised")
  eq(err, "close error", "its value")
  eq(logged(), "b a(close error)", "later closers see the new error")
  local ok2, err2 = pcall(function()
    local a <close> = closer("a2", "second")
    local b <close> = closer("b2", "first")
    error("original", 0)
  end)
  eq(ok2, false, "errors in __close during an error")
  eq(err2, "second", "the last error wins")
  eq(logged(), "b2(original) a2(first)", "each closer sees the current error")
  local ok3, err3 = pcall(function()
    local a <close> = setmetatable({}, {__close = function() error({code = 7}) end})
  end)
  eq(type(err3), "table", "non-string error from __close")
  eq(err3.code, 7, "its field")
end

-- Close in a generic for: the fourth value is closed when the loop ends.
do
  local function iter(n)
    local i = 0
    return function() i = i + 1; if i <= n then return i end end, nil, nil, closer("iter" .. n)
  end
  local sum = 0
  for i in iter(3) do sum = sum + i end
  eq(sum, 6, "loop ran")
  eq(logged(), "iter3", "closing value closed at loop end")
  for i in iter(5) do if i == 2 then break end end
  eq(logged(), "iter5", "closing value closed on break")
  local function find()
    for i in iter(4) do if i == 3 then return i end end
  end
  eq(find(), 3, "return from the loop")
  eq(logged(), "iter4", "closing value closed on return")
  local ok = pcall(function() for i in iter(2) do error("in loop") end end)
  eq(logged(), "iter2(in loop)", "closing value closed on error")
end

-- Coroutines: close on completion, coroutine.close of a suspended coroutine.
do
  local co = coroutine.create(function()
    local c1 <close> = closer("c1")
    local c2 <close> = closer("c2")
    coroutine.yield("suspended")
    return "done"
  end)
  eq(select(2, coroutine.resume(co)), "suspended", "coroutine suspended")
  eq(#log, 0, "nothing closed while suspended")
  local ok, err = coroutine.close(co)
  eq(ok, true, "coroutine.close succeeds")
  eq(err, nil, "no error")
  eq(logged(), "c2 c1", "coroutine.close closes pending variables")
  eq(coroutine.status(co), "dead", "closed coroutine is dead")
  eq(coroutine.close(co), true, "closing a dead coroutine again")

  local co2 = coroutine.create(function()
    local d <close> = closer("d", "close failed")
    coroutine.yield()
  end)
  coroutine.resume(co2)
  local ok2, err2 = coroutine.close(co2)
  eq(ok2, false, "coroutine.close reports errors in __close")
  eq(err2, "close failed", "its message")
  eq(logged(), "d", "closer ran")

  local co3 = coroutine.wrap(function()
    local w <close> = closer("w")
    coroutine.yield(1)
    return 2
  end)
  eq(co3(), 1, "wrap first")
  eq(co3(), 2, "wrap second")
  eq(logged(), "w", "closed when the coroutine returns")

  local co4 = coroutine.create(function()
    local x <close> = closer("x")
    error("died")
  end)
  local ok4, err4 = coroutine.resume(co4)
  eq(ok4, false, "coroutine failed")
  eq(logged(), "", "a failed coroutine keeps its variables until closed")
  local ok5, err5 = coroutine.close(co4)
  eq(logged(), "x(died)", "coroutine.close closes them with the error")
  eq(ok5, false, "close of a failed coroutine")
  eq(tostring(err5):gsub("^.-:%d+: ", ""), "died", "returns its error")
  eq(bare(coroutine.close, coroutine.running()), "cannot close a running coroutine", "cannot close running")
end

-- Nested functions and upvalues seen by __close.
do
  local state = "open"
  local function use()
    local h <close> = setmetatable({}, {__close = function() state = "closed" end})
    eq(state, "open", "state inside")
    return function() return state end
  end
  local get = use()
  eq(get(), "closed", "closed after return")
end

-- pcall inside a tbc scope, and tbc inside pcall.
do
  do
    local outer <close> = closer("outer")
    local ok = pcall(function()
      local inner <close> = closer("inner")
      error("x", 0)
    end)
    eq(ok, false, "inner failed")
    eq(logged(), "inner(x)", "only inner closed by the error")
  end
  eq(logged(), "outer", "outer closed at its block end")
end

-- Many tbc variables.
do
  do
    local a1 <close> = closer("1")
    local a2 <close> = closer("2")
    local a3 <close> = closer("3")
    local a4 <close> = closer("4")
    local a5 <close> = closer("5")
    local a6 <close> = closer("6")
    local a7 <close> = closer("7")
    local a8 <close> = closer("8")
    local a9 <close> = closer("9")
  end
  eq(logged(), "9 8 7 6 5 4 3 2 1", "nine variables")
  local function rec(n)
    local r <close> = closer("n" .. n)
    if n > 0 then return rec(n - 1) end
    return n
  end
  eq(rec(3), 0, "recursive")
  eq(logged(), "n0 n1 n2 n3", "closed innermost first")
end

-- The metamethod is read when the variable is closed.
do
  local mt = {__close = function() log[#log + 1] = "first" end}
  do
    local v <close> = setmetatable({}, mt)
    mt.__close = function() log[#log + 1] = "second" end
  end
  eq(logged(), "second", "metamethod read at close time")
end

T.done()
