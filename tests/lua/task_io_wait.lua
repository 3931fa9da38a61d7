-- weft-only -- weft-tasks
-- Writes that block on the operating system (a full pipe) run detached from the
-- collector: collections go on while a task waits for a slow reader, and the write
-- still delivers every byte once the reader drains the pipe.
local NAME = "task_io_wait"
local T = dofile("helpers/check.lua")(NAME)
local check = T.check

local out = os.tmpname()
local pipe = assert(io.popen("sleep 0.6; cat > " .. out, "w"))
local started = task.channel(1)
local chunk = string.rep("x", 65536)
local writer = task.spawn(function()
  started:send(true)
  for _ = 1, 16 do assert(pipe:write(chunk)) end  -- 1 MiB: blocks until cat drains the pipe
  assert(pipe:flush())
  return "written"
end)
started:recv()
task.sleep(0.15)  -- the writer is blocked in its write by now

local t0 = task.now()
for _ = 1, 3 do collectgarbage() end
local dt = task.now() - t0
check(dt < 0.35, "collections do not wait for a writer blocked on a pipe: " .. dt .. " s")
check(writer:await() == "written", "the writer finished")
check(pipe:close(), "the reader exited cleanly")
local f = assert(io.open(out, "rb"))
local size = #f:read("a")
f:close()
os.remove(out)
check(size == 16 * 65536, "every byte arrived: " .. size)

-- A write whose argument is bad still writes what came before it, as in lua; and a
-- write returns its file, even after a collection moved it during the write.
local pipe3 = assert(io.popen("cat > /dev/null", "w"))
for _ = 1, 50 do
  check(pipe3:write("x") == pipe3, "write returns its file")
  collectgarbage("step")
end
pipe3:close()
local pipe2 = assert(io.popen("cat > " .. out, "w"))
local ok, err = pcall(pipe2.write, pipe2, "before", {}, "after")
check(not ok and tostring(err):find("string expected, got table", 1, true), "bad argument: " .. tostring(err))
pipe2:close()
f = assert(io.open(out, "rb"))
check(f:read("a") == "before", "the part before the bad argument was written")
f:close()
os.remove(out)

T.done()
