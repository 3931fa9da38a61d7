local a, b = ...
local r
r = a == b; r = a ~= b; r = a < b; r = a <= b; r = a > b; r = a >= b
r = a == 1; r = 1 == a; r = a == "x"; r = a ~= nil; r = a == true; r = a == 1.0; r = a == 1.5
r = a < 1; r = 1 < a; r = a <= 2.0; r = a > 3; r = a >= 4; r = 5 >= a; r = a < 1000
r = a and b; r = a or b; r = a and b or r; r = not (a and b)
r = a == b and a or b
if a < b and b < 10 or a == "q" then r = 1 end
if not a then r = 2 end
if a ~= nil then r = 3 end
if nil then r = 4 end
if true then r = 5 end
while a and not b do a = a - 1 end
