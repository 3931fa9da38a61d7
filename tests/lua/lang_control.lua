-- Control flow (manual §3.3): goto and labels, numeric for loops (integer loops near
-- maxinteger never overflow, float steps), generic for with a closing value, break.
local NAME = "lang_control"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function loadError(src)
  local f, msg = load(src, "=src")
  return f == nil and msg or "loaded"
end

-- goto and labels.
local out = {}
do
  local i = 1
  ::top::
  out[#out + 1] = i
  i = i + 1
  if i <= 3 then goto top end
end
eq(table.concat(out, ","), "1,2,3", "backward goto loop")
for i = 1, 3 do
  for j = 1, 3 do
    if j == 2 then goto continue end
    out[#out + 1] = i * 10 + j
    ::continue::
  end
end
eq(table.concat(out, ","), "1,2,3,11,13,21,23,31,33", "goto continue")
do
  goto skip
  out = nil
  ::skip::
end
check(out ~= nil, "forward goto skips code")
local closures = {}
do
  local k = 0
  ::again::
  local captured = k
  closures[#closures + 1] = function() return captured end
  k = k + 1
  if k < 3 then goto again end
end
eq(closures[1]() + closures[3](), 2, "goto backward makes fresh locals")
eq(loadError("goto nowhere"), "src:1: no visible label 'nowhere' for <goto> at line 1", "missing label")
eq(loadError("::a:: ::a::"), "src:1: label 'a' already defined on line 1", "duplicate label")
eq(loadError("goto f; local x; ::f:: print(x)"), "src:1: <goto f> at line 1 jumps into the scope of local 'x'", "jump into scope")
eq(loadError("do goto f; local x; ::f:: end"), "loaded", "label at the end of a block is fine")
eq(loadError("::l:: do ::l:: end"), "src:1: label 'l' already defined on line 1", "labels visible in nested blocks (5.4)")
eq(loadError("for i = 1, 2 do break break end"), "loaded", "break twice parses")
eq(loadError("break"), "src:1: break outside loop at line 1", "break outside a loop")

-- Numeric for: integer loops.
local n = 0
for i = 1, 10 do n = n + i end
eq(n, 55, "1..10")
n = 0
for i = 10, 1, -3 do n = n * 100 + i end
eq(n, 10070401, "negative step")
n = 0
for i = 1, 0 do n = n + 1 end
eq(n, 0, "empty range")
n = 0
for i = math.maxinteger - 2, math.maxinteger do n = n + 1 end
eq(n, 3, "loop up to maxinteger stops without overflow")
n = 0
for i = math.mininteger + 2, math.mininteger, -1 do n = n + 1 end
eq(n, 3, "loop down to mininteger stops")
n = 0
for i = math.maxinteger - 10, math.maxinteger, 7 do n = n + 1 end
eq(n, 2, "step overshooting maxinteger")
n = 0
for i = 1, math.maxinteger, math.maxinteger do n = n + 1 end
eq(n, 1, "huge step")
n = 0
for i = math.mininteger, math.mininteger + 20, math.maxinteger do n = n + 1 end
eq(n, 1, "from mininteger with a huge step")
n = 0
for i = 0, 5.5 do n = n + 1 end
eq(n, 6, "float limit clipped for integer loop")
local ty
for i = 1, 2 do ty = math.type(i) end
eq(ty, "integer", "integer loop variable")
for i = 1, 3.5 do ty = math.type(i) end
eq(ty, "integer", "integer start and step with a float limit stay integer")
for i = 1.0, 2 do ty = math.type(i) end
eq(ty, "float", "float start makes a float loop")
n = 0
for i = 3, 1.5, -1 do n = n + i end
eq(n, 5, "float limit with a negative step")
n = 0
for i = 1, math.huge do n = n + 1; if n == 5 then break end end
eq(n, 5, "infinite float limit with an integer loop")
n = 0
for i = 1, -math.huge do n = n + 1 end
eq(n, 0, "minus infinite limit")
for i = 1, 3 do local i = i * 2; n = n + i end
eq(n, 12, "loop variable shadowed in the body")
eq(select(2, pcall(function() for i = 1, 10, 0 do end end)):match("'for' step is zero") ~= nil, true, "zero step")
local function errorOf(f)
  local ok, msg = pcall(f)
  return not ok and tostring(msg):gsub("^[^:]*:%d+: ", "") or "no error"
end
eq(errorOf(function() for i = "a", 2 do end end), "bad 'for' initial value (number expected, got string)", "bad initial")
eq(errorOf(function() for i = 1, {} do end end), "bad 'for' limit (number expected, got table)", "bad limit")
eq(errorOf(function() for i = 1, 2, "x" do end end), "bad 'for' step (number expected, got string)", "bad step")
n = 0
for i = "1", "3" do n = n + 1 end
eq(n, 3, "numeric strings are converted by the for loop")

-- Float loops.
local acc = {}
for x = 0, 1, 0.25 do acc[#acc + 1] = x end
eq(#acc, 5, "float step 0.25")
eq(acc[5], 1.0, "float loop reaches the limit exactly")
acc = {}
for x = 1, 0, -0.5 do acc[#acc + 1] = x end
eq(table.concat(acc, " "), "1.0 0.5 0.0", "negative float step")
n = 0
for x = 0.1, 1.0, 0.1 do n = n + 1 end
check(n == 10 or n == 9, "accumulated float steps")
eq(n, 10, "0.1 steps: computed by repeated addition, as lua")

-- Generic for: iterator protocol and the closing value.
local function range(k)
  return function(s, c) if c < k then return c + 1 end end, nil, 0
end
n = 0
for i in range(4) do n = n + i end
eq(n, 10, "stateless iterator")
local closed = {}
local function closingIter()
  local tbc = setmetatable({}, {__close = function(_, e) closed[#closed + 1] = e == nil and "ok" or "err" end})
  local i = 0
  return function() i = i + 1; if i <= 3 then return i end end, nil, nil, tbc
end
n = 0
for i in closingIter() do n = n + i end
eq(n, 6, "iterator with a closing value")
eq(closed[1], "ok", "closing value closed at loop end")
for i in closingIter() do if i == 2 then break end end
eq(closed[2], "ok", "closed on break")
local function early() for i in closingIter() do if i == 1 then return "r" end end end
eq(early(), "r", "return from inside the loop")
eq(closed[3], "ok", "closed on return")
pcall(function() for i in closingIter() do error("x") end end)
eq(closed[4], "err", "closed on error, with the error")
eq(select(2, pcall(function() for i in 1 do end end)):match("attempt to call a number value") ~= nil, true, "non-function iterator")
local keys = {}
for k, v in next, {10, 20} do keys[#keys + 1] = k + v end
eq(keys[1] + keys[2], 33, "for with next directly")

-- while / repeat / break.
n = 0
while true do n = n + 1; if n >= 7 then break end end
eq(n, 7, "while true with break")
n = 0
repeat local z = n; n = n + 1 until z >= 3
eq(n, 4, "repeat scope includes until")
local found
for i = 1, 10 do
  for j = 1, 10 do
    if i * j == 42 then found = i .. "x" .. j; break end
  end
  if found then break end
end
eq(found, "6x7", "break only leaves the inner loop")

-- if / elseif chains.
local function classify(v)
  if v < 0 then return "neg" elseif v == 0 then return "zero" elseif v < 10 then return "small" else return "big" end
end
eq(classify(-1) .. classify(0) .. classify(5) .. classify(50), "negzerosmallbig", "elseif chain")

T.done()
