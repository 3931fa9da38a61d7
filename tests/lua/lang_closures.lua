-- Functions and closures (manual §3.4.11, §3.5): shared upvalues, fresh locals per loop
-- iteration, varargs, multiple results and their adjustment.
local NAME = "lang_closures"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

-- Closures share upvalues with their enclosing function and with each other.
local function counter()
  local n = 0
  return function() n = n + 1; return n end, function() return n end
end
local inc, get = counter()
inc(); inc()
eq(get(), 2, "two closures share one upvalue")
local inc2 = counter()
eq(inc2(), 1, "each call makes a fresh upvalue")
eq(get(), 2, "independent counters")

local x = 10
local function readX() return x end
x = 20
eq(readX(), 20, "upvalue sees later assignment")
local function setX(v) x = v end
setX(30)
eq(x, 30, "closure writes the enclosing local")

-- Each iteration of a loop has its own local.
local fns = {}
for i = 1, 3 do fns[i] = function() return i end end
eq(fns[1]() + fns[2]() * 10 + fns[3]() * 100, 321, "numeric for: fresh i per iteration")
fns = {}
for _, v in ipairs({"a", "b", "c"}) do fns[#fns + 1] = function() return v end end
eq(fns[1]() .. fns[2]() .. fns[3](), "abc", "generic for: fresh v")
fns = {}
local j = 0
while j < 3 do
  j = j + 1
  local k = j
  fns[j] = function() k = k + 10; return k end
end
eq(fns[1](), 11, "while body local is fresh")
eq(fns[1](), 21, "and keeps its own state")
eq(fns[2](), 12, "separate from the next iteration's")
fns = {}
local r = 0
repeat
  local y = r
  fns[#fns + 1] = function() return y end
  r = r + 1
until y >= 2
eq(fns[1]() + fns[3](), 2, "repeat: until sees the body's local")

-- Upvalues of upvalues (three levels).
local function outer()
  local a = 1
  return function()
    local b = 2
    return function() a = a + 1; return a + b end
  end
end
local deep = outer()()
eq(deep(), 4, "nested upvalue")
eq(deep(), 5, "nested upvalue keeps state")

-- Recursive local functions see themselves.
local function fact(n) if n <= 1 then return 1 end return n * fact(n - 1) end
eq(fact(20), 2432902008176640000, "local recursive function")
local fib
fib = function(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
eq(fib(20), 6765, "recursion through a declared local")

-- Methods and self.
local obj = {v = 5}
function obj:get(d) return self.v + (d or 0) end
function obj.static(a) return a end
eq(obj:get(), 5, "method call")
eq(obj.get(obj, 1), 6, "method called with explicit self")
eq(obj.static(7), 7, "dot function")
local a = {b = {c = {}}}
function a.b.c.f() return "nested" end
function a.b.c:m() return self == a.b.c end
eq(a.b.c.f(), "nested", "function a.b.c.f")
eq(a.b.c:m(), true, "function a.b.c:m")

-- Varargs.
local function count(...) return select("#", ...) end
eq(count(), 0, "no varargs")
eq(count(nil), 1, "one nil")
eq(count(nil, nil, nil), 3, "three nils")
eq(count(1, nil), 2, "trailing nil counts")
local function pass(...) return ... end
eq(count(pass(1, nil, 3, nil)), 4, "varargs keep holes")
eq(select(2, "a", "b", "c"), "b", "select(2, ...)")
eq(select(-1, "a", "b", "c"), "c", "select(-1, ...)")
eq(count(select(2, "a", "b", "c")), 2, "select returns the rest")
local packed = table.pack(1, nil, 3, nil)
eq(packed.n, 4, "table.pack n")
eq(packed[3], 3, "table.pack values")
eq(count(table.unpack({1, nil, 3}, 1, 3)), 3, "unpack with explicit range")
eq(count(table.unpack({}, 1, 0)), 0, "empty unpack range")
local function first(...) local f = ... return f end
eq(first(9, 8), 9, "local f = ... takes the first")
local function tableOf(...) return {...} end
eq(#tableOf(1, 2, 3), 3, "{...}")
local function varargMain(...) local t = {n = select("#", ...), ...} return t.n, t[1] end
local n1, v1 = varargMain("x", "y")
eq(n1, 2, "n field with ...")
eq(v1, "x", "... after a field")
eq(select("#", pass()), 0, "pass of nothing")
local ok, msg = pcall(select, 0)
eq(ok, false, "select(0) is an error")
eq(msg, "bad argument #1 to 'select' (index out of range)", "select(0) message")

-- Multiple results and adjustment.
local function three() return 1, 2, 3 end
local p, q, s, t = three()
eq(p + q + s, 6, "all results")
eq(t, nil, "extra variables get nil")
local u, w = three(), 10
eq(u, 1, "non-final call truncated to one value")
eq(w, 10, "following expression")
eq(#{three()}, 3, "final call in a constructor expands")
eq(#{three(), three()}, 4, "non-final call in a constructor gives one")
eq(#{(three())}, 1, "parentheses truncate")
eq(count(three()), 3, "final call argument expands")
eq(count(three(), 0), 2, "non-final call argument")
eq(count((three())), 1, "parenthesized argument")
local function retMany() return three() end
eq(count(retMany()), 3, "return f() returns all")
local function retParen() return (three()) end
eq(count(retParen()), 1, "return (f()) returns one")
local tt = {}
tt.a, tt.b = three()
eq(tt.b, 2, "multiple assignment from a call")
local m1, m2 = 1
eq(m2, nil, "missing values are nil")
local s1, s2 = 1, 2, 3
eq(s1 + s2, 3, "extra values dropped")
local sw1, sw2 = 1, 2
sw1, sw2 = sw2, sw1
eq(sw1 * 10 + sw2, 21, "swap evaluates before assigning")
local arr = {1, 2}
local ii = 1
ii, arr[ii] = ii + 1, 20
eq(arr[1], 20, "index expression evaluated before assignment")
eq(ii, 2, "then i updated")
eq(math.max(three()), 3, "results as arguments to a native")
eq(string.format("%d %d %d", three()), "1 2 3", "format with expanded call")

-- Functions are values; closures compare by identity.
local function mk() return function() end end
check(mk() ~= mk(), "distinct closures")
local sameF = print
eq(sameF, print, "native function identity")

-- A captured local is one variable: its function and its closures see each other's
-- writes at once, within one statement, through metamethods and coroutines, through the
-- debug library, and after the function returns.
local function capturedLocal()
  local x = 1
  local function get() return x end
  local function set(v) x = v end
  set(2)
  eq(x, 2, "closure's write seen by the function")
  x = 3
  eq(get(), 3, "function's write seen by the closure")
  x = get() + 1
  eq(x, 4, "read through the closure, written by the function")
  local y = (function() x = 10; return 5 end)() + x
  eq(y, 15, "closure's write seen later in the same expression")
  x = setmetatable({}, {__add = function() x = 100; return 7 end}) + 1
  eq(x, 7, "the assignment follows a metamethod's write")
  local z = setmetatable({}, {__index = function() x = 50; return 1 end}).k + x
  eq(z, 51, "an __index write seen by the next operand")
  local co = coroutine.wrap(function() x = 20; coroutine.yield(get()); x = x + 1 end)
  eq(co(), 20, "coroutine's write read through the closure")
  eq(x, 20, "coroutine's write seen by the function")
  x = 30
  co()
  eq(x, 31, "coroutine read the function's write")
  local function localOfCaller(v)
    set(v)
    local found, i = nil, 1
    while true do
      local name, value = debug.getlocal(2, i)
      if not name then return found end
      if name == "x" then found = value end
      i = i + 1
    end
  end
  eq(localOfCaller(40), 40, "debug.getlocal sees a closure's write")
  local function setLocalOfCaller(v)
    local last, i = nil, 1
    while debug.getlocal(2, i) do
      if debug.getlocal(2, i) == "x" then last = i end
      i = i + 1
    end
    debug.setlocal(2, last, v)
  end
  setLocalOfCaller(60)
  eq(get(), 60, "debug.setlocal reaches the closures")
  debug.setupvalue(get, 1, 70)
  eq(x, 70, "debug.setupvalue reaches the function")
  local sum = 0
  for i = 1, 100 do x = i; sum = sum + get() end
  for i = 1, 100 do set(i); sum = sum - x end
  eq(sum, 0, "every write in a loop seen by the other side")
  local seen
  debug.sethook(function() seen = get() end, "l")
  x = 80
  x = x + 1
  debug.sethook()
  eq(seen, 81, "a line hook's closure sees the last write")
  x = "last"
  return get, set
end
local getCaptured, setCaptured = capturedLocal()
eq(getCaptured(), "last", "closed with the function's last write")
setCaptured("after")
eq(getCaptured(), "after", "closed upvalue still shared")

-- A captured local written by its own frame and read at once by a closure that runs
-- without a call instruction in between: a metamethod, a __close handler, a message
-- handler after an error raised by an instruction, a line hook.
do
  local x = 1
  local proxy = setmetatable({}, {__index = function() return x end,
                                  __add = function() return x * 10 end,
                                  __lt = function() return x > 3 end,
                                  __concat = function() return "x" .. x end,
                                  __len = function() return x + 100 end})
  x = 2
  eq(proxy.anything, 2, "__index sees the write before it")
  x = 3
  eq(proxy + 1, 30, "__add sees it")
  x = 4
  eq(proxy < proxy, true, "__lt sees it")
  x = 5
  eq(proxy .. "", "x5", "__concat sees it")
  x = 6
  eq(#proxy, 106, "__len sees it")
  for i = 1, 3 do x = x + i end
  eq(proxy.again, 12, "after a loop that wrote it")
end
do
  local seen
  do
    local y = 0
    local c <close> = setmetatable({}, {__close = function() seen = y end})
    y = 7
  end
  eq(seen, 7, "__close sees the last write")
  local ok = pcall(function()
    local z = 0
    local c <close> = setmetatable({}, {__close = function() seen = z end})
    z = 8
    local _ = z + {}
  end)
  eq(ok, false, "arithmetic on a table raises")
  eq(seen, 8, "__close during the error sees the write before it")
  local w = 0
  local function handler() return w end
  eq(select(2, xpcall(function()
    w = 9
    for _ = 1, "x" do end
  end, handler)), 9, "the message handler sees the write before a for-loop error")
end
do
  local v = 0
  local function read() return v end
  local lines = {}
  debug.sethook(function() lines[#lines + 1] = read() end, "l")
  v = 1
  v = 2
  debug.sethook()
  check(lines[2] == 1 and lines[3] == 2, "a line hook sees each write: " .. table.concat(lines, ","))
end

-- A loop that stores into upvalues (compiled code's SETUPVAL, docs/design/jit.md): the
-- enclosing frame, whose local it is, reads every store after the call; a table stored
-- into an upvalue stays reachable through it.
do
  local function outer()
    local x, last = 0, nil
    local function bump(n)
      for i = 1, n do
        x = x + i
        last = {i}
      end
    end
    bump(100)
    local seen = x
    bump(10)
    collectgarbage()
    return seen, x, last[1]
  end
  local seen, x, last = outer()
  eq(seen, 5050, "the enclosing frame sees the loop's upvalue stores")
  eq(x, 5105, "and the later ones")
  eq(last, 10, "a table stored into an upvalue survives a collection")
end

T.done()
