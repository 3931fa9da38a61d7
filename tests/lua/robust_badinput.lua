-- Invariant 7 (DEVELOPERS.md): bad input (a corrupt binary chunk, a malformed script, a
-- huge allocation) gets a clean Lua error, never a crash; run as a script, it ends with
-- exit status 1 and a message. Each group prints one line, the same under both
-- interpreters; a failure prints what failed.
local failures = 0
local function check(cond, what)
  if not cond then
    failures = failures + 1
    print("FAIL: " .. what)
  end
end

local function group(name, body)
  local before = failures
  body()
  print(name .. ": " .. (failures == before and "ok" or "FAILED"))
end

-- load must return a function or (nil, message); it never raises.
local function loadsCleanly(chunk, mode, what)
  local ok, f, err = pcall(load, chunk, "=bad", mode)
  check(ok, what .. ": load raised " .. tostring(f))
  check(f ~= nil or type(err) == "string", what .. ": no message")
  return ok and f ~= nil
end

local function sample(a, b)
  local t = {a, b, "str", 1.5, x = {}}
  if a then t[1] = a .. b else t[2] = -b end
  return #t, t.x, function() return a end
end
local dump = string.dump(sample)

group("truncated binary chunks are rejected", function()
  for n = 0, #dump - 1 do
    check(not loadsCleanly(dump:sub(1, n), "b", "truncated at " .. n), "truncated at " .. n .. " loaded")
  end
end)

group("corrupt binary chunks load cleanly or fail cleanly", function()
  for i = 1, #dump do
    for _, byte in ipairs({0, 1, 0x7f, 0x80, 0xff}) do
      loadsCleanly(dump:sub(1, i - 1) .. string.char(byte) .. dump:sub(i + 1), "b", "byte " .. i)
    end
  end
end)

group("load modes are enforced", function()
  check(not loadsCleanly(dump, "t", "binary as text"), "binary chunk loaded in mode t")
  check(not loadsCleanly("return 1", "b", "text as binary"), "text chunk loaded in mode b")
end)

group("malformed scripts give syntax errors", function()
  local scripts = {
    "x = = 1", "for", "local function", "a.b:c = 1", "return return", "goto nowhere",
    "break", "::l:: ::l::", "local x <foo> = 1", "x = 0x", "x = 1e", "x = \"unfinished",
    "--[[ unfinished", "x = '\\400'", "x = '\\u{110000000}'", "x = [==[ ]=]", "\0\1\2",
    "f(", "local t = {", "if x then", "x = 1 +", "return ...; x = 1",
    string.rep("(", 100000) .. "x" .. string.rep(")", 100000),
    "return " .. string.rep("{", 100000),
    "x = " .. string.rep("-", 100000) .. "1",
    string.rep("do ", 100000),
  }
  for i, s in ipairs(scripts) do
    check(not loadsCleanly(s, "t", "script " .. i), "script " .. i .. " compiled")
  end
end)

group("huge allocations fail with a message", function()
  local function fails(what, f, ...)
    local ok, err = pcall(f, ...)
    check(not ok, what .. " succeeded")
    err = tostring(err)
    check(err:find("not enough memory") or err:find("too large") or err:find("too many"),
          what .. ": unexpected message " .. err)
  end
  fails("string.rep 2^40", string.rep, "x", 2 ^ 40)
  fails("string.rep maxinteger", string.rep, "abc", math.maxinteger)
  fails("string.rep with separator", string.rep, "x", 2 ^ 40, ",")
  fails("table.unpack 1e8", table.unpack, {}, 1, 1e8)
end)

-- As a script: `interpreter file` exits with status 1 and an error message.
-- The interpreter is the lowest index of arg (options sit between it and the script).
local lowest = -1
while arg[lowest - 1] do lowest = lowest - 1 end
local interpreter = arg[lowest]
local tmp = os.tmpname()
local function runsAndFails(contents, what)
  local f = assert(io.open(tmp, "wb"))
  f:write(contents)
  f:close()
  local ok, how, code = os.execute(string.format("%q %q 2>%q.err", interpreter, tmp, tmp))
  check(not ok and how == "exit" and code == 1, what .. ": ended by " .. tostring(how) .. " " .. tostring(code))
  local e = assert(io.open(tmp .. ".err", "rb"))
  local message = e:read("a")
  e:close()
  check(message:find("^[^\n]*: ") and not message:find("Sanitizer"), what .. ": stderr " .. message)
end

-- Lua does not check binary chunks before running them (a hostile one may crash lua5.4);
-- Weft does, so this group runs under weft only and prints the same line under both.
-- SETLIST aimed at a register that holds a number instead of the table it fills: the
-- verifier accepts its shape, and running it raises an error.
group("SETLIST on a register without a table", function()
  if not os.getenv("WEFT_TEST") then return end
  local function fill() local x = 7 local t = {x, x} return t end
  local setlist = 78 | (1 << 7) | (2 << 16)  -- SETLIST A=1 B=2 C=0 (fill's t is R1)
  local aimed = 78 | (0 << 7) | (2 << 16)    -- the same at R0, which holds 7
  local bytes = string.dump(fill)
  local at = bytes:find(string.pack("<I4", setlist), 1, true)
  check(at ~= nil, "fill's SETLIST found in its dump")
  if not at then return end
  local f = load(bytes:sub(1, at - 1) .. string.pack("<I4", aimed) .. bytes:sub(at + 4), "=bad", "b")
  check(f ~= nil, "the changed chunk passes the verifier")
  if not f then return end
  local ok, msg = pcall(f)
  check(not ok and tostring(msg):find("bad binary chunk", 1, true) ~= nil, "SETLIST raised: " .. tostring(msg))
end)

-- Chunks built field by field in luac's format (chunkio.h describes it). Lua loads what
-- follows without looking; Weft derives what its prototypes need (a line per instruction)
-- and checks it, so under weft each is a "bad binary format" error.
local function size(n)
  local bytes = {}
  repeat
    table.insert(bytes, 1, n & 0x7f)
    n = n >> 7
  until n == 0
  bytes[#bytes] = bytes[#bytes] | 0x80
  return string.char(table.unpack(bytes))
end
local function str(s) return s and size(#s + 1) .. s or size(0) end
local function abc(op, a, b, c) return op | (a << 7) | (b << 16) | (c << 24) end
-- function() return 42 end as luac compiles a main chunk: VARARGPREP, LOADI, RETURN.
local function fn(f)
  local code = f.code or {81, 1 | ((42 + 65535) << 15), abc(70, 0, 2, 1)}
  local parts = {str(f.source), size(0), size(0), string.char(0, 1, 2), size(#code)}
  for _, i in ipairs(code) do parts[#parts + 1] = string.pack("<I4", i) end
  parts[#parts + 1] = size(0)  -- constants
  local ups = f.ups or {{1, 0, 0}}
  parts[#parts + 1] = size(#ups)
  for _, u in ipairs(ups) do parts[#parts + 1] = string.char(table.unpack(u)) end
  local protos = f.protos or {}
  parts[#parts + 1] = size(#protos)
  for _, p in ipairs(protos) do parts[#parts + 1] = p end
  local lines = f.lines or "\1\0\0"
  parts[#parts + 1] = size(#lines) .. lines
  local abs = f.abs or {}
  parts[#parts + 1] = size(#abs)
  for _, e in ipairs(abs) do parts[#parts + 1] = size(e[1]) .. size(e[2]) end
  parts[#parts + 1] = size(0) .. size(0)  -- locals, upvalue names
  return table.concat(parts)
end
local function chunk(f, nups)
  return string.pack("<c4BBc6BBBi8d", "\27Lua", 0x54, 0, "\x19\x93\r\n\x1a\n", 4, 8, 8, 0x5678, 370.5) ..
         string.char(nups or 1) .. fn(f)
end

group("hostile chunks in luac's format", function()
  local good = load(chunk({source = "=built"}), "=built", "b")
  check(good and good() == 42, "the chunk builder's baseline runs")
  local nested = fn({ups = {}})
  for _ = 1, 300 do nested = fn({ups = {}, protos = {nested}}) end
  local hostile = {
    {"an absolute line past the code", chunk({abs = {{7, 1}}})},
    {"absolute lines out of order", chunk({lines = "\x80\x80\0", abs = {{1, 5}, {0, 3}}})},
    {"fewer lines than instructions", chunk({lines = "\1"})},
    {"an upvalue of an unknown kind", chunk({ups = {{1, 0, 9}}})},
    {"a main upvalue count unlike its function's", chunk({}, 3)},
    {"functions nested 300 deep", chunk({ups = {}, protos = {nested}}, 0)},
  }
  for _, case in ipairs(hostile) do
    local what, bytes = case[1], case[2]
    loadsCleanly(bytes, "b", what)
    if os.getenv("WEFT_TEST") then
      local f, err = load(bytes, "=hostile", "b")
      check(not f and tostring(err):find("^hostile: bad binary format %(") ~= nil,
            what .. ": " .. tostring(err))
    end
  end
end)

group("bad files exit with status 1", function()
  runsAndFails(dump:sub(1, #dump // 2), "truncated chunk file")
  runsAndFails(dump:sub(1, 5) .. "\xff\xff" .. dump:sub(8), "chunk file with a bad header")
  runsAndFails("x = = 1", "malformed script")
  runsAndFails("local s = string.rep('x', 2^40)", "huge allocation")
end)
os.remove(tmp)
os.remove(tmp .. ".err")

print("robust_badinput: " .. (failures == 0 and "all groups passed" or failures .. " failures"))
