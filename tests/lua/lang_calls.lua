-- Calls (manual §3.4.10): tail calls in every form (plain, mutual, method, varargs,
-- __call, to a native function) pass their arguments whole, the traceback marks them,
-- and non-tail recursion gets every frame's values back. The depths are small so the
-- relocate run can collect at every safepoint, moving the arguments of each tail call
-- and every frame of the recursion; lang_calls_deep.lua has the depths.
local NAME = "lang_calls"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

-- Tail calls whose arguments are fresh objects: each call's frame replaces the last.
local function build(n, list) if n == 0 then return list end return build(n - 1, {n = n, next = list}) end
local function walk(list)
  local count, sum, ordered = 0, 0, true
  while list do
    count, sum = count + 1, sum + list.n
    if list.next and list.next.n ~= list.n + 1 then ordered = false end
    list = list.next
  end
  return count, sum, ordered
end
local count, sum, ordered = walk(build(1000, nil))
eq(count, 1000, "a tail-call chain builds every node")
eq(sum, 500500, "with its values")
check(ordered, "in order")
local function concat(n, s) if n == 0 then return s end return concat(n - 1, s .. n % 10) end
eq(#concat(500, ""), 500, "tail calls passing new strings")
eq(concat(12, "x"), "x210987654321", "the strings arrive whole")
local isEven, isOdd
function isEven(n) if n == 0 then return true end return isOdd(n - 1) end
function isOdd(n) if n == 0 then return false end return isEven(n - 1) end
eq(isEven(1001), false, "mutual tail recursion")
eq(isOdd(1001), true, "mutual tail recursion, other side")
local obj = {n = 0, tag = "obj"}
function obj:count(k) if k == 0 then return self end self.n = self.n + 1 return self:count(k - 1) end
local got = obj:count(1000)
check(got == obj, "tail method calls keep self")
eq(got.n, 1000, "tail method calls")
eq(got.tag, "obj", "self's fields survive")
local function viaVararg(n, ...)
  if n == 0 then return select("#", ...), ... end
  return viaVararg(n - 1, ...)
end
local shared = {}
local nv, va, vb, vc = viaVararg(1000, "a", shared, 3)
eq(nv, 3, "tail calls with varargs")
eq(va, "a", "first vararg")
check(vb == shared, "table vararg keeps its identity")
eq(vc, 3, "integer vararg")
local callable = setmetatable({tag = "callable"}, {__call = function(self, n, path)
  if n == 0 then return self.tag .. ":" .. #path end
  return self(n - 1, path .. ".")
end})
eq(callable(1000, ""), "callable:1000", "tail calls through __call")
local function tailNative(n) if n == 0 then return select(2, "a", "b") end return tailNative(n - 1) end
eq(tailNative(10), "b", "tail call to a native function")
local info
local function probe() info = debug.traceback("tb") end
local function tailer() return probe() end
tailer()
check(info:match("%(%.%.%.tail calls%.%.%.%)") ~= nil, "traceback marks tail calls")

-- Non-tail recursion: every frame holds a table across its call and reads it after.
local function nest(n)
  if n == 0 then return 0, "" end
  local mine = {n, tostring(n)}
  local total, digits = nest(n - 1)
  return total + mine[1], digits .. mine[2]:sub(-1)
end
local total, digits = nest(1000)
eq(total, 500500, "1,000-deep recursion keeps every frame's table")
eq(digits:sub(1, 12), "123456789012", "in order")
eq(#digits, 1000, "all of them")
local function sumTo(n) if n == 0 then return 0 end return n + sumTo(n - 1) end
eq(sumTo(1000), 500500, "1,000-deep non-tail recursion")

T.done()
