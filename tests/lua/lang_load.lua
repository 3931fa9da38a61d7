-- Loading chunks (manual §6.1 load, loadfile, dofile; string.dump): string and reader
-- chunks, chunk names in messages, modes, env, binary round trips and corrupt chunks.
local NAME = "lang_load"
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

local function strip(m) return type(m) == "string" and (m:gsub('^.-:%d+: ', "")) or m end

-- String chunks.
eq(load("return 1 + 1")(), 2, "string chunk")
eq(load("return ...")(7, 8), 7, "chunk is vararg")
eq(select("#", load("return ...")(1, 2, 3)), 3, "all varargs")
local f, err = load("return + ")
eq(f, nil, "syntax error gives nil")
eq(err, [[[string "return + "]:1: unexpected symbol near '+']], "default chunk name is the source")
eq(select(2, load("x = ", "=mychunk")), "mychunk:1: unexpected symbol near <eof>", "=name")
eq(select(2, load("x = ", "@file.lua")), "file.lua:1: unexpected symbol near <eof>", "@name")
eq(select(2, load("\n\nx = = 1", "=lines")), "lines:3: unexpected symbol near '='", "line numbers")
eq(select(2, load("x = 'unfinished")), [[[string "x = 'unfinished"]:1: unfinished string near <eof>]], "unfinished string")
eq(select(2, load(("x"):rep(100) .. " = = 1")), '[string "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..."]:1: unexpected symbol near \'=\'', "long source name is cut")
eq(select(2, load("a\nb = = 1")), [[[string "a..."]:2: syntax error near 'b']], "multi-line source name")
eq(strip(msgOf(load("error('e1')", "=named"))), "e1", "runtime error in a loaded chunk")
eq(msgOf(load("error('e2')", "=named")), "named:1: e2", "runtime error position uses the chunk name")
eq(msgOf(load("local x = nil; return x.y", "@some/file.lua")), "some/file.lua:1: attempt to index a nil value (local 'x')", "runtime error with @name")

-- Function chunks (reader).
do
  local parts = {"return ", "1", " + ", "41"}
  local i = 0
  local g = load(function() i = i + 1; return parts[i] end)
  eq(g(), 42, "reader pieces")
  local calls = 0
  load(function() calls = calls + 1; return nil end)
  eq(calls, 1, "reader stops at nil")
  local h = load(function() return "" end)
  eq(type(h), "function", "empty piece ends: empty chunk")
  eq(h(), nil, "empty chunk returns nothing")
  local n, msg = load(function() return {} end)
  eq(n, nil, "reader returning a non-string")
  -- raised inside the reader call, so an active message handler (lua.c's) sees it
  check(msg:find("reader function must return a string", 1, true) ~= nil, "its message")
  local n2, msg2 = load(function() error("reader failed") end)
  eq(n2, nil, "reader error returns nil")
  check(strip(msg2):find("^reader failed") ~= nil, "reader error message")
  eq(select(2, load(function() return nil end, "=rd")), nil, "empty reader: no error")
  local once = false
  eq(select(2, load(function() if once then return nil end once = true return "x =" end, "=rd")), "rd:1: unexpected symbol near <eof>", "reader chunk name")
  eq(select(2, load(function() if once then return nil end once = true return "x =" end)), nil, "second load sees nil at once")
  once = false
  eq(select(2, load(function() if once then return nil end once = true return "x =" end)), "(load):1: unexpected symbol near <eof>", "default reader name")
end

-- Argument errors.
eq(strip(msgOf(load, {})), "bad argument #1 to 'load' (function expected, got table)", "load table")
eq(strip(msgOf(load, nil)), "bad argument #1 to 'load' (function expected, got nil)", "load nil")
eq(strip(msgOf(load)), "bad argument #1 to 'load' (function expected, got no value)", "load nothing")
eq(select(2, load(12)), [[[string "12"]:1: unexpected symbol near '12']], "numbers are strings")
eq(load("return 1", "n", "t", nil) ~= nil, true, "nil env allowed")
eq(strip(msgOf(load, "x", "n", {})), "bad argument #3 to 'load' (string expected, got table)", "mode type")

-- Modes.
local dumped = string.dump(function() return "dumped" end)
eq(select(2, load("return 1", "=c", "b")), "attempt to load a text chunk (mode is 'b')", "text under b")
eq(select(2, load(dumped, "=c", "t")), "attempt to load a binary chunk (mode is 't')", "binary under t")
eq(load(dumped, "=c", "b")(), "dumped", "binary under b")
eq(load(dumped, "=c", "bt")(), "dumped", "binary under bt")
eq(load("return 2", "=c", "bt")(), 2, "text under bt")
eq(select(2, load("return 1", "=c", "x")), "attempt to load a text chunk (mode is 'x')", "unknown mode")
eq(select(2, load(dumped, "=c", "")), "attempt to load a binary chunk (mode is '')", "empty mode")

-- The env parameter is the first upvalue.
do
  local env = {y = 5}
  local g = load("x = 10; return y", "=env", "t", env)
  eq(g(), 5, "reads from env")
  eq(env.x, 10, "writes to env")
  eq(rawget(_G, "x"), nil, "not to _G")
  local g2 = load("return print", "=env", "t", {})
  eq(g2(), nil, "empty env")
  local g3 = load("return _ENV", "=env", "t", env)
  eq(g3(), env, "_ENV is env")
  local g4 = load("local function f() return z end return f()", "=env", "t", {z = "deep"})
  eq(g4(), "deep", "nested functions see env")
  local n = load("return x", "=env", "t", nil)
  eq(strip(msgOf(n)), "attempt to index a nil value (upvalue '_ENV')", "nil env")
  local dumpedEnv = string.dump(load("return tag"))
  eq(load(dumpedEnv, "=d", "b", {tag = "binary env"})(), "binary env", "env with a binary chunk")
  local g5 = load("return tag")
  eq(g5(), nil, "default env is _G")
end

-- string.dump round trips.
do
  local function adder(a, b) local s = a + b; return s, "sum" end
  local back = load(string.dump(adder))
  local r1, r2 = back(2, 3)
  eq(r1, 5, "dumped function works")
  eq(r2, "sum", "constants survive")
  local stripped = load(string.dump(adder, true))
  eq(stripped(1, 1), 2, "stripped dump works")
  local withFloat = load(string.dump(function() return 1.5, 1 << 62, "\0bin\255", nil, true end))
  local a, b, c, d, e = withFloat()
  eq(a, 1.5, "float constant")
  eq(b, 1 << 62, "integer constant")
  eq(c, "\0bin\255", "binary string constant")
  eq(e, true, "boolean constant")
  local nested = load(string.dump(function() local function inner(x) return x * 2 end return inner(21) end))
  eq(nested(), 42, "nested prototypes")
  eq(strip(msgOf(string.dump, print)), "unable to dump given function", "cannot dump a native")
  local up = 1
  local withUp = load(string.dump(function() return up end))
  eq(withUp(), _G, "the first upvalue becomes the globals")
  local named = load(string.dump(function() error("in dumped") end), "=whatever")
  check(msgOf(named):find("in dumped", 1, true) ~= nil, "dumped function errors")
end

-- Corrupt binary chunks: an error message, never a crash.
do
  local good = string.dump(function(x) return x + 1 end)
  local cases = {
    good:sub(1, 5),
    good:sub(1, 20),
    good:sub(1, #good - 3),
    "\27Lua",
    "\27Lua\84\0",
    "\27Lua\83" .. good:sub(6),
    good:sub(1, 12) .. "\0\0\0\0" .. good:sub(17),
    good:sub(1, 30) .. ("\255"):rep(8) .. good:sub(39),
  }
  for i, chunk in ipairs(cases) do
    local fn, msg = load(chunk, "=bad", "b")
    eq(fn, nil, "corrupt chunk " .. i .. " rejected")
    eq(type(msg), "string", "corrupt chunk " .. i .. " message")
  end
  local _, m1 = load(good:sub(1, 5), "=bad")
  eq(m1, "bad: bad binary format (truncated chunk)", "truncated message")
  local _, m2 = load("\27Lua\83" .. good:sub(6), "=bad")
  eq(m2, "bad: bad binary format (version mismatch)", "version message")
  local _, m3 = load("\27Lub" .. good:sub(5), "=bad")
  eq(m3, "bad: bad binary format (not a binary chunk)", "signature message")
end

-- loadfile and dofile with a temporary file.
do
  local name = os.tmpname()
  local fh = assert(io.open(name, "w"))
  fh:write("#!/usr/bin/env lua\nlocal a, b = ...\nreturn (a or 0) + (b or 0), 'from file'\n")
  fh:close()
  local lf = loadfile(name)
  local r1, r2 = lf(20, 22)
  eq(r1, 42, "loadfile result")
  eq(r2, "from file", "loadfile second result")
  local d1, d2 = dofile(name)
  eq(d1, 0, "dofile runs without arguments")
  eq(d2, "from file", "dofile results")
  local envFile = loadfile(name, "t", {})
  eq(select(2, envFile()), "from file", "loadfile with env")
  eq(select(2, loadfile(name, "b")), "attempt to load a text chunk (mode is 'b')", "loadfile mode")
  fh = assert(io.open(name, "w"))
  fh:write("local x = \n\n= 2")
  fh:close()
  local nf, msg = loadfile(name)
  eq(nf, nil, "loadfile syntax error")
  eq(msg, name .. ":3: unexpected symbol near '='", "loadfile message names the file")
  eq(msgOf(dofile, name), name .. ":3: unexpected symbol near '='", "dofile raises it")
  fh = assert(io.open(name, "w"))
  fh:write("error('raised in file')")
  fh:close()
  eq(msgOf(dofile, name), name .. ":1: raised in file", "dofile propagates runtime errors")
  fh = assert(io.open(name, "wb"))
  fh:write(string.dump(function() return "binary file" end))
  fh:close()
  eq(loadfile(name)(), "binary file", "loadfile of a binary chunk")
  eq(dofile(name), "binary file", "dofile of a binary chunk")
  os.remove(name)
  local missing, mmsg = loadfile(name)
  eq(missing, nil, "missing file")
  eq(mmsg, "cannot open " .. name .. ": No such file or directory", "missing file message")
  eq(strip(msgOf(dofile, name)), "cannot open " .. name .. ": No such file or directory", "dofile of a missing file")
end

T.done()
