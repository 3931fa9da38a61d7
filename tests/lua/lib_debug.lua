-- The debug library (manual §6.10): getinfo with every option in level and function
-- form, getlocal/setlocal (varargs, parameters, C temporaries), traceback forms,
-- sethook/gethook with Lua and native hooks, user values. Prints no addresses.
local checks = 0
local function check(label, cond)
  checks = checks + 1
  if not cond then print("FAILED: " .. label) end
end
local function errOf(f, ...)
  local ok, msg = pcall(f, ...)
  return not ok and msg or "no error"
end

-- ---- getinfo: "S" ---------------------------------------------------------------
local function sample(a, b, ...)
  local x = a
  return x
end
local info = debug.getinfo(sample, "S")
check("S what", info.what == "Lua")
check("S source", info.source == "@lib_debug.lua")
check("S short_src", info.short_src == "lib_debug.lua")
check("S linedefined", info.linedefined == 15)
check("S lastlinedefined", info.lastlinedefined == 18)
check("S no currentline", info.currentline == nil)
local main = debug.getinfo(1, "S")
check("main what", main.what == "main")
check("main linedefined", main.linedefined == 0)
local cinfo = debug.getinfo(print, "S")
check("C what", cinfo.what == "C")
check("C source", cinfo.source == "=[C]" and cinfo.short_src == "[C]")
check("C lines", cinfo.linedefined == -1 and cinfo.lastlinedefined == -1)

-- ---- "l", "u", "t", "f", "r", "n" -------------------------------------------------
check("l level 1", debug.getinfo(1, "l").currentline == 35)
check("l function form", debug.getinfo(sample, "l").currentline == -1)
local u = debug.getinfo(sample, "u")
check("u nups", u.nups == 0)
check("u nparams", u.nparams == 2)
check("u isvararg", u.isvararg == true)
local cu = debug.getinfo(print, "u")
check("C u", cu.nups == 0 and cu.nparams == 0 and cu.isvararg == true)
local up = 1
local function withUp() return up + checks end
check("u upvalues", debug.getinfo(withUp, "u").nups == 2)
check("f func", debug.getinfo(sample, "f").func == sample)
check("f level", debug.getinfo(1, "f").func ~= nil)
local r = debug.getinfo(1, "r")
check("r transfer", r.ftransfer == 0 and r.ntransfer == 0)
local function named() return debug.getinfo(1, "n") end
local n = named()
check("n local", n.name == "named" and n.namewhat == "local")
globalNamed = function() return debug.getinfo(1, "n") end
n = globalNamed()
check("n global", n.name == "globalNamed" and n.namewhat == "global")
globalNamed = nil
local obj = {}
function obj:m() return debug.getinfo(1, "n") end
function obj.f() return debug.getinfo(1, "n") end
check("n method", obj:m().name == "m" and obj:m().namewhat == "method")
check("n field", obj.f().name == "f" and obj.f().namewhat == "field")
check("n function form", debug.getinfo(sample, "n").namewhat == "")
local function tailer() return debug.getinfo(1, "t") end
local function callsTail() return tailer() end
check("t tail", callsTail().istailcall == true)
check("t not tail", debug.getinfo(1, "t").istailcall == false)

-- ---- "L" and defaults ------------------------------------------------------------
local function lines(f)
  local t = debug.getinfo(f, "L").activelines
  if not t then return "nil" end
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return table.concat(ks, ",")
end
local function two(a)
  local x = a
  return x end
print("activelines", lines(two), lines(print))
check("L lines", lines(two) == "78,79")
check("L C function", lines(print) == "nil")
local all = debug.getinfo(1)
check("default options", all.currentline == 83 and all.what == "main" and all.func ~= nil and all.nups ~= nil)
check("default no L", all.activelines == nil)

-- ---- getinfo errors and levels ---------------------------------------------------
check("level out of range", debug.getinfo(100) == nil)
check("negative level", debug.getinfo(-1) == nil)
check("level string", debug.getinfo("1", "S").what == "main")
print(errOf(debug.getinfo, 1, ">S"))
print(errOf(debug.getinfo, 1, "S>"))
print(errOf(debug.getinfo, print, "x"))
print(errOf(debug.getinfo, "x"))
print(errOf(debug.getinfo, {}))
check("level 0 is getinfo", debug.getinfo(0, "n").name == "getinfo")

-- ---- getinfo on a coroutine --------------------------------------------------------
local co = coroutine.create(function(a)
  local b = a * 2
  coroutine.yield(b)
end)
coroutine.resume(co, 4)
check("co level 0 C", debug.getinfo(co, 0, "S").what == "C")
check("co level 1 line", debug.getinfo(co, 1, "l").currentline == 101)
check("co level out of range", debug.getinfo(co, 5) == nil)

-- ---- getlocal ------------------------------------------------------------------------
local function locals(p, q, ...)
  local inner = p + q
  local names = {}
  for i = 1, 3 do
    local name, value = debug.getlocal(1, i)
    names[#names + 1] = tostring(name) .. "=" .. tostring(type(value) == "table" and "table" or value)
  end
  local v1n, v1 = debug.getlocal(1, -1)
  local v2n, v2 = debug.getlocal(1, -2)
  local v3n = debug.getlocal(1, -3)
  return table.concat(names, " "), v1n, v1, v2n, v2, v3n
end
print("getlocal", locals(10, 20, "x", "y"))
local ls, v1n, v1, v2n, v2, v3n = locals(1, 2, "x", "y")
check("getlocal named", ls == "p=1 q=2 inner=3")
check("getlocal vararg 1", v1n == "(vararg)" and v1 == "x")
check("getlocal vararg 2", v2n == "(vararg)" and v2 == "y")
check("getlocal vararg beyond", v3n == nil)
local function noVarargs(a) return debug.getlocal(1, -1) end
check("getlocal no varargs", noVarargs(1) == nil)
check("getlocal param 1", debug.getlocal(locals, 1) == "p")
check("getlocal param 2", debug.getlocal(locals, 2) == "q")
check("getlocal param beyond", debug.getlocal(locals, 3) == nil)
check("getlocal C function form", debug.getlocal(print, 1) == nil)
local seen = {}
table.sort({3, 1, 2}, function(a, b)
  local name, value = debug.getlocal(2, 1)
  seen[#seen + 1] = name .. ":" .. type(value)
  return a < b
end)
check("getlocal C temporary", seen[1] == "(C temporary):table")
print(errOf(debug.getlocal, 50, 1))
print(errOf(debug.getlocal, 1, "x"))
check("getlocal zero", debug.getlocal(1, 0) == nil)
local cn, cv = debug.getlocal(co, 1, 1)
check("getlocal thread", cn == "a" and cv == 4)
local cn2, cv2 = debug.getlocal(co, 1, 2)
check("getlocal thread 2", cn2 == "b" and cv2 == 8)
print(errOf(debug.getlocal, co, 9, 1))

-- ---- setlocal ------------------------------------------------------------------------
local function setter(...)
  local target = 1
  local name = debug.setlocal(1, 1, 42)
  local vname = debug.setlocal(1, -1, "changed")
  local missing = debug.setlocal(1, -5, 0)
  return name, target, vname, ..., missing
end
local sn, sv, svn, sva, smiss = setter("orig")
check("setlocal name", sn == "target")
check("setlocal value", sv == 42)
check("setlocal vararg", svn == "(vararg)" and sva == "changed")
check("setlocal missing", smiss == nil)
print(errOf(debug.setlocal, 50, 1, 2))
print(errOf(debug.setlocal, 1, 1))
check("setlocal thread", debug.setlocal(co, 1, 2, 100) == "b")
check("setlocal thread value", select(2, debug.getlocal(co, 1, 2)) == 100)

-- ---- traceback -------------------------------------------------------------------------
local function firstLine(s) return (s:gsub("\n.*", "")) end
check("traceback plain", firstLine(debug.traceback()) == "stack traceback:")
check("traceback message", firstLine(debug.traceback("boom")) == "boom")
check("traceback number", firstLine(debug.traceback(12)) == "12")
local tbl = {}
check("traceback table passthrough", debug.traceback(tbl) == tbl)
check("traceback nil", firstLine(debug.traceback(nil)) == "stack traceback:")
print(debug.traceback("lvl", 1))
local function deep() return debug.traceback("deep", 2) end
local d = deep()
check("traceback level", not d:find("in function 'deep'", 1, true) and d:find("in main chunk", 1, true) ~= nil)
print(debug.traceback(co))
print(debug.traceback(co, "comsg"))
print(debug.traceback(co, "comsg", 1))
check("traceback thread nil msg", firstLine(debug.traceback(co, nil)) == "stack traceback:")

-- ---- sethook / gethook ------------------------------------------------------------------
check("gethook none", debug.gethook() == nil and select("#", debug.gethook()) == 1)
local events = {}
local function hook(event, line)
  events[#events + 1] = event .. (line and (":" .. line) or "")
end
local function hooked(x)
  return x + 1
end
debug.sethook(hook, "l")
hooked(1)
debug.sethook()
print("line events", table.concat(events, " "))
check("line hook", table.concat(events, " ") == "line:194 line:191 line:195")
local hf, hm, hc = nil, nil, nil
debug.sethook(hook, "crl", 0)
hf, hm, hc = debug.gethook()
debug.sethook()
check("gethook function", hf == hook)
check("gethook mask", hm == "crl")
check("gethook count", hc == 0)
events = {}
debug.sethook(hook, "c")
hooked(1)
debug.sethook()
check("call hook", events[1] == "call" and events[2] == "call")
events = {}
debug.sethook(hook, "r")
hooked(1)
debug.sethook()
check("return hook", events[1] == "return")
debug.sethook(type, "c")
local nf, nm = debug.gethook()
debug.sethook()
check("native hook accepted", nf == type and nm == "c")
debug.sethook(hook, "", 0)
check("empty mask clears", debug.gethook() == nil)
debug.sethook(hook, "c", 0)
debug.sethook(nil)
check("nil clears", debug.gethook() == nil)
debug.sethook(co, hook, "l")
check("thread hook", debug.gethook(co) == hook and debug.gethook() == nil)
debug.sethook(co)
check("thread hook cleared", debug.gethook(co) == nil)
print(errOf(debug.sethook, print))
print(errOf(debug.sethook, 1, "c"))
print(errOf(debug.sethook, hook, "c", "x"))

-- ---- user values ------------------------------------------------------------------------
check("getuservalue non-userdata", debug.getuservalue(1) == nil and select("#", debug.getuservalue(1)) == 1)
check("getuservalue out of range", select("#", debug.getuservalue(io.stdout, 2)) == 1)
check("setuservalue out of range", debug.setuservalue(io.stdout, 1, 2) == nil)
-- io handles have no user value at all (lua_newuserdatauv with 0): every index fails.
for _, n in ipairs({1, 0, -1, 2, math.maxinteger, math.mininteger}) do
  local count = select("#", debug.getuservalue(io.stdout, n))
  check("getuservalue io handle " .. n, debug.getuservalue(io.stdout, n) == nil and count == 1)
  check("setuservalue io handle " .. n, debug.setuservalue(io.stdout, 1, n) == nil)
end
check("getuservalue default index", select("#", debug.getuservalue(io.stdout)) == 1)
check("setuservalue default index", select("#", debug.setuservalue(io.stderr, "v")) == 1
  and debug.setuservalue(io.stderr, "v") == nil)
check("setuservalue nil value fails too", debug.setuservalue(io.stdin, nil) == nil)
check("opened file has none", (function()
  local f = io.tmpfile()
  local r = debug.getuservalue(f) == nil and debug.setuservalue(f, {}) == nil
  f:close()
  return r and debug.getuservalue(f) == nil
end)())
check("getuservalue no argument", select("#", debug.getuservalue()) == 1 and debug.getuservalue() == nil)
check("getuservalue light userdata", debug.getuservalue(debug.upvalueid(withUp, 1)) == nil)
print(errOf(debug.getuservalue, io.stdout, "x"))
print(errOf(debug.setuservalue, io.stdout, 1, 1.5))
print(errOf(debug.setuservalue, 1, 2))
print(errOf(debug.setuservalue, io.stdout))
print(errOf(debug.setuservalue, debug.upvalueid(withUp, 1), 1))

-- ---- upvalues --------------------------------------------------------------------------
check("getupvalue", debug.getupvalue(withUp, 1) == "up")
check("setupvalue", debug.setupvalue(withUp, 1, 10) == "up" and up == 10)
check("upvalueid same", debug.upvalueid(withUp, 1) == debug.upvalueid(withUp, 1))
check("upvalueid past the last upvalue fails", debug.upvalueid(withUp, 3) == nil)
check("upvalueid zero fails", debug.upvalueid(withUp, 0) == nil)
check("upvalueid of a native without upvalues fails", debug.upvalueid(print, 1) == nil)
check("upvalueid returns one value", select("#", debug.upvalueid(withUp, 5)) == 1)

-- ---- "L" of vararg functions ----------------------------------------------------
-- A vararg function's header line is not active (its VARARGPREP does not count); lines
-- are given relative to linedefined.
local function relLines(f)
  local t = debug.getinfo(f, "SL")
  local ks = {}
  for k in pairs(t.activelines) do ks[#ks + 1] = k - t.linedefined end
  table.sort(ks)
  return table.concat(ks, ",")
end
local function varargs(...)
  local a = 1

  return a end
print("activelines vararg", relLines(varargs), relLines(function(a, ...) end),
      relLines(load("\n\nreturn 1")), relLines(load("return ...")))
check("L vararg skips the header", relLines(varargs) == "1,3")
check("L vararg one line", relLines(function(...) end) == "0")
check("L vararg chunk", relLines(load("\n\nreturn 1")) == "3")

-- ---- a line hook set by a call hook ----------------------------------------------
-- It sees the called function's first line, vararg or not, with its parameters set.
local function firstLineSeen(f, ...)
  local seen
  debug.sethook(function()
    debug.sethook(function(_, line)
      debug.sethook()
      local name, value = debug.getlocal(2, 1)
      seen = (line - debug.getinfo(2, "S").linedefined) .. " " .. tostring(name) .. "=" .. tostring(value)
    end, "l")
  end, "c")
  f(...)
  debug.sethook()
  return seen
end
local function fixedArgs(a, b)
  local c = a + b
  return c
end
local function varArgs(a, ...)
  local c = select("#", ...)
  return c
end
print("line hook from a call hook", firstLineSeen(fixedArgs, 1, 2), firstLineSeen(varArgs, 7, 8, 9))
check("line hook set by call hook, fixed", firstLineSeen(fixedArgs, 1, 2) == "1 a=1")
check("line hook set by call hook, vararg", firstLineSeen(varArgs, 7, 8, 9) == "1 a=7")

-- Lua keeps each thread's hook in the registry's _HOOKKEY table (weak keys); call and
-- return hooks see the transferred values through getinfo's "r".
do
  local function hook() end
  debug.sethook(hook, "c")
  local hooks = debug.getregistry()._HOOKKEY
  debug.sethook()
  check("_HOOKKEY is a table", type(hooks) == "table")
  check("_HOOKKEY has weak keys", getmetatable(hooks).__mode == "k")
  check("_HOOKKEY entry cleared with the hook", hooks[coroutine.running()] == nil)
  local seen = {}
  local function target(a, b, c) return a + b, c end
  debug.sethook(function(event)
    local r = debug.getinfo(2, "rf")
    if r.func == target then
      local vals = {}
      for i = r.ftransfer, r.ftransfer + r.ntransfer - 1 do
        vals[#vals + 1] = tostring(select(2, debug.getlocal(2, i)))
      end
      seen[#seen + 1] = event .. " " .. r.ftransfer .. " " .. r.ntransfer .. " " .. table.concat(vals, ",")
    end
  end, "cr")
  target(1, 2, "x")
  debug.sethook()
  print("transfers", table.concat(seen, " | "))
  check("call hook transfers the parameters", seen[1] == "call 1 3 1,2,x")
  check("return hook transfers the results", seen[2] and seen[2]:match("^return %d+ 2 3,x$") ~= nil)
end

print("lib_debug: " .. checks .. " checks passed")
