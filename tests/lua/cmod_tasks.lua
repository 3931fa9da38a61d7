-- weft-only -- weft-tasks
-- C modules from many tasks at once: 16 tasks call lpeg.match, cjson.encode/decode and
-- lfs.attributes in loops on shared module tables; every result must be right, with no
-- crash and no deadlock (each C library runs one call at a time, docs/design/c-api.md).
local NAME = "cmod_tasks"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local lpeg, cjson, lfs = require "lpeg", require "cjson", require "lfs"

local number = lpeg.C(lpeg.R "09" ^ 1) / tonumber
local list = lpeg.Ct(number * ("," * number) ^ 0) * -1
local here = lfs.currentdir()

local function work(id)
  local bad = 0
  for i = 1, 200 do
    local text = id .. "," .. i .. "," .. id * i
    local t = lpeg.match(list, text)
    if not t or t[1] ~= id or t[2] ~= i or t[3] ~= id * i then bad = bad + 1 end
    local doc = cjson.encode({id = id, i = i, tags = {"a", "b", text}})
    local back = cjson.decode(doc)
    if back.id ~= id or back.i ~= i or back.tags[3] ~= text then bad = bad + 1 end
    if lfs.attributes(here, "mode") ~= "directory" then bad = bad + 1 end
    if i % 50 == 0 then task.yield() end
  end
  return id, bad
end

local tasks = {}
for id = 1, 16 do tasks[id] = task.spawn(work, id) end
for id = 1, 16 do
  local got, bad = tasks[id]:await()
  eq(got, id, "task " .. id .. " result")
  eq(bad, 0, "task " .. id .. " wrong results")
end

-- require from tasks finds the module the main task loaded.
local loaded = task.channel(16)
for _ = 1, 8 do task.spawn(function() loaded:send(require "lpeg") end) end
for _ = 1, 8 do check(loaded:recv() == lpeg, "require from a task gives the same module") end
T.done()
