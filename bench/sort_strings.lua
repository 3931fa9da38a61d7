-- table.sort of 100,000 strings with a Lua comparator (case-insensitive, then length).
local seed = 777
local function rnd() seed = (seed * 1103515245 + 12345) % 2147483648; return seed end
local n = tonumber(arg and arg[1]) or 100000
local t = {}
for i = 1, n do
  local len = rnd() % 12 + 1
  local cs = {}
  for j = 1, len do cs[j] = string.char((rnd() % 2 == 0 and 65 or 97) + rnd() % 26) end
  t[i] = table.concat(cs)
end
table.sort(t, function(a, b)
  local la, lb = a:lower(), b:lower()
  if la ~= lb then return la < lb end
  return a < b
end)
local h = 0
for i = 1, n, 100 do h = (h * 31 + #t[i] + t[i]:byte(1)) % 1000000007 end
print(t[1], t[n], h)
