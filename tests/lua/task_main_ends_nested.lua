-- weft-only -- weft-tasks
-- A task that the main thread runs waits under a native frame (a gsub function) for a
-- value nobody sends, and the main chunk ends inside that wait (it went on there after
-- its own wait ended): the end of the program cancels the task, as it cancels any task
-- still waiting, and the embedder's call returns.
local c = task.channel()
task.spawn(function()
  return (("a"):gsub("%a", function(x) c:send(x); return c:recv() end))
end)
print("main got", c:recv())
print("main done")
