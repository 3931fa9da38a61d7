local a, b = {}, 1
a[b], b = 1, 2
b, a[b] = 3, 4
a, a.x = {}, 5
local i = 1
i, a[i] = i + 1, 20
x, x.y = 1, 2
local function f() x, x.y = 1, 2 end
