-- Variadic functions (manual §3.4.11, §3.4.12): ..., select, table.pack/unpack,
-- adjustment to one value, varargs across calls, coroutines and metamethods.
local NAME = "lang_varargs"
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

local function count(...) return select("#", ...) end
local function pass(...) return ... end
local function pack2(...) return {...}, select("#", ...) end

eq(count(), 0, "no arguments")
eq(count(nil), 1, "one nil")
eq(count(nil, nil, nil), 3, "trailing nils count")
eq(count(pass(1, nil, 3)), 3, "pass-through keeps nils")
eq(count(pass()), 0, "pass-through of nothing")
eq(count((pass(1, 2, 3))), 1, "parentheses truncate to one")
eq(count(pass(1, 2), 3), 2, "call not last: one value")
eq(count(3, pass(1, 2)), 3, "call last: all values")
eq(count(pass(), pass()), 1, "empty call not last gives nil")
local t, n = pack2(1, nil, 3, nil)
eq(n, 4, "select # with holes")
eq(t[3], 3, "table constructor keeps positions")
eq(#{pass(1, 2, 3)}, 3, "constructor expands the last call")
eq(#{pass(1, 2, 3), 10}, 2, "constructor truncates a call not last")

-- select.
eq(select(2, "a", "b", "c"), "b", "select 2")
eq(count(select(2, "a", "b", "c")), 2, "select returns the rest")
eq(select(-1, "a", "b", "c"), "c", "negative index")
eq(count(select(-2, "a", "b", "c")), 2, "negative index rest")
eq(count(select(4, "a", "b", "c")), 0, "index past the end")
eq(select("#"), 0, "select # of nothing")
eq(bare(select, 0, "a"), "bad argument #1 to 'select' (index out of range)", "select 0")
eq(bare(select, -3, "a", "b"), "bad argument #1 to 'select' (index out of range)", "select too negative")
eq(bare(select, "x"), "bad argument #1 to 'select' (number expected, got string)", "select non-number")
eq(select(2.0, "a", "b"), "b", "float index with integer value")
eq(bare(select, 1.5, "a"), "bad argument #1 to 'select' (number has no integer representation)", "select fractional")

-- table.pack / table.unpack.
local p = table.pack(1, nil, 3)
eq(p.n, 3, "pack n")
eq(p[2], nil, "pack hole")
eq(table.pack().n, 0, "pack nothing")
eq(count(table.unpack({1, 2, 3})), 3, "unpack all")
eq(count(table.unpack({1, 2, 3}, 2)), 2, "unpack from")
eq(count(table.unpack({1, nil, 3}, 1, 3)), 3, "unpack with explicit end keeps holes")
eq(count(table.unpack({}, 1, 0)), 0, "unpack empty range")
eq(select(3, table.unpack({}, 1, 5)), nil, "unpack past the contents gives nils")

-- Varargs in various positions.
local function first(...) local a = ... return a end
eq(first(9, 8, 7), 9, "local a = ...")
local function three(...) local a, b, c = ... return c end
eq(three(1, 2), nil, "missing vararg is nil")
local function mixed(a, b, ...) return a, b, count(...) end
local ma, mb, mc = mixed(1)
eq(mb, nil, "missing fixed parameter")
eq(mc, 0, "no extra varargs")
ma, mb, mc = mixed(1, 2, 3, 4, 5)
eq(mc, 3, "extra varargs")
local function varargInTable(...) return {n = select("#", ...), ...} end
eq(varargInTable(1, 2).n, 2, "vararg in constructor with a field")
local function lastArith(...) return ... + 1 end
eq(lastArith(5, 100), 6, "vararg in an expression is one value")
local function concatAll(...) return table.concat({...}, ",") end
eq(concatAll("a", "b", "c"), "a,b,c", "vararg to table")
local function callWith(...) return math.max(...) end
eq(callWith(3, 9, 2), 9, "vararg as call arguments")
local function viaString(...) return string.format(...) end
eq(viaString("%d-%s", 4, "x"), "4-x", "vararg to a native")

-- Varargs and closures: a nested function cannot see the outer ...
eq(select(2, load("local function f(...) return function() return ... end end")):gsub("^.-:%d+: ", ""),
   "cannot use '...' outside a vararg function near '...'", "... in a non-vararg function")
local function capture(...)
  local args = table.pack(...)
  return function() return table.unpack(args, 1, args.n) end
end
eq(count(capture(1, nil, nil)()), 3, "captured through a table")

-- The main chunk is vararg.
eq(count(load("return ...")(1, 2, 3, 4)), 4, "main chunk receives arguments")
eq(load("local a, b = ... return b")(1, 2), 2, "main chunk locals from ...")

-- Many values.
do
  local big = {}
  for i = 1, 250 do big[i] = i end
  eq(count(table.unpack(big)), 250, "250 values")
  eq(select(250, table.unpack(big)), 250, "last of 250")
  eq(math.max(table.unpack(big)), 250, "250 arguments to a native")
  local function sum(...)
    local s = 0
    for i = 1, select("#", ...) do s = s + (select(i, ...)) end
    return s
  end
  eq(sum(table.unpack(big)), 31375, "sum of 250 varargs")
  local function rec(n, ...)
    if n == 0 then return count(...) end
    return rec(n - 1, n, ...)
  end
  eq(rec(100), 100, "varargs grown through recursion")
  local manyBig = {}
  for i = 1, 5000 do manyBig[i] = i end
  eq(count(table.unpack(manyBig)), 5000, "5000 values")
  eq(bare(table.unpack, {}, 1, 1e8), "too many results to unpack", "too many results")
end

-- Varargs across pcall, coroutines and metamethods.
eq(count(pcall(pass, 1, nil, nil)), 4, "pcall adds true")
eq(select(4, pcall(pass, 1, nil, "z")), "z", "pcall keeps positions")
do
  local co = coroutine.wrap(function(...)
    local got = select("#", ...)
    local r = table.pack(coroutine.yield(got, ...))
    return r.n, r[2]
  end)
  local a, b, c = co("x", nil)
  eq(a, 2, "coroutine body gets varargs")
  eq(b, "x", "yield passes varargs")
  local n2, second = co(nil, "second", nil)
  eq(n2, 3, "resume passes varargs to yield")
  eq(second, "second", "value position")
  local callable = setmetatable({}, {__call = function(self, ...) return count(...) end})
  eq(callable(1, 2, nil), 3, "__call gets varargs after self")
  eq(callable(), 0, "__call with nothing")
end

-- Vararg functions with many fixed parameters and debug info.
do
  local function f(a, b, c, ...) return debug.getinfo(1, "u") end
  local info = f()
  eq(info.nparams, 3, "nparams")
  eq(info.isvararg, true, "isvararg")
  eq(debug.getinfo(print, "u").isvararg, true, "natives are vararg")
end

T.done()
