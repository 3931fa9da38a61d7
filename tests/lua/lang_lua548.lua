-- weft-only
-- Lua 5.4.8 behaviours: bugs fixed in Lua 5.4.5 to 5.4.8 that Debian's lua5.4 (5.4.4, the
-- oracle of the other scripts) still has. NAME.expected is the output of PUC-Rio's
-- Lua 5.4.8 (github lua/lua, tag v5.4.8); each section names the fix it checks.
local NAME = "lang_lua548"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

-- 5.4.8: a comparison used as the key of an upvalue table (_ENV[a < b]) is a value before
-- the table is fetched; 5.4.4 emitted the fetch between the comparison's jump and its
-- result, so the jump skipped it and the key's register was indexed instead.
do
  local t = {[true] = "yes", [false] = "no"}
  local function viaUpvalue(a, b) return t[a < b] end
  eq(viaUpvalue(1, 2), "yes", "upvalue table, true comparison key")
  eq(viaUpvalue(2, 1), "no", "upvalue table, false comparison key")
  local function viaConstants() return t[1 < 2], t[2 <= 1], t["a" == "a"] end
  local a, b, c = viaConstants()
  eq(a, "yes", "constant comparison key <")
  eq(b, "no", "constant comparison key <=")
  eq(c, "yes", "constant comparison key ==")
  _ENV[true] = "global true"
  local function viaEnv(x) return _ENV[x ~= nil], _ENV[not x] end
  local d, e = viaEnv(1)
  eq(d, "global true", "_ENV indexed by a comparison")
  eq(e, nil, "_ENV indexed by a negation")
  _ENV[true] = nil
  local function store(a, b) t[a > b] = "stored"; return t[true] end
  eq(store(3, 2), "stored", "comparison key in an assignment to an upvalue table")
end

-- 5.4.5: a break out of a generic for whose body captures a loop variable closes the
-- loop's to-be-closed value; 5.4.4 emitted the CLOSE at the level of the body's locals.
do
  local closed = 0
  local closing = setmetatable({}, {__close = function() closed = closed + 1 end})
  local captured
  for k in next, {10, 20}, nil, closing do
    captured = function() return k end
    break
  end
  eq(closed, 1, "break after a capture closes the for loop's value")
  eq(captured(), 1, "the captured loop variable survives the break")
  for _, v in ipairs({1, 2, 3}) do
    local function f() return v end
    for k in next, {1}, nil, closing do
      local function g() return k, f() end
      if v == 2 then break end
    end
  end
  eq(closed, 4, "nested loops: each inner loop closed once")
end

-- 5.4.5: a bitwise operator whose integer operand is a constant past the 256th of its
-- function (no longer a K operand) and whose other operand is computed.
do
  local src = {"local pad = {"}
  for i = 1, 300 do src[#src + 1] = i .. ".5," end
  src[#src + 1] = "} local b = ... return 1 ~ (b or 3), 1 | (b or 3), 1 & (b or 3), "
  src[#src + 1] = "(b or 3) ~ 1, 6 << (b or 3), 1 + (b or 3)"
  local f = assert(load(table.concat(src)))
  local x, o, a, x2, s, sum = f(2)
  eq(x, 3, "1 ~ (b or 3) past 256 constants")
  eq(o, 3, "1 | (b or 3) past 256 constants")
  eq(a, 0, "1 & (b or 3) past 256 constants")
  eq(x2, 3, "(b or 3) ~ 1 past 256 constants")
  eq(s, 24, "6 << (b or 3) past 256 constants")
  eq(sum, 3, "1 + (b or 3) past 256 constants")
end

-- 5.4.8: only a variable named _ENV makes an indexed name "global"; a field or a string
-- constant "_ENV" that the indexed value came from names a "field" (5.4.4 said global).
do
  local function message(src)
    local ok, m = pcall(assert(load(src, "=c")))
    return ok and "no error" or (tostring(m):gsub("^c:%d+: ", ""))
  end
  eq(message("a = {_ENV = {}}; return a._ENV.x + 1"),
     "attempt to perform arithmetic on a nil value (field 'x')", "field named _ENV")
  eq(message("return ('_ENV').x + 1"),
     "attempt to perform arithmetic on a nil value (field 'x')", "string constant _ENV")
  eq(message("return x + 1"), "attempt to perform arithmetic on a nil value (global 'x')", "the real _ENV")
  eq(message("local _ENV = {}; return x + 1"),
     "attempt to perform arithmetic on a nil value (global 'x')", "a local _ENV")
  eq(message("local _ENV = {}; return function() return y.z end"), "no error", "closure over a local _ENV")
  eq(message("local _ENV = {}; local f = function() return y.z end; return f()"),
     "attempt to index a nil value (global 'y')", "an upvalue _ENV")
  a = nil
end

-- 5.4.8: closing a coroutine whose __close closes another, and so on down a long chain,
-- nests; the chain ends in a "C stack overflow" error that close returns, where 5.4.4 went
-- on until the C stack itself overflowed. (Where the chain stops depends on the C stack
-- limit, which differs between Lua and Weft.)
do
  local closed = 0
  local coro = false
  for _ = 1, 400 do
    local previous = coro
    coro = coroutine.create(function()
      local cc <close> = setmetatable({}, {__close = function()
        closed = closed + 1
        if previous then assert(coroutine.close(previous)) end
      end})
      coroutine.yield()
    end)
    coroutine.resume(coro)
  end
  local ok, msg = coroutine.close(coro)
  eq(ok, false, "a chain of 400 closes fails")
  check(string.find(msg, "C stack overflow", 1, true) ~= nil, "with a C stack overflow: " .. tostring(msg))
  check(closed > 50 and closed < 400, "after some of the chain closed")
  eq(coroutine.status(coro), "dead", "the closed coroutine is dead")
end

-- 5.4.6: a call is on the line where its arguments start, not where the called
-- expression starts (5.4.4 put "a\n(\n23)" on line 1).
do
  local function lineOf(src)
    local ok, m = pcall(assert(load(src, "=c")))
    return ok and "no error" or tonumber(tostring(m):match("^c:(%d+):"))
  end
  callMe = {}
  eq(lineOf("callMe\n(\n23)"), 2, "call with ( on the next line")
  eq(lineOf("local a = {x = 13}\na\n.\nx\n(\n23\n)"), 5, "field call with ( four lines down")
  eq(lineOf("callMe\n'str'"), 2, "string-argument call")
  eq(lineOf("callMe\n{}"), 2, "table-argument call")
  eq(lineOf("local o = {}\no:m\n(1)"), 3, "method call")
  eq(lineOf("local o = {m = 1}\no\n:m(1)"), 3, "method call, name and ( on one line")
  eq(lineOf("callMe(\n1,\n2)"), 1, "arguments spanning lines")
  callMe = nil
  local ok, m = load("f(\n1,\n2", "=c")
  eq(m, "c:3: ')' expected (to close '(' at line 1) near <eof>", "unclosed ( names its own line")
  ok, m = load("f\n(\n1,\n2", "=c")
  eq(m, "c:4: ')' expected (to close '(' at line 2) near <eof>", "unclosed ( on a later line")
end

-- 5.4.8 (5.4.4 loses it): the result of a __concat inside a chain of three or more
-- operands, at a call's argument and in a loop (lang_concat.lua, which the 5.4.4 oracle
-- checks, keeps its __concat chains to two operands).
do
  local mt = {__concat = function(a, b)
    return (type(a) == "table" and "T" or a) .. "+" .. (type(b) == "table" and "T" or b)
  end}
  local t = setmetatable({}, mt)
  eq(tostring("<" .. t .. ">" .. 3000), "<T+>3000", "__concat inside a chain")
  local last
  for round = 1, 3 do
    local v = round < 3 and round or t
    last = "<" .. v .. ">" .. round
  end
  eq(last, "<T+>3", "__concat inside a chain, in a loop")
end

T.done()
