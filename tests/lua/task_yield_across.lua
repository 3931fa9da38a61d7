-- weft-only -- weft-tasks
-- Task switches through natives that call back into Lua with a continuation: a channel
-- wait, task.yield and preemption inside a pcall or xpcall run natively, a dofile'd
-- chunk, a __pairs metamethod, a __close on return and while an error unwinds; and a
-- wait where no continuation exists (table.sort's comparator) still works, by blocking.
-- With lang_yield_across, the checker of vm/thread.h invariants 5 and 6.
local NAME = "task_yield_across"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function waitFor(t, status)
  local deadline = task.now() + 3
  while t:status() ~= status and task.now() < deadline do task.sleep(0.001) end
  return t:status()
end
local function closer(f) return setmetatable({}, {__close = f}) end

-- Each body waits on `ch` somewhere inside a native: the wait suspends the task there
-- (before continuations, it blocked its worker's thread instead), and the value sent
-- comes back through the native's continuation.
local function suspendsIn(what, body)
  local ch = task.channel()
  local t = task.spawn(body, ch)
  eq(waitFor(t, "suspended"), "suspended", what .. ": the task suspends")
  ch:send("v")
  return t:await()
end

local ok, v = suspendsIn("native pcall", function(ch) return select(2, pcall(pcall, ch.recv, ch)) end)
check(ok == true and v == "v", "native pcall: the value comes back")
ok, v = suspendsIn("native xpcall", function(ch)
  return select(2, pcall(xpcall, function() return ch:recv() end, debug.traceback))
end)
check(ok == true and v == "v", "native xpcall: the value comes back")
local msg = suspendsIn("error after a wait", function(ch)
  local _, _, e = pcall(pcall, function() error("after " .. ch:recv(), 0) end)
  return e
end)
eq(msg, "after v", "native pcall: error after a wait")

local path = os.tmpname()
local f = assert(io.open(path, "w"))
f:write("local ch = ...\nreturn 'file ' .. YIELD_ACROSS_CH:recv()\n")
f:close()
YIELD_ACROSS_CH = nil
do
  local ch = task.channel()
  YIELD_ACROSS_CH = ch
  local t = task.spawn(dofile, path)
  eq(waitFor(t, "suspended"), "suspended", "dofile: the task suspends")
  ch:send("v")
  eq(t:await(), "file v", "dofile: the chunk's result")
end
YIELD_ACROSS_CH = nil
os.remove(path)

eq(suspendsIn("__pairs", function(ch)
  local obj = setmetatable({}, {__pairs = function()
    local got = ch:recv()
    return function(_, k) if not k then return 1, got end end, nil, nil
  end})
  for _, x in pairs(obj) do return "pairs " .. x end
end), "pairs v", "__pairs: the loop sees the value")

eq(suspendsIn("__close on return", function(ch)
  local seen
  local function g()
    local x <close> = closer(function() seen = ch:recv() end)
    return "ret"
  end
  local r = g()
  return r .. " " .. seen
end), "ret v", "__close on return")

eq(suspendsIn("__close while unwinding", function(ch)
  local seen
  local _, e = pcall(function()
    local x <close> = closer(function(_, err) seen = err .. " " .. ch:recv() end)
    error("E", 0)
  end)
  return e .. "/" .. seen
end), "E/E v", "__close while an error unwinds")

-- Preemption inside a native pcall: a loop that only a peer can end.
do
  local flag = false
  local spinner = task.spawn(function()
    return select(2, pcall(pcall, function()
      local n = 0
      while not flag and n < 50000000 do n = n + 1 end
      return flag
    end))
  end)
  task.spawn(function() flag = true end):await()
  local _, sawFlag = spinner:await()
  eq(sawFlag, true, "a loop inside a native pcall is preempted")
end

-- No continuation in table.sort: the wait blocks its worker instead, and still works.
do
  local ch = task.channel(1)
  ch:send(1)
  local t = task.spawn(function()
    local a = {3, 1, 2}
    local took = 0
    table.sort(a, function(x, y)
      if took == 0 then took = ch:recv() end
      task.yield()
      return x < y
    end)
    return table.concat(a, ",") .. " " .. took
  end)
  eq(t:await(), "1,2,3 1", "sort's comparator waits without suspending")
end

T.done()
