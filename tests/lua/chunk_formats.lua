-- Binary chunks in Lua 5.4's format (string.dump; load, loadfile and dofile of binary
-- chunks): luac's header, constants of every tag, relative and absolute line info, local
-- and upvalue names, stripping, redumps that reproduce the bytes, and Lua's messages for
-- bad chunks. The hex dumps below are lua5.4's (the oracle run prints the same), so they
-- hold Weft's writer to luac's bytes; tests/chunks/luac_oracle.py adds the checks across
-- interpreters (luac5.4's files under weft, Weft's dumps under lua5.4).
local T = dofile("helpers/check.lua")("chunk_formats")
local eq, check = T.eq, T.check

local function hex(s)
  local out = {}
  for i = 1, #s, 32 do
    out[#out + 1] = (s:sub(i, i + 31):gsub(".", function(c) return string.format("%02x", c:byte()) end))
  end
  return table.concat(out, "\n")
end

local function show(title, bytes)
  print(title .. " (" .. #bytes .. " bytes)")
  print(hex(bytes))
end

-- The header: signature, version, format, LUAC_DATA, sizes, LUAC_INT and LUAC_NUM.
do
  local header = string.pack("<c4BBc6BBBi8d", "\27Lua", 0x54, 0, "\x19\x93\r\n\x1a\n", 4, 8, 8, 0x5678, 370.5)
  local d = string.dump(load("return 1", "=h"))
  eq(d:sub(1, #header), header, "luac's header")
  eq(d:byte(#header + 1), 1, "the main function's upvalue count (_ENV)")
  eq(string.dump(function() return 1 end):byte(#header + 1), 0, "a function without upvalues")
end

-- Byte for byte: constants of each tag (nil, false, true, integer, float, short and long
-- string), nested functions (their source inherited from the parent), upvalues, varargs.
show("constants", string.dump(load([[
local t = {nil, false, true, 42, -0.5, math.huge, "short", ("long"):rep(11)}
t.k = 1 << 62
return t
]], "=constants")))
show("nested", string.dump(load([[
local a, b = 1, 2
local function f(x, ...)
  local c = a + x + select("#", ...)
  return function(y) b = b + y + c return b end
end
return f
]], "=nested")))
show("nested, stripped", string.dump(load([[
local a = 1
return function(x) a = a + x return a end
]], "=stripped"), true))

-- Lines: a run of more than 128 instructions on one line, and gaps of more than 127
-- lines, need absolute entries; a loaded chunk reports the same lines as its source.
do
  local src = "local x = 0\n" .. string.rep("x = x + 1 ", 70) .. "\n" .. string.rep("\n", 200) ..
              "local function boom() error('at 203') end\n" .. string.rep("\n", 130) ..
              "return function() local y = x + nil end, boom\n"
  local f = load(src, "=lines")
  local bytes = string.dump(f)
  show("lines, the end", bytes:sub(-200))
  print("lines: " .. #bytes .. " bytes")
  local g = load(bytes, "=ignored")
  local addNil, boom = g()
  eq(select(2, pcall(addNil)), "lines:334: attempt to perform arithmetic on a nil value",
     "a runtime error's line after a round trip")
  eq(select(2, pcall(boom)), "lines:203: at 203", "error()'s position after a round trip")
  local function lineSet(fn)
    local keys = {}
    for line in pairs(debug.getinfo(fn, "L").activelines) do keys[#keys + 1] = line end
    table.sort(keys)
    return table.concat(keys, ",")
  end
  eq(lineSet(g), lineSet(f), "active lines of the main function")
  eq(lineSet(addNil), "334", "active lines of a nested function")
  eq(debug.getinfo(g, "S").source, "=lines", "the source a chunk carries")
  eq(debug.getinfo(addNil, "S").linedefined, 334, "linedefined")
end

-- Redumping a loaded chunk gives the same bytes, with and without debug information.
do
  local function sample(a, b, ...)
    local t = {a, b, "str", 1.5, x = {}, ...}
    for i = 1, #t do t[i] = tostring(t[i]) end
    return table.concat(t, ","), function() return a end
  end
  for _, strip in ipairs({false, true}) do
    local d = string.dump(sample, strip)
    local back = load(d, "=again", "b")
    eq(string.dump(back, strip), d, "redump, strip " .. tostring(strip))
    eq(back(1, 2, 3), "1,2,str,1.5,3", "the redumped function runs, strip " .. tostring(strip))
  end
end

-- Names: locals and upvalues keep theirs, a stripped chunk has none.
do
  local up1, up2, getlocal = 10, 20, debug.getlocal
  local function named(p)
    local inner = p + up1
    return inner + up2, getlocal(1, 1), getlocal(1, 2)
  end
  local full = load(string.dump(named))
  local stripped = load(string.dump(named, true))
  eq(select(2, debug.getupvalue(full, 1)), _G, "load sets the first upvalue to the globals")
  eq(select(2, debug.getupvalue(full, 2)), nil, "and the others to nil")
  eq(debug.getupvalue(full, 1), "up1", "upvalue name")
  eq(debug.getupvalue(full, 3), "getlocal", "third upvalue name")
  eq(debug.getupvalue(stripped, 1), "(no name)", "a stripped upvalue")
  debug.setupvalue(full, 1, 1)
  debug.setupvalue(full, 2, 2)
  debug.setupvalue(full, 3, debug.getlocal)
  local sum, p, inner = full(5)
  eq(sum, 8, "upvalues set after load")
  eq(p .. "," .. inner, "p,inner", "local names")
  eq(debug.getinfo(stripped, "S").source, "=?", "a stripped source")
  eq(debug.getinfo(stripped, "S").short_src, "?", "a stripped short_src")
  eq(debug.getinfo(stripped, "l").currentline, -1, "no current line")
  debug.setupvalue(stripped, 1, 1)
  eq(select(2, pcall(stripped, nil)), "?:-1: attempt to perform arithmetic on a nil value",
     "a runtime error without lines")
  local up = 0
  local addUp = load(string.dump(function() return up + 1 end, true))  -- up: the globals
  eq(select(2, pcall(addUp)), "?:-1: attempt to perform arithmetic on a table value (upvalue '?')",
     "an upvalue without a name")
end

-- A stripped function has no lines: no active lines, and its line hook gets nil.
do
  local function three()
    local a = 1
    local b = a + 1
    return b
  end
  local stripped = load(string.dump(three, true))
  eq(next(debug.getinfo(stripped, "L").activelines), nil, "no active lines")
  local lines = {}
  debug.sethook(function(_, line) lines[#lines + 1] = tostring(line) end, "l")
  stripped()
  debug.sethook()
  eq(table.concat(lines, " ", 2, #lines - 1), "nil", "the line hook of a stripped function")
end

-- _ENV need not be the first upvalue; load sets the first one whatever its name.
do
  local x = 1
  local function h() local y = x return XX end
  local f = load(string.dump(h), "=h", "b")
  eq(debug.getupvalue(f, 2), "_ENV", "_ENV second")
  debug.setupvalue(f, 2, {XX = "from env"})
  eq(f(), "from env", "a function of a chunk with _ENV second")
end

-- A reader function may hand the chunk over one byte at a time; bytes after the chunk are
-- ignored, as Lua ignores them.
do
  local d = string.dump(function() return "pieces" end)
  local i = 0
  local f = load(function() i = i + 1 return d:sub(i, i) end, "=pieces", "b")
  eq(f(), "pieces", "a chunk read byte by byte")
  eq(load(d .. "trailing", "=t", "b")(), "pieces", "trailing bytes")
end

-- Bad chunks get Lua's messages, with the chunk name trimmed as Lua trims it.
do
  local d = string.dump(function(a) return a .. "constant" end)
  local function why(s, name) return select(2, load(s, name)) end
  local truncated = 0
  for n = 1, #d - 1 do
    if why(d:sub(1, n)) == "binary string: bad binary format (truncated chunk)" then truncated = truncated + 1 end
  end
  eq(truncated, #d - 1, "every prefix is a truncated chunk")
  eq(why(d:sub(1, 40), "=named"), "named: bad binary format (truncated chunk)", "a '=' name")
  eq(why(d:sub(1, 40), "@file.luac"), "file.luac: bad binary format (truncated chunk)", "a '@' name")
  eq(why(d:sub(1, 40), "plain"), "plain: bad binary format (truncated chunk)", "a plain name")
  local function bump(i) return d:sub(1, i - 1) .. string.char((d:byte(i) + 1) % 256) .. d:sub(i + 1) end
  for i = 2, 31 do print("header byte " .. i .. ": " .. why(bump(i))) end
  eq(why(d:sub(1, 32) .. string.rep("\x7f", 12) .. d:sub(33)), "binary string: bad binary format (integer overflow)",
     "an over-long size")
  local at = d:find("\x04\x89constant", 1, true)
  eq(why(d:sub(1, at) .. "\x80" .. d:sub(at + 10)), "binary string: bad binary format (bad format for constant string)",
     "a constant string without its bytes")
  eq(why(d, "=t") == nil and select(2, load(d, "=t", "t")), "attempt to load a binary chunk (mode is 't')", "mode t")
end

T.done()
