-- Integer keys the array part cannot hold: strided (i*7919, i*1024) and pseudo-random
-- (an LCG). Each set is inserted into a fresh table, read back (hits), then probed for
-- absent neighbours (misses).
local n = tonumber(arg and arg[1]) or 1500000

local function fill(keys)
  local t = {}
  for i = 1, n do t[keys[i]] = i end
  local sum, misses = 0, 0
  for i = 1, n do sum = sum + t[keys[i]] end
  for i = 1, n do
    if t[keys[i] + 1] == nil then misses = misses + 1 end
  end
  return sum + misses
end

local strided, pow2, randoms = {}, {}, {}
local seed = 12345
for i = 1, n do
  strided[i] = i * 7919
  pow2[i] = i * 1024
  seed = (seed * 1103515245 + 12345) % 2147483648
  randoms[i] = seed * 4
end

print(fill(strided), fill(pow2), fill(randoms))
