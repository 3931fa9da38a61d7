-- Garbage collection (manual §2.5, collectgarbage in §6.1): options and their results,
-- weak tables, ephemerons, finalizers (order, resurrection, registration, errors, close).
local NAME = "lang_gc"
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

-- collectgarbage options and their results (lua.c runs in generational mode).
eq(collectgarbage("collect"), 0, "collect returns 0")
eq(collectgarbage(), 0, "default option is collect")
local kb = collectgarbage("count")
eq(math.type(kb), "float", "count is a float")
check(kb > 0, "count is positive")
eq(select("#", collectgarbage("count")), 1, "count returns one value")
eq(type(collectgarbage("step")), "boolean", "step returns a boolean")
eq(type(collectgarbage("step", 10)), "boolean", "step with a size")
eq(collectgarbage("isrunning"), true, "running at start")
eq(collectgarbage("stop"), 0, "stop returns 0")
eq(collectgarbage("isrunning"), false, "stopped")
eq(collectgarbage("restart"), 0, "restart returns 0")
eq(collectgarbage("isrunning"), true, "running again")
eq(collectgarbage("incremental"), "generational", "previous mode: generational")
eq(collectgarbage("incremental"), "incremental", "previous mode: incremental")
eq(collectgarbage("generational"), "incremental", "back to generational")
eq(collectgarbage("generational"), "generational", "generational twice")
eq(collectgarbage("setpause", 150), 200, "setpause returns the default")
eq(collectgarbage("setpause", 200), 148, "setpause keeps quarters")
eq(collectgarbage("setstepmul", 300), 100, "setstepmul default")
eq(collectgarbage("setstepmul", 100), 300, "setstepmul previous")
eq(bare(collectgarbage, "foo"), "bad argument #1 to 'collectgarbage' (invalid option 'foo')", "invalid option")
eq(bare(collectgarbage, {}), "bad argument #1 to 'collectgarbage' (string expected, got table)", "option type")
collectgarbage("stop")
do local garbage = {} for i = 1, 1000 do garbage[i] = {i} end end
eq(collectgarbage("isrunning"), false, "allocation does not restart")
eq(collectgarbage("collect"), 0, "explicit collect while stopped")
collectgarbage("restart")

-- Memory is reclaimed.
do
  collectgarbage()
  local before = collectgarbage("count")
  local function build() local big = {} for i = 1, 3000 do big[i] = {i, i * 2} end return big end
  local big = build()
  check(collectgarbage("count") > before, "count grows with allocation")
  big = nil
  collectgarbage()
  check(collectgarbage("count") < before + 64, "count shrinks after collect")
end

-- Weak tables (§2.5.4).
do
  local wk = setmetatable({}, {__mode = "k"})
  local wv = setmetatable({}, {__mode = "v"})
  local wkv = setmetatable({}, {__mode = "kv"})
  local keep = {}
  wk[keep] = "kept"; wk[{}] = "lost"
  wv[1] = keep; wv[2] = {}
  wkv[keep] = keep; wkv[{}] = 1; wkv[2] = {}
  wk.str = {}  -- string keys are not collectable
  wv.num = 42
  collectgarbage()
  local function count(t) local n = 0 for _ in pairs(t) do n = n + 1 end return n end
  eq(count(wk), 2, "weak keys: dead key removed")
  eq(wk[keep], "kept", "weak keys: live key stays")
  check(wk.str ~= nil, "weak keys: strong value under a string key stays")
  eq(wv[1], keep, "weak values: live value stays")
  eq(wv[2], nil, "weak values: dead value removed")
  eq(wv.num, 42, "weak values: numbers stay")
  eq(count(wkv), 1, "weak kv: only the fully live entry stays")
  eq(wkv[keep], keep, "weak kv: live entry")
  local ws = setmetatable({}, {__mode = "v"})
  ws[1] = "a string value"; ws[2] = "x" .. ("y"):rep(50)
  collectgarbage()
  eq(ws[1], "a string value", "strings are values: never removed")
  eq(ws[2], "x" .. ("y"):rep(50), "long strings too")
  local wf = setmetatable({}, {__mode = "k"})
  wf[print] = 1; wf[function() end] = 2
  collectgarbage()
  eq(wf[print], 1, "live function key")
  eq(count(wf), 1, "dead closure key removed")
  keep = nil
  collectgarbage()
  eq(count(wk), 1, "weak keys: key dropped once unreferenced")
  eq(next(wkv), nil, "weak kv: empty")
  eq(wv[1], nil, "weak values: value dropped once unreferenced")
end

-- A weak table that is itself garbage, and a mode set after filling.
do
  local t = {}
  for i = 1, 10 do t[i] = {} end
  setmetatable(t, {__mode = "v"})
  collectgarbage()
  eq(next(t), nil, "mode set after filling applies")
  local mt = {__mode = "k"}
  local a = setmetatable({}, mt)
  a[{}] = 1
  mt.__mode = nil  -- lua reads the mode at each collection
  collectgarbage()
  eq(next(a) ~= nil, true, "table no longer weak keeps its entries")
end

-- Ephemerons: a value that refers to its own key does not keep it alive.
do
  local eph = setmetatable({}, {__mode = "k"})
  do
    local k1 = {}
    eph[k1] = {ref = k1}
    local k2 = {}
    local k3 = {}
    eph[k2] = k3
    eph[k3] = k2
  end
  local kept = {}
  eph[kept] = {ref = kept}
  collectgarbage()
  local n = 0
  for k, v in pairs(eph) do n = n + 1 end
  eq(n, 1, "ephemeron cycles collected")
  eq(eph[kept].ref, kept, "live ephemeron stays")
  -- A chain: a live key keeps its value, which is the key of the next entry.
  local chain = setmetatable({}, {__mode = "k"})
  local head = {}
  local k = head
  for i = 1, 5 do local nk = {} chain[k] = nk; k = nk end
  collectgarbage()
  local len, cur = 0, head
  while chain[cur] do len = len + 1; cur = chain[cur] end
  eq(len, 5, "ephemeron chain kept from a live head")
  head = nil
  collectgarbage()
  eq(next(chain), nil, "ephemeron chain collected with its head")
end

-- Finalizers (§2.5.3).
do
  local order = {}
  local objs = {}
  for i = 1, 5 do
    objs[i] = setmetatable({}, {__gc = function() order[#order + 1] = i end})
  end
  objs = nil
  collectgarbage()
  eq(table.concat(order, ","), "5,4,3,2,1", "finalizers run in reverse order of marking")
  local ran = false
  local o = setmetatable({}, {__gc = function() ran = true end})
  collectgarbage()
  eq(ran, false, "reachable object not finalized")
  o = nil
  collectgarbage()
  eq(ran, true, "finalized once unreachable")
end

-- The finalizer gets the object; resurrection.
do
  local saved
  local id = 0
  do
    local obj = setmetatable({name = "phoenix"}, {__gc = function(self) saved = self; id = id + 1 end})
  end
  collectgarbage()
  eq(id, 1, "finalizer ran")
  eq(saved and saved.name, "phoenix", "object resurrected with its fields")
  saved = nil
  collectgarbage()
  eq(id, 1, "finalizer runs only once")
  local again = 0
  do
    local obj = setmetatable({}, {__gc = function(self) again = again + 1; if again == 1 then setmetatable(self, getmetatable(self)) end end})
  end
  collectgarbage()
  collectgarbage()
  eq(again, 2, "re-registered in its finalizer: runs again")
end

-- __gc must be in the metatable when it is set (5.4 semantics).
do
  local called = false
  local mt = {}
  do local o = setmetatable({}, mt) end
  mt.__gc = function() called = true end
  collectgarbage()
  eq(called, false, "__gc added after setmetatable: not registered")
  local later = "none"
  local mt2 = {__gc = true}
  local o = setmetatable({}, mt2)
  mt2.__gc = function() later = "replaced" end
  o = nil  -- only now: a collection may come at any safepoint (under stress, at each)
  collectgarbage()
  eq(later, "replaced", "placeholder __gc: the field is read when finalizing")
  local cleared = false
  local mt3 = {__gc = function() cleared = true end}
  do local o = setmetatable({}, mt3) end
  mt3.__gc = nil
  collectgarbage()
  eq(cleared, false, "__gc removed before collection: nothing runs")
end

-- Weak values are cleared before finalization; weak keys after (resurrected keys stay).
do
  local wv = setmetatable({}, {__mode = "v"})
  local wk = setmetatable({}, {__mode = "k"})
  local seen
  do
    local o = setmetatable({}, {__gc = function(self) seen = wk[self] end})
    wv[1] = o
    wk[o] = "key data"
  end
  collectgarbage()
  eq(wv[1], nil, "weak value to a finalized object cleared")
  eq(seen, "key data", "weak key entry still there during finalization")
  collectgarbage()
  eq(next(wk), nil, "weak key removed after finalization")
end

-- Errors in __gc become warnings, not errors.
do
  local after = false
  setmetatable({}, {__gc = function() error("finalizer failure") end})
  setmetatable({}, {__gc = function() after = true end})
  local ok = pcall(collectgarbage)
  eq(ok, true, "collect succeeds despite a failing finalizer")
  eq(after, true, "other finalizers still run")
end

-- Finalizers of userdata-like tables with a __gc that allocates.
do
  local made = {}
  local objs = {}
  for i = 1, 3 do
    objs[i] = setmetatable({}, {__gc = function() made[#made + 1] = {("x"):rep(100), i} end})
  end
  objs = nil
  collectgarbage()
  eq(#made, 3, "allocating finalizers ran")
  eq(made[1][2], 3, "and in reverse order")
end

-- Finalizers of objects still alive run when the state closes, after the last print.
KEEP_ALIVE_TOO = setmetatable({}, {__gc = function() print("finalizer at close: first registered, runs last") end})
KEEP_ALIVE = setmetatable({}, {__gc = function() print("finalizer at close: runs first") end})

-- Collection during iteration with weak tables.
do
  local w = setmetatable({}, {__mode = "k"})
  local keys = {}
  for i = 1, 50 do keys[i] = {} w[keys[i]] = i end
  for i = 1, 50, 2 do keys[i] = false end
  collectgarbage()
  local sum = 0
  for k, v in pairs(w) do sum = sum + v end
  eq(sum, 650, "even entries kept")
end

-- Coroutines are collectable; a suspended coroutine keeps its locals.
do
  local w = setmetatable({}, {__mode = "v"})
  local co = coroutine.wrap(function() local t = {} w[1] = t coroutine.yield() return t end)
  co()
  collectgarbage()
  check(w[1] ~= nil, "suspended coroutine keeps its locals alive")
  co = nil
  collectgarbage()
  eq(w[1], nil, "unreachable coroutine collected with its locals")
end

T.done()
