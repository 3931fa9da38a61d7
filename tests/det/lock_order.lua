-- A deadlock reached only under one interleaving: two tasks take two one-slot "locks"
-- (channels holding a token) in opposite orders.
local a, b = task.channel(1), task.channel(1)
a:send(true)
b:send(true)
local function worker(first, second)
  return function()
    first:recv()
    second:recv()
    second:send(true)
    first:send(true)
  end
end
local t1 = task.spawn(worker(a, b))
local t2 = task.spawn(worker(b, a))
t1:await()
t2:await()
print("both done")
