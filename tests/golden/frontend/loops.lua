local s = 0
for i = 1, 10 do s = s + i end
for i = 10, 1, -1 do s = s + i end
for i = 1.0, 2.0, 0.5 do s = s + i end
for k, v in pairs({}) do s = s + v end
for a, b, c, d in next, {} do s = a end
while s > 0 do s = s - 1 if s == 5 then break end end
repeat local q = s; s = s + 1 until q > 10
repeat local q = s; local f = function() return q end until f() > 10
for i = 1, 3 do local x = i; local g = function() return x end end
while true do end
