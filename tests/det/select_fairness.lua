-- A select fairness assumption: with both cases ready, the code assumes the urgent
-- channel always wins. task.select picks among ready cases at random.
local urgent, normal = task.channel(1), task.channel(1)
urgent:send("urgent")
normal:send("normal")
local i, v = task.select({ { urgent, "recv" }, { normal, "recv" } })
print("first", v)
assert(v == "urgent", "select served the normal channel first")
