-- A lost update across a yield: each task reads the counter, yields, and writes back
-- what it read plus one. Run one after the other they count to 2; interleaved, one
-- update is lost. (tests/cli/deterministic.py explores it.)
local counter = 0
local tasks = {}
for i = 1, 2 do
  tasks[i] = task.spawn(function()
    local seen = counter
    task.yield()
    counter = seen + 1
  end)
end
for i = 1, 2 do tasks[i]:await() end
print("counter", counter)
assert(counter == 2, "lost update")
