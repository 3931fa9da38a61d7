-- An order-dependent channel protocol: two producers share one channel and the consumer
-- assumes the first producer's message arrives first.
local ch = task.channel(2)
task.spawn(function() ch:send("hello") end)
task.spawn(function() ch:send("world") end)
local first = ch:recv()
local second = ch:recv()
print(first, second)
assert(first == "hello", "the greeting came second")
