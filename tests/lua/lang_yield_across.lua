-- Yields across natives that call back into Lua (manual §2.6, §6.2): pcall, xpcall,
-- dofile, pairs' __pairs, __close (on block exit, on return, while an error unwinds),
-- metamethods; and where Lua forbids them (table.sort, string.gsub, tostring, load's
-- reader, require's loader, coroutine.close) with Lua's message. Checked against lua5.4
-- (5.4.4) and Lua 5.4.8, which agree on all of it. The checker of vm/thread.h invariants
-- 5 and 6 (continuations, catchers closing variables; docs/design/continuations.md).
local NAME = "lang_yield_across"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

local function closer(f) return setmetatable({}, {__close = f}) end

-- Runs f(...) as a coroutine, resuming it with "r1", "r2", ... until it ends; returns a
-- string of what each resume gave, "|"-separated, so one check covers a whole run.
local function run(f, ...)
  local co = coroutine.create(f)
  local out, n = {}, 0
  local r = table.pack(coroutine.resume(co, ...))
  while true do
    local parts = {}
    for i = 1, r.n do
      local v = r[i]
      parts[i] = type(v) == "table" and "{" .. tostring(v[1]) .. "}" or tostring(v):gsub("^[%w_.]+:%d+: ", "")
    end
    out[#out + 1] = table.concat(parts, ",")
    if coroutine.status(co) == "dead" then break end
    n = n + 1
    r = table.pack(coroutine.resume(co, "r" .. n))
  end
  return table.concat(out, "|")
end

local function across() return "false,attempt to yield across a C-call boundary" end

-- pcall and xpcall called from Lua code.
eq(run(function() return pcall(coroutine.yield, "a") end), "true,a|true,true,r1", "pcall(coroutine.yield)")
eq(run(function() return pcall(function(x) return coroutine.yield(x) + 1 end, 1) end),
   "true,1|true,false,attempt to add a 'string' with a 'number'", "pcall: error after a yield")
eq(run(function()
  return pcall(function() local v = coroutine.yield("in"); error({v}) end)
end), "true,in|true,false,{r1}", "pcall: error value after a yield")
eq(run(function()
  return xpcall(function() coroutine.yield("in"); error("e", 0) end, function(m) return "H:" .. m end)
end), "true,in|true,false,H:e", "xpcall: handler after a yield")
eq(run(function()
  return xpcall(function() error("e", 0) end, function(m) coroutine.yield("h") return m end)
end), "true,false,error in error handling", "xpcall: the handler cannot yield")
eq(run(function()
  local a = {pcall(function() coroutine.yield(1); return 2, 3 end)}
  local b = {pcall(function() coroutine.yield(4); error("x", 0) end)}
  return a[1], a[2], a[3], b[1], b[2], coroutine.isyieldable()
end), "true,1|true,4|true,true,2,3,false,x,true", "two pcalls in a row")

-- pcall and xpcall run natively: a coroutine's body, called by another native.
eq(run(pcall, function(a) local b = coroutine.yield(a) return b, "done" end, "x"),
   "true,x|true,true,r1,done", "coroutine.create(pcall)")
eq(run(pcall, function() coroutine.yield(1) error({"boom"}) end), "true,1|true,false,{boom}",
   "coroutine.create(pcall): error after a yield")
eq(run(xpcall, function() coroutine.yield(1) error("boom", 0) end, function(m) return "H:" .. m end),
   "true,1|true,false,H:boom", "coroutine.create(xpcall): handler after a yield")
eq(run(xpcall, error, function(m) return "H:" .. tostring(m) end, "x"), "true,false,H:x",
   "coroutine.create(xpcall): handler of a native error")
eq(run(function() return pcall(pcall, coroutine.yield, "pp") end), "true,pp|true,true,true,r1",
   "pcall(pcall, coroutine.yield)")
eq(run(function() return select(2, pcall(coroutine.yield, "s")) end), "true,s|true,r1", "select over pcall")
eq(run(function()
  local f = coroutine.wrap(pcall)
  local a = f(function() local v = coroutine.yield("inner") return v end)
  local b, c = f("back")
  return a, b, c
end), "true,inner,true,back", "coroutine.wrap(pcall)")
eq(run(function() return pcall(coroutine.isyieldable) end), "true,true,true", "isyieldable inside pcall")
eq(run(pcall, coroutine.isyieldable), "true,true,true", "isyieldable inside a native pcall")
eq(select(2, pcall(xpcall, error, function(m) return "H:" .. m end, "x")), false,
   "native xpcall: false")
eq(select(3, pcall(xpcall, error, function(m) return "H:" .. m end, "x")), "H:x",
   "native xpcall uses its handler")

-- dofile over a chunk that yields.
local path = os.tmpname()
local f = assert(io.open(path, "w"))
f:write("local x = coroutine.yield('from file')\nreturn x, 'end'\n")
f:close()
eq(run(dofile, path), "true,from file|true,r1,end", "coroutine.create(dofile)")
eq(run(function() return dofile(path) end), "true,from file|true,r1,end", "dofile from a coroutine")
eq(run(function() return pcall(dofile, path) end), "true,from file|true,true,r1,end", "pcall(dofile)")
os.remove(path)

-- pairs' __pairs may yield; its three results are the loop's.
eq(run(function()
  local t = setmetatable({}, {__pairs = function(t)
    local first = coroutine.yield("pairs")
    return function(_, k) if not k then return 1, first end end, t, nil
  end})
  local got = {}
  for k, v in pairs(t) do got[#got + 1] = k .. "=" .. v end
  return table.concat(got)
end), "true,pairs|true,1=r1", "yield in __pairs")

-- __close may yield: leaving a block, returning, breaking out of a generic for.
eq(run(function()
  local log = {}
  do
    local a <close> = closer(function() log[#log + 1] = coroutine.yield("a") end)
    local b <close> = closer(function() log[#log + 1] = coroutine.yield("b") end)
  end
  return table.concat(log, ",")
end), "true,b|true,a|true,r1,r2", "yield in __close at block exit")
eq(run(function()
  local function many() return 1, 2, 3, 4 end
  local function f()
    local x <close> = closer(function() coroutine.yield("closing") end)
    return many()
  end
  return f()
end), "true,closing|true,1,2,3,4", "yield in __close on return keeps every result")
eq(run(function()
  local x <close> = closer(coroutine.yield)
  local y <close> = closer(coroutine.yield)
  return "ret"
end), "true,{nil},nil|true,{nil},nil|true,ret", "coroutine.yield as __close")
eq(run(function()
  local n = 0
  local function iter(_, i) if i < 3 then return i + 1 end end
  for i in iter, nil, 0, closer(function() n = n + 10; coroutine.yield("for") end) do
    n = n + i
    if i == 2 then break end
  end
  return n
end), "true,for|true,13", "yield in a generic for's closing value on break")

-- __close while an error unwinds to pcall: it may yield, sees the error, and an error in
-- it replaces the pending one for the variables below it.
eq(run(function()
  return pcall(function()
    local a <close> = closer(function(_, e) coroutine.yield("a:" .. tostring(e)) end)
    local b <close> = closer(function(_, e) coroutine.yield("b:" .. tostring(e)); error("B", 0) end)
    error("E", 0)
  end)
end), "true,b:E|true,a:B|true,false,B", "yield in __close during unwinding")
eq(run(pcall, function()
  local a <close> = closer(function(_, e) coroutine.yield("a:" .. tostring(e)) end)
  coroutine.yield("body")
  error("E", 0)
end), "true,body|true,a:E|true,false,E", "the same under a native pcall")
eq(run(pcall, function()
  local a <close> = closer(function(_, e) coroutine.yield("a:" .. tostring(e)) end)
  error("E", 0)
end), "true,a:E|true,false,E", "native pcall: error before any yield")
eq(run(function()
  return xpcall(function()
    local a <close> = closer(function() error("in close", 0) end)
    error("orig", 0)
  end, function(m) return "H:" .. m end)
end), "true,false,H:in close", "xpcall's handler sees the error of a __close")

-- Metamethods called by the interpreter may yield.
local function mt(event, result)
  return setmetatable({}, {[event] = function(...) return coroutine.yield(event) or result end})
end
eq(run(function() return mt("__index").x end), "true,__index|true,r1", "__index")
eq(run(function() mt("__newindex").x = 1; return "set" end), "true,__newindex|true,set", "__newindex")
eq(run(function() return mt("__add") + 1, -mt("__unm"), #mt("__len") end),
   "true,__add|true,__unm|true,__len|true,r1,r2,r3", "__add, __unm, __len")
eq(run(function() return mt("__eq") == mt("__eq"), mt("__lt") < mt("__lt"), mt("__le") <= mt("__le") end),
   "true,__eq|true,__lt|true,__le|true,true,true,true", "__eq, __lt, __le")
eq(run(function() return "a" .. mt("__concat") .. "b" end), "true,__concat|true,ar1",
   "__concat")
eq(run(function() return mt("__call")(1) end), "true,__call|true,r1", "__call")

-- Where Lua forbids a yield, Weft says what Lua says.
eq(run(function() table.sort({3, 2, 1}, function(a, b) coroutine.yield() return a < b end) end),
   across(), "table.sort's comparator")
eq(run(function() return string.gsub("ab", "%w", function() coroutine.yield() end) end), across(),
   "string.gsub's function")
eq(run(function() return tostring(mt("__tostring")) end), across(), "tostring's __tostring")
eq(run(function() return load(function() coroutine.yield() end) end),
   "true,nil,attempt to yield across a C-call boundary", "load's reader")
package.preload["yield.across"] = function() coroutine.yield() end
eq(run(function() return require("yield.across") end), across(), "require's loader")
eq(run(function() return table.unpack(mt("__index"), 1, 1) end), across(), "table.unpack's __index")
do
  local co = coroutine.create(function()
    local x <close> = closer(function() coroutine.yield("in close") end)
    coroutine.yield(1)
  end)
  coroutine.resume(co)
  local ok, msg = coroutine.close(co)
  eq(tostring(ok) .. "," .. msg, across(), "coroutine.close: __close cannot yield")
end

-- coroutine.close and wrap report the error that killed the coroutine, even when a
-- __close catches errors of its own.
do
  local co
  co = coroutine.wrap(function()
    local x <close> = closer(function() return pcall(co) end)
    error(111)
  end)
  local ok, err = pcall(co)
  eq(err, 111, "wrap keeps the body's error")
  eq(select(2, pcall(co)), "cannot resume dead coroutine", "then it is dead")
  local c2 = coroutine.create(function()
    local x <close> = closer(function() pcall(error, "inner") end)
    error("outer", 0)
  end)
  coroutine.resume(c2)
  eq(select(2, coroutine.close(c2)), "outer", "coroutine.close keeps the body's error")
end

T.done()
