local a, b, c = 1, 2
local d = a
a, b = b, a
x, y = y, x
local t = {}
t.x, t.y = 1, 2
t[a], a = a, 3
a, t[a] = 5, a
local u = t.x.y.z
t[1] = t[2]
t["long key that is definitely longer than forty characters"] = 1
_ENV.z = 1
local e = nil
local f, g = nil, nil
local h <const> = 42
local s <const> = "str"
print(h + 1, s)
