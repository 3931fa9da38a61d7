local a, b = ...
if a then print(1) elseif b then print(2) elseif a == b then print(3) else print(4) end
if a then if b then print(5) end end
if a then else print(6) end
local x = a and 1 or 2
local y = (a or b) and (b or a)
local z = a == nil
local w = not not a
for i = 1, 2 do if i == a then break end end
while a do if b then break; end a = a - 1 end
