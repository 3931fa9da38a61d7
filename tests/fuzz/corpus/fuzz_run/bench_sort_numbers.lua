-- table.sort of 1,000,000 numbers (integers and floats mixed), default comparator.
local seed = 12345
local function rnd() seed = (seed * 1103515245 + 12345) % 2147483648; return seed end
local n = tonumber(arg and arg[1]) or 1000000
local t = {}
for i = 1, n do t[i] = i % 3 == 0 and rnd() / 7 or rnd() end
table.sort(t)
local ok, h = true, 0
for i = 2, n do if t[i - 1] > t[i] then ok = false end end
for i = 1, n, 1000 do h = (h + math.floor(t[i])) % 1000000007 end
print(ok, h)
