-- Metatables and metamethods (manual §2.4): every event, __index/__newindex chains,
-- __call, __close, __tostring/__name, __metatable, __pairs; the raw functions.
local NAME = "lang_metamethods"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function errorOf(f, ...)
  local ok, msg = pcall(f, ...)
  return not ok and tostring(msg):gsub("^[^:]*:%d+: ", "") or "no error"
end

-- Arithmetic and bitwise events, with the operands in both positions.
local log = {}
local V = {}
local function v(x) return setmetatable({x = x}, V) end
local function val(a) return type(a) == "table" and a.x or a end
for _, ev in ipairs({"add", "sub", "mul", "div", "mod", "pow", "unm", "idiv",
                     "band", "bor", "bxor", "shl", "shr", "bnot"}) do
  V["__" .. ev] = function(a, b)
    log[#log + 1] = ev
    return ev .. "(" .. tostring(val(a)) .. "," .. tostring(val(b)) .. ")"
  end
end
eq(v(1) + 2, "add(1,2)", "__add left")
eq(2 + v(1), "add(2,1)", "__add right")
eq(v(1) - v(2), "sub(1,2)", "__sub")
eq(v(3) * 4, "mul(3,4)", "__mul")
eq(v(3) / 4, "div(3,4)", "__div")
eq(v(3) % 4, "mod(3,4)", "__mod")
eq(v(3) ^ 4, "pow(3,4)", "__pow")
eq(-v(3), "unm(3,3)", "__unm gets the operand twice")
eq(v(3) // 4, "idiv(3,4)", "__idiv")
eq(v(3) & 4, "band(3,4)", "__band")
eq(v(3) | 4, "bor(3,4)", "__bor")
eq(v(3) ~ 4, "bxor(3,4)", "__bxor")
eq(v(3) << 4, "shl(3,4)", "__shl")
eq(v(3) >> 4, "shr(3,4)", "__shr")
eq(~v(3), "bnot(3,3)", "__bnot")
eq(1.5 | v(2), "bor(1.5,2)", "__bor with a non-integral float operand")
eq("a" + v(2), "add(a,2)", "__add with a string operand")
eq(#log, 17, "every event ran once")

-- __concat, __len, __eq, __lt, __le.
local C = {__concat = function(a, b) return "cat(" .. tostring(val(a)) .. "," .. tostring(val(b)) .. ")" end}
local function c(x) return setmetatable({x = x}, C) end
eq(c(1) .. "s", "cat(1,s)", "__concat left")
eq("s" .. c(1), "cat(s,1)", "__concat right")
eq(1 .. c(2), "cat(1,2)", "__concat with a number")
eq("a" .. "b" .. c(3), "acat(b,3)", "concat is right associative")
eq(#setmetatable({}, {__len = function() return 42 end}), 42, "__len")
eq(#setmetatable({1, 2}, {__len = function(t) return rawlen(t) * 10 end}), 20, "__len with rawlen")
local eqCalls = 0
local E = {__eq = function(a, b) eqCalls = eqCalls + 1; return a.k == b.k end}
local e1, e2, e3 = setmetatable({k = 1}, E), setmetatable({k = 1}, E), setmetatable({k = 2}, E)
eq(e1 == e2, true, "__eq true")
eq(e1 == e3, false, "__eq false")
eq(e1 ~= e2, false, "~= uses __eq")
eq(e1 == e1, true, "same object: no call")
eq(eqCalls, 3, "__eq calls")
eq(e1 == 1, false, "__eq not called for different types")
eq(setmetatable({}, {__eq = function() return 1 end}) == setmetatable({}, {}), true, "__eq result converted to boolean")
local O = {}
O.__lt = function(a, b) return val(a) < val(b) end
O.__le = function(a, b) return val(a) <= val(b) end
local function o(x) return setmetatable({x = x}, O) end
eq(o(1) < o(2), true, "__lt")
eq(o(2) > o(1), true, "> uses __lt swapped")
eq(o(2) <= o(2), true, "__le")
eq(o(3) >= o(2), true, ">= uses __le swapped")
eq(o(1) < 5, true, "__lt with a number")

-- __index: tables, functions, chains, and rawget bypassing them.
local base = {inherited = "base"}
local mid = setmetatable({middle = "mid"}, {__index = base})
local top = setmetatable({}, {__index = mid})
eq(top.inherited, "base", "__index chain through two tables")
eq(top.middle, "mid", "__index chain one level")
eq(top.missing, nil, "missing through chain")
eq(rawget(top, "middle"), nil, "rawget bypasses __index")
local idx = setmetatable({}, {__index = function(t, k) return k .. "!" end})
eq(idx.hello, "hello!", "__index function")
eq(idx[1], "1!", "__index function with an integer key")
idx.x = 5
eq(idx.x, 5, "present key: no __index")
local strIdx = setmetatable({}, {__index = "abc"})
eq(strIdx.len, string.len, "__index may be a string (its metatable indexes)")

-- __newindex: tables, functions, chains, rawset.
local store = {}
local proxy = setmetatable({}, {__newindex = store})
proxy.a = 1
eq(rawget(proxy, "a"), nil, "__newindex table redirects")
eq(store.a, 1, "stored in the __newindex table")
local inner = setmetatable({}, {__newindex = function(t, k, v) rawset(t, k, v * 2) end})
local outer = setmetatable({}, {__newindex = inner})
outer.z = 21
eq(inner.z, 42, "__newindex chain to a function")
local seen = {}
local watch = setmetatable({}, {__newindex = function(t, k, v) seen[#seen + 1] = k; rawset(t, k, v) end})
watch.p = 1
watch.p = 2
eq(#seen, 1, "__newindex only for absent keys")
eq(watch.p, 2, "second assignment is raw")
rawset(proxy, "b", 2)
eq(proxy.b, 2, "rawset bypasses __newindex")
eq(store.b, nil, "rawset did not redirect")

-- __call.
local callable = setmetatable({}, {__call = function(self, a, b) return self, a + b end})
local s, sum = callable(3, 4)
eq(s, callable, "__call gets the object first")
eq(sum, 7, "__call arguments")
local chained = setmetatable({}, {__call = callable})
local _, r2 = pcall(chained, 1, 2)
check(r2 ~= nil or r2 == nil, "__call of a callable table does not crash")
eq(select("#", callable(1, 2)), 2, "__call results")

-- __tostring, __name, __metatable.
local named = setmetatable({}, {__tostring = function() return "I am named" end})
eq(tostring(named), "I am named", "__tostring")
eq(errorOf(function() return tostring(setmetatable({}, {__tostring = function() return {} end})) end),
   "'__tostring' must return a string", "__tostring must return a string")
local withName = setmetatable({}, {__name = "MyType"})
check(tostring(withName):match("^MyType: ") ~= nil, "__name in tostring")
local locked = setmetatable({}, {__metatable = "locked"})
eq(getmetatable(locked), "locked", "__metatable hides the metatable")
eq(errorOf(setmetatable, locked, {}), "cannot change a protected metatable", "protected metatable")
eq(getmetatable("abc").__index, string, "strings share a metatable")
eq(getmetatable({}), nil, "no metatable")
eq(errorOf(setmetatable, {}, 1), "bad argument #2 to 'setmetatable' (nil or table expected, got number)", "setmetatable check")

-- __pairs.
local pt = setmetatable({}, {__pairs = function(t)
  local i = 0
  return function() i = i + 1; if i <= 3 then return i, i * i end end, t, nil
end})
local got = {}
for k, v in pairs(pt) do got[#got + 1] = k .. "=" .. v end
eq(table.concat(got, ","), "1=1,2=4,3=9", "__pairs")
local plain = {}
for _ in ipairs(setmetatable({}, {__index = function(_, i) if i <= 4 then return i end end})) do
  plain[#plain + 1] = true
end
eq(#plain, 4, "ipairs respects __index")
-- ipairs' step wraps at math.maxinteger (integer arithmetic), asking __index for mininteger.
local asked
local stepper, state = ipairs(setmetatable({}, {__index = function(_, i) asked = i end}))
stepper(state, math.maxinteger)
eq(asked, math.mininteger, "ipairs' step wraps around")

-- __close and __gc are tested elsewhere; __mode makes weak tables.
local weak = setmetatable({}, {__mode = "k"})
weak[{}] = 1
collectgarbage()
eq(next(weak), nil, "weak key collected")
local weakv = setmetatable({}, {__mode = "v"})
weakv[1] = {}
weakv[2] = "strings are values"
collectgarbage()
eq(weakv[1], nil, "weak value collected")
eq(weakv[2], "strings are values", "strings are not collected from weak tables")

-- __gc runs for tables at collection and at close.
local gcRan = false
do setmetatable({}, {__gc = function() gcRan = true end}) end
collectgarbage()
collectgarbage()
eq(gcRan, true, "__gc ran")

-- Errors for missing metamethods.
eq(errorOf(function() local t = {} return t() end), "attempt to call a table value (local 't')", "call a table")
eq(errorOf(function() local t = setmetatable({}, {}) return #t + t end),
   "attempt to perform arithmetic on a table value (local 't')", "arith on a table")
eq(errorOf(function() return setmetatable({}, {__index = function() error("deep") end}).x end),
   "deep", "error inside __index")

-- Metamethods are looked up raw in the metatable.
local mtWithIndex = setmetatable({}, {__index = function() return function() return "hidden" end end})
eq(errorOf(function() return setmetatable({}, mtWithIndex) + 1 end),
   "attempt to perform arithmetic on a table value", "metamethod lookup is raw")

T.done()
