-- Numeric for (manual §3.3.5) at the edges: integer loops near maxinteger/mininteger run
-- exactly the precomputed number of iterations and never wrap, float limits are clipped
-- (floor for positive steps, ceil for negative ones), NaN and infinite limits, float
-- loops and steps, the type rules for mixed bounds, the error messages and their order.
local NAME = "lang_integer_for"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

local maxi, mini = math.maxinteger, math.mininteger

-- Runs `for i = a, b, c` (c omitted when nil), stopping after `cap` iterations; returns
-- the iteration count and the visited values joined by spaces (the first eight).
local function trace(a, b, c, cap)
  cap = cap or 100
  local n, seen = 0, {}
  local function visit(i)
    n = n + 1
    if n <= 8 then seen[n] = string.format(math.type(i) == "integer" and "%d" or "%.17g:f", i) end
    return n >= cap
  end
  if c == nil then
    for i = a, b do if visit(i) then break end end
  else
    for i = a, b, c do if visit(i) then break end end
  end
  return n, table.concat(seen, " ")
end
local function count(a, b, c, cap) return (trace(a, b, c, cap)) end

-- Runs `src` as a chunk named "src" and returns its error message or "no error".
local function runError(src)
  local f, msg = load(src, "=src")
  if not f then return "syntax: " .. msg end
  local ok, err = pcall(f)
  return ok and "no error" or tostring(err)
end

-- ---- integer loops near the ends of the range ----------------------------------------
eq(count(maxi, maxi), 1, "maxinteger to maxinteger")
eq(count(mini, mini, -1), 1, "mininteger to mininteger downwards")
eq(count(maxi - 1, maxi), 2, "maxinteger - 1 to maxinteger")
eq(count(mini + 1, mini, -1), 2, "mininteger + 1 down to mininteger")
eq(count(maxi - 5, maxi, 2), 3, "step 2 ending below maxinteger")
eq(count(maxi - 4, maxi, 2), 3, "step 2 landing on maxinteger")
eq(count(mini + 5, mini, -2), 3, "step -2 ending above mininteger")
eq(count(maxi, mini), 0, "maxinteger to mininteger, step 1: empty")
eq(count(mini, maxi, -1), 0, "mininteger to maxinteger, step -1: empty")
eq(count(maxi, maxi - 1), 0, "one past the end: empty")
eq(count(mini, mini + 1, -1), 0, "one past the start downwards: empty")
eq(count(mini, maxi, maxi), 3, "whole range with step maxinteger")
eq(count(maxi, mini, mini), 2, "whole range downwards with step mininteger")
eq(count(maxi, mini, -maxi), 3, "whole range downwards with step -maxinteger")
eq(count(0, maxi, maxi // 2), 3, "step maxinteger // 2")
eq(count(mini, 0, maxi), 2, "mininteger to 0 with step maxinteger")
eq(count(-1, mini, mini), 1, "-1 down with step mininteger")
eq(count(0, mini, mini), 2, "0 down to mininteger with step mininteger")
eq(count(1, maxi, maxi), 1, "1 up with step maxinteger")
eq(count(mini, maxi, 1, 4), 4, "whole range step 1 (capped)")
eq(count(maxi, mini, -1, 4), 4, "whole range step -1 (capped)")
print("ends", select(2, trace(mini, maxi, maxi)))
print("ends", select(2, trace(maxi, mini, mini)))
print("ends", select(2, trace(maxi, mini, -maxi)))
print("ends", select(2, trace(maxi - 2, maxi)))
print("ends", select(2, trace(mini + 2, mini, -1)))
print("ends", select(2, trace(maxi - 10, maxi, 7)))

-- The loop variable after the last iteration is never an overflowed value.
do
  local last
  for i = maxi - 3, maxi do last = i end
  eq(last, maxi, "last value up to maxinteger")
  for i = mini + 3, mini, -1 do last = i end
  eq(last, mini, "last value down to mininteger")
  for i = maxi - 10, maxi, 3 do last = i end
  eq(last, maxi - 1, "last value with step 3")
  local nums = {}
  for i = maxi - 2, maxi do nums[#nums + 1] = i < 0 and "wrapped" or "ok" end
  eq(table.concat(nums, ","), "ok,ok,ok", "no wrap to negative")
end

-- ---- float limits in integer loops (clipped) -------------------------------------------
eq(count(1, 3.5), 3, "limit 3.5 floors to 3")
eq(count(1, 0.5), 0, "limit 0.5 floors to 0")
eq(count(3, 2.5), 0, "limit 2.5 below start")
eq(count(3, 3.5), 1, "limit 3.5 from 3")
eq(count(3, 2.5, -1), 1, "negative step: limit 2.5 ceils to 3")
eq(count(3, 1.5, -1), 2, "negative step: limit 1.5 ceils to 2")
eq(count(0, -0.5, -1), 1, "negative step: limit -0.5 ceils to 0")
eq(count(-1, -0.5, -1), 0, "negative step: start below ceil(-0.5)")
eq(count(0, -0.0), 1, "limit -0.0")
eq(count(maxi - 1, 2^63), 2, "limit 2^63 clipped to maxinteger")
eq(count(maxi - 1, 1e300), 2, "limit 1e300 clipped to maxinteger")
eq(count(maxi - 1, math.huge), 2, "limit inf clipped to maxinteger")
eq(count(mini + 1, -2^63, -1), 2, "limit -2^63 is exactly mininteger")
eq(count(mini + 1, -1e300, -1), 2, "limit -1e300 clipped to mininteger")
eq(count(mini + 1, -math.huge, -1), 2, "limit -inf clipped to mininteger")
eq(count(mini, -1e300), 0, "positive step, limit below mininteger")
eq(count(mini, -math.huge), 0, "positive step, limit -inf")
eq(count(maxi, 1e300, -1), 0, "negative step, limit above maxinteger")
eq(count(maxi, math.huge, -1), 0, "negative step, limit inf")
eq(count(1, math.huge, 1, 5), 5, "limit inf runs on (capped)")
eq(count(1, -math.huge, -1, 5), 5, "limit -inf downwards runs on (capped)")
eq(count(1 << 53, 2^53 + 2.0), 3, "float limit beyond 2^53")
eq(count(9007199254740993 - 2, 9007199254740993), 3, "integer limit 2^53 + 1 is exact")
print("clip", select(2, trace(1, 3.99)), select(2, trace(-1, -3.99, -1)))
print("clip", select(2, trace(maxi - 2, 1e19)), select(2, trace(mini + 2, -1e19, -1)))

-- NaN bounds (lua 5.4.4): an integer loop treats a NaN limit like one below mininteger;
-- a float loop skips only when the bounds compare as out of order, which NaN never
-- does, and then stops after the first iteration.
eq(count(1, 0/0), 0, "NaN limit, positive step: no iteration")
eq(count(1, 0/0, -1, 5), 5, "NaN limit, negative step: clipped to mininteger (capped)")
eq(count(1.0, 0/0), 1, "float loop, NaN limit")
eq(count(1.0, 0/0, -1), 1, "float loop, NaN limit, negative step")
eq(count(0/0, 10, 1.0), 1, "NaN initial value")
eq(count(0/0, 10), 1, "NaN initial value, integer step")
eq(count(1, 10, 0/0), 0, "NaN step, start below limit")
eq(count(10, 1, 0/0), 1, "NaN step, start above limit: one iteration")
print("nan", select(2, trace(10, 1, 0/0)), select(2, trace(1, 0/0, -1, 3)))

-- ---- float loops and float steps -------------------------------------------------------
eq(count(0, 1, 0.25), 5, "step 0.25")
eq(count(1, 0, -0.5), 3, "step -0.5")
eq(count(0.1, 1.0, 0.1), 10, "step 0.1 accumulates rounding")
eq(count(1, 3, 1.0), 3, "integer bounds, float step")
eq(count(1.0, 3), 3, "float start")
eq(count(1, 3.0, 1.0), 3, "float limit and step")
eq(count(1, 10, math.huge), 1, "infinite step runs once")
eq(count(1, 3, -math.huge), 0, "minus infinite step, empty")
eq(count(10, 1, -math.huge), 1, "minus infinite step runs once")
eq(count(math.huge, math.huge, 1, 5), 5, "inf to inf stays inf (capped)")
eq(count(-math.huge, math.huge, 1, 3), 3, "from -inf stays -inf (capped)")
eq(count(2^53, 2^53 + 4, 2.0), 3, "float steps past 2^53")
eq(count(1e308, 1.5e308, 1e308), 1, "float overflow to inf ends the loop")
eq(count(1e308, math.huge, 1e308, 5), 5, "float overflow to inf, inf limit (capped)")
eq(count(0.5, 2^63, 1, 7), 7, "float loop to 2^63 (capped)")
print("float", select(2, trace(0.1, 1.0, 0.1)))
print("float", select(2, trace(1, 0, -0.25)))
print("float", select(2, trace(-0.0, 0, 1)))
print("float", select(2, trace(1e308, math.huge, 1e308, 3)))
print("float", select(2, trace(mini, mini + 1.0)), select(2, trace(maxi, maxi, 1.0, 3)))

-- Type rules: integer loop iff initial value and step are integers.
local function typeOf(a, b, c)
  local t = "none"
  if c == nil then for i = a, b do t = math.type(i) end
  else for i = a, b, c do t = math.type(i) end end
  return t
end
eq(typeOf(1, 2), "integer", "int int")
eq(typeOf(1, 2.5), "integer", "int start, float limit")
eq(typeOf(1, 2, 1), "integer", "int int int")
eq(typeOf(1.0, 2), "float", "float start")
eq(typeOf(1, 2, 1.0), "float", "float step")
eq(typeOf(1, 2^53, 1 << 52), "integer", "float limit beyond 2^53")
eq(typeOf("1", 2), "float", "string start converts to a float loop")
eq(typeOf(1, "2"), "integer", "string limit keeps an integer loop")
eq(typeOf(1, 2, "1"), "float", "string step converts to a float loop")
eq(count("10", "12"), 3, "numeric strings as bounds")
eq(count("0x10", 17), 2, "hex string start")
eq(count(1, " 3 "), 3, "string limit with spaces")

-- ---- the control variable is a copy ----------------------------------------------------
do
  local n, seen = 0, {}
  for i = 1, 3 do
    i = i * 10
    n = n + 1
    seen[#seen + 1] = i
  end
  eq(n, 3, "assigning the control variable does not change the count")
  eq(table.concat(seen, ","), "10,20,30", "assigned copies")
  local lim, step = 3, 1
  n = 0
  for i = 1, lim, step do lim, step = 100, 0; n = n + 1 end
  eq(n, 3, "limit and step are evaluated once")
  local fs = {}
  for i = 1, 3 do fs[i] = function() i = i + 100; return i end end
  eq(fs[1]() + fs[2]() + fs[3](), 306, "each iteration has its own variable")
  eq(fs[1](), 201, "closure keeps its own copy")
  n = 0
  for i = maxi - 1, maxi do i = mini; n = n + 1 end
  eq(n, 2, "assigning mininteger to the variable near maxinteger")
  local calls = 0
  local function f() calls = calls + 1; return 2 end
  for i = f(), f() + 1, f() - 1 do end
  eq(calls, 3, "bounds evaluated once each")
end

-- ---- errors: messages and the order of the checks --------------------------------------
eq(runError("for i = 1, 10, 0 do end"), "src:1: 'for' step is zero", "zero step")
eq(runError("for i = 1, 10, 0.0 do end"), "src:1: 'for' step is zero", "zero float step")
eq(runError("for i = 1, 10, -0.0 do end"), "src:1: 'for' step is zero", "minus zero step")
eq(runError("for i = 1.5, 10, 0 do end"), "src:1: 'for' step is zero", "float loop zero step")
eq(runError("for i = 10, 1, 0 do end"), "src:1: 'for' step is zero", "zero step on an empty range")
eq(runError("for i = 1, 'x', 0 do end"), "src:1: 'for' step is zero", "integer loop: step checked before limit")
eq(runError("for i = nil, 2 do end"), "src:1: bad 'for' initial value (number expected, got nil)", "nil start")
eq(runError("for i = 'a', 2 do end"), "src:1: bad 'for' initial value (number expected, got string)", "string start")
eq(runError("for i = {}, 2 do end"), "src:1: bad 'for' initial value (number expected, got table)", "table start")
eq(runError("for i = 1, nil do end"), "src:1: bad 'for' limit (number expected, got nil)", "nil limit")
eq(runError("for i = 1, true do end"), "src:1: bad 'for' limit (number expected, got boolean)", "boolean limit")
eq(runError("for i = 1.5, nil do end"), "src:1: bad 'for' limit (number expected, got nil)", "float loop nil limit")
eq(runError("for i = 1, 2, true do end"), "src:1: bad 'for' step (number expected, got boolean)", "boolean step")
eq(runError("for i = 1, 2, 'x' do end"), "src:1: bad 'for' step (number expected, got string)", "string step")
eq(runError("for i = nil, nil, nil do end"), "src:1: bad 'for' limit (number expected, got nil)", "float loop: limit first")
eq(runError("for i = nil, 2, nil do end"), "src:1: bad 'for' step (number expected, got nil)", "float loop: step before start")
eq(runError("for i = 'x', 1, 0 do end"), "src:1: bad 'for' initial value (number expected, got string)", "float loop: start before zero step")
eq(runError("for i = 1, setmetatable({}, {__lt = function() return true end}) do end"),
   "src:1: bad 'for' limit (number expected, got table)", "metamethods do not help")
eq(runError("local t = {}\nfor i = 1,\n t do end"), "src:3: bad 'for' limit (number expected, got table)", "line of the error (the 'do')")
eq(runError("for i = 1, 2, print do end"), "src:1: bad 'for' step (number expected, got function)", "function step")

-- The body never ran when the loop errored.
do
  local ran = false
  pcall(function() for i = 1, 2, 0 do ran = true end end)
  eq(ran, false, "zero-step body does not run")
end

T.done()
