-- Errors (manual §2.3, §6.1): exact messages with variable kinds, error levels and
-- positions, non-string error values, xpcall handlers, argument errors of the base library.
local NAME = "lang_errors"
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

-- Variable kinds in messages.
local localTable
eq(bare(function() return localTable.x end), "attempt to index a nil value (upvalue 'localTable')", "upvalue")
eq(bare(function() local l; return l.x end), "attempt to index a nil value (local 'l')", "local")
eq(bare(function() return undefinedGlobal.x end), "attempt to index a nil value (global 'undefinedGlobal')", "global")
eq(bare(function() local t = {} return t.a.b end), "attempt to index a nil value (field 'a')", "field")
eq(bare(function() local t = {} t:method() end), "attempt to call a nil value (method 'method')", "method")
eq(bare(function() undefinedFn() end), "attempt to call a nil value (global 'undefinedFn')", "call global")
eq(bare(function() local t = {} t.f() end), "attempt to call a nil value (field 'f')", "call field")
eq(bare(function() local s = "x" return s.y.z end), "attempt to index a nil value (field 'y')", "string field")
eq(bare(function() return ("x")() end), "attempt to call a string value (constant 'x')", "call a constant")
eq(bare(function() return #nil end), "attempt to get length of a nil value", "length of nil")
eq(bare(function() local n = 5 return #n end), "attempt to get length of a number value (local 'n')", "length of a local")
eq(bare(function() local t = {} t[1][2] = 3 end), "attempt to index a nil value (field 'integer index')", "integer key field")
eq(bare(function() return 1 + {} end), "attempt to perform arithmetic on a table value", "arith on table constant")
eq(bare(function() local t = {} return t.x + 1 end), "attempt to perform arithmetic on a nil value (field 'x')", "arith on field")
eq(bare(function() return -undefinedGlobal end), "attempt to perform arithmetic on a nil value (global 'undefinedGlobal')", "unm on global")
eq(bare(function() local a = {} return a < 1 end), "attempt to compare table with number", "compare")
eq(bare(function() local up = {}; return (function() return up() end)() end), "attempt to call a table value (upvalue 'up')", "call upvalue")
eq(bare(function() string.nofunc() end), "attempt to call a nil value (field 'nofunc')", "call library field")
eq(bare(function() local t = setmetatable({}, {__index = function(t, k) return nil end}) t.x.y = 1 end),
   "attempt to index a nil value (field 'x')", "index result of __index")
eq(bare(function() local a = "str" .. {} end), "attempt to concatenate a table value", "concat table")

-- error(): levels and positions.
local thisFile = debug.getinfo(1, "S").short_src
local function lineOf() return debug.getinfo(2, "l").currentline end
local function lvl1() error("level one") end
local line = lineOf() + 1
eq(msgOf(lvl1), thisFile .. ":" .. (line - 2) .. ": level one", "level 1 is the error call")
local function lvl2() error("level two", 2) end
local function callsLvl2() lvl2() end
line = lineOf()
eq(msgOf(callsLvl2), thisFile .. ":" .. (line - 1) .. ": level two", "level 2 is the caller")
eq(msgOf(error, "no position", 0), "no position", "level 0 adds nothing")
eq(msgOf(function() error("plain", 0) end), "plain", "level 0 from Lua")
local tableErr = {code = 1}
eq(msgOf(error, tableErr), tableErr, "error with a table value")
eq(msgOf(function() error(tableErr) end), tableErr, "tables get no position")
eq(msgOf(function() error() end), nil, "error() raises nil")
eq(msgOf(function() error(42) end), 42, "numbers get no position")
eq(msgOf(function() error("x", 3) end) ~= nil, true, "level beyond the caller")
eq(select("#", pcall(error)), 2, "pcall(error) returns false and nil")

-- pcall and xpcall.
local okA, a1, a2 = pcall(function(x, y) return x + y, "second" end, 1, 2)
eq(okA and a1 == 3 and a2 == "second", true, "pcall passes arguments and results")
eq(select("#", pcall(function() end)), 1, "pcall of nothing returns just true")
local okX, hx = xpcall(function() error("orig") end, function(m) return "handled: " .. m:gsub("^[^:]*:%d+: ", "") end)
eq(okX, false, "xpcall reports failure")
eq(hx, "handled: orig", "handler result returned")
local okX2, r1, r2 = xpcall(function(a, b) return a * b, "ok" end, print, 6, 7)
eq(okX2 and r1 == 42 and r2 == "ok", true, "xpcall success with arguments")
local tb
xpcall(function() error("with traceback") end, function(m) tb = debug.traceback(m, 1) end)
check(tb:match("with traceback\nstack traceback:\n") ~= nil, "handler may build a traceback")
local okH, eH = xpcall(function() error("first") end, function(m) error("in handler") end)
eq(okH, false, "error in the handler")
check(eH ~= nil, "error in the handler yields a value")
local okN = pcall(pcall)
eq(okN, false, "pcall without a function argument")
eq(bare(pcall), "bad argument #1 to 'pcall' (value expected)", "pcall() message")
eq(bare(xpcall, print), "bad argument #2 to 'xpcall' (function expected, got no value)", "xpcall without handler")
local depth = 0
local function nested() depth = depth + 1; if depth < 50 then return pcall(nested) end error("deep") end
local results = table.pack(nested())
eq(results.n, 50, "nested pcalls return every level's status")
eq(results[49], false, "the innermost pcall failed")
check(tostring(results[50]):match("deep$") ~= nil, "innermost error")

-- tostring and friends.
eq(tostring(nil), "nil", "tostring(nil)")
eq(tostring(true), "true", "tostring(true)")
eq(tostring(false), "false", "tostring(false)")
eq(tostring(12), "12", "tostring(12)")
eq(tostring(-0.0), "-0.0", "tostring(-0.0)")
eq(tostring(1e300 * 1e10), "inf", "tostring(inf)")
eq(tostring(-1e300 * 1e10), "-inf", "tostring(-inf)")
check(tostring(0/0):match("^%-?nan$") ~= nil, "tostring(nan)")
check(tostring({}):match("^table: 0x%x+$") ~= nil or tostring({}):match("^table: %x+$") ~= nil, "tostring(table)")
check(tostring(print):match("^function: 0x%x+$") ~= nil, "tostring(function)")
eq(bare(tostring), "bad argument #1 to 'tostring' (value expected)", "tostring()")

-- Argument errors of the base library.
eq(bare(setmetatable, 1, {}), "bad argument #1 to 'setmetatable' (table expected, got number)", "setmetatable #1")
eq(bare(ipairs), "bad argument #1 to 'ipairs' (value expected)", "ipairs()")
eq(bare(rawget, 1), "bad argument #1 to 'rawget' (table expected, got number)", "rawget")
eq(bare(rawlen, 1), "bad argument #1 to 'rawlen' (table or string expected, got number)", "rawlen")
eq(bare(select, "x"), "bad argument #1 to 'select' (number expected, got string)", "select")
eq(bare(tonumber, "10", 99), "bad argument #2 to 'tonumber' (base out of range)", "tonumber base")
eq(bare(tonumber, 10, 16), "bad argument #1 to 'tonumber' (string expected, got number)", "tonumber with a base wants a string")
eq(bare(string.rep), "bad argument #1 to 'string.rep' (string expected, got no value)", "string.rep()")
eq(bare(string.sub, "x", "a"), "bad argument #2 to 'string.sub' (number expected, got string)", "string.sub")
eq(bare(string.char, 256), "bad argument #1 to 'string.char' (value out of range)", "string.char")
eq(bare(math.floor, "x"), "bad argument #1 to 'math.floor' (number expected, got string)", "math.floor")
eq(bare(string.format, "%d", 1.5), "bad argument #2 to 'string.format' (number has no integer representation)", "format %d")
eq(bare(table.insert, {}, 1, 2, 3), "wrong number of arguments to 'insert'", "table.insert")
eq(bare(table.concat, {{}}), "invalid value (table) at index 1 in table for 'concat'", "table.concat")
eq(bare(("x").rep, "x", -1, 5), "no error", "negative rep count is fine")
eq(bare(function() local s = "abc"; return s:bad() end), "attempt to call a nil value (method 'bad')", "string method")
eq(bare(load, {}), "bad argument #1 to 'load' (function expected, got table)", "load({})")
eq(select(2, load(5)), [[[string "5"]:1: unexpected symbol near '5']], "load(5) loads the string '5'")
local lf, lm = load("return +", "=chunk")
eq(lf, nil, "load returns nil on a syntax error")
eq(lm, "chunk:1: unexpected symbol near '+'", "with the message")
eq(select(2, load("x =", "=(load)")), "(load):1: unexpected symbol near <eof>", "load message at eof")
eq(select(2, load("return 1", "=b", "b")), "attempt to load a text chunk (mode is 'b')", "load mode")
eq(select(2, load(string.dump(function() end), "=t", "t")), "attempt to load a binary chunk (mode is 't')", "load binary as text")

-- A call is named by the instruction that makes it: a metamethod that is not callable by
-- its event, a callee whose __call is not callable by the callee's name.
local function chunkError(src)
  local ok, m = pcall(assert(load(src, "=c")))
  return ok and "no error" or (tostring(m):gsub("^c:%d+: ", ""))
end
eq(chunkError("local a = setmetatable({}, {__add = 34}); a = a + 1"),
   "attempt to call a number value (metamethod 'add')", "uncallable __add")
eq(chunkError("local a = setmetatable({}, {__lt = {}}); return a > a"),
   "attempt to call a table value (metamethod 'lt')", "uncallable __lt")
eq(chunkError("local a = setmetatable({}, {__concat = true}); return a .. 'x'"),
   "attempt to call a boolean value (metamethod 'concat')", "uncallable __concat")
eq(chunkError("local a = setmetatable({}, {__unm = 1}); return -a"),
   "attempt to call a number value (metamethod 'unm')", "uncallable __unm")
eq(chunkError("local a = setmetatable({}, {__call = 34}); return a()"),
   "attempt to call a number value (local 'a')", "uncallable __call names the callee")
eq(chunkError("local a <close> = setmetatable({}, {__close = print}); getmetatable(a).__close = nil"),
   "attempt to call a nil value (metamethod 'close')", "__close removed before closing")
eq(chunkError("for k in 42 do end"), "attempt to call a number value (for iterator 'for iterator')",
   "uncallable for iterator")
eq(chunkError("return pcall(nil)"), "no error", "pcall of nil is caught")
eq(select(2, pcall(nil)), "attempt to call a nil value", "pcall of nil names nothing")
-- The __gc of files checks its argument like the other file methods.
eq(chunkError("getmetatable(io.stdout).__gc()"), "bad argument #1 to '__gc' (FILE* expected, got no value)",
   "file __gc without a file")

-- Functions without debug information (string.dump with strip): a runtime error is placed
-- at "?:-1:", error() adds no position, and the source is "=?" whatever name load gave.
do
  local function stripped(f, name) return assert(load(string.dump(f, true), name)) end
  eq(select(2, pcall(stripped(function(a) return a + 1 end), {})),
     "?:-1: attempt to perform arithmetic on a table value", "stripped runtime error")
  eq(select(2, pcall(stripped(function() local a; a = {}; return a + 2 end))),
     "?:-1: attempt to perform arithmetic on a table value", "stripped, value moved to a local")
  eq(select(2, pcall(stripped(function() error("plain") end))), "plain", "stripped error() has no position")
  eq(select(2, pcall(stripped(load("local x = ...; return x.y"), "=named"))),
     "?:-1: attempt to index a nil value", "stripped chunk loaded under a name")
  local info = debug.getinfo(stripped(function() end), "S")
  eq(info.source .. " " .. info.short_src, "=? ?", "stripped source")
  eq(stripped(function() return debug.getinfo(1, "l").currentline end)(), -1, "stripped current line")
  local tb = stripped(function() return debug.traceback("tb", 1) end)()
  eq(tb:match("\n\t([^\n]*)"):gsub("%d+", "N"), "?: in function <?:N>", "stripped traceback line has no line number")
end

-- assert raises its message (by default "assertion failed!") as error() would: a string
-- is placed at its caller; called directly by pcall (no Lua caller) it has no position.
do
  local ok, m = pcall(function() assert(false) end)
  local here = debug.getinfo(1, "l").currentline - 1
  eq(m, "lang_errors.lua:" .. here .. ": assertion failed!", "assert(false) message has a position")
  eq(select(2, pcall(assert, false)), "assertion failed!", "assert called by pcall has none")
  eq(bare(function() assert(nil, "given") end), "given", "a given string message")
  check(select(2, pcall(function() assert(nil, "given") end)):match("^lang_errors.lua:%d+: given$"),
        "a given string message is placed at the caller")
  eq(select(2, pcall(assert, false, "X", {})), "X", "given message, assert called by pcall")
  eq(select(2, pcall(function() assert(false, 42) end)), 42, "a number message is raised as is")
  local t = {}
  eq(select(2, pcall(assert, false, t)), t, "a non-string message is raised as is")
end

T.done()
