-- Protected calls: pcall and xpcall of Lua functions and natives that return or raise,
-- and pcall called through a native (pcall(pcall, ...)): the cost of the pcall marker
-- frames, their error path and the native pcall's continuation.
local n = tonumber(arg and arg[1]) or 2000000
local function add(a, b) return a + b end
local function fail(x) error(x, 0) end
local function handler(m) return m end
local sum, errors = 0, 0
for i = 1, n do
  local _, v = pcall(add, i, 1)
  local _, m = pcall(math.max, i, 3)
  sum = sum + v + m
  if i % 4 == 0 then
    local ok, e = pcall(fail, i)
    if not ok then errors = errors + e % 3 end
    local ok2 = xpcall(fail, handler, i)
    if not ok2 then errors = errors + 1 end
  end
  if i % 8 == 0 then
    local _, _, w = pcall(pcall, add, i, 2)
    sum = sum + w
  end
end
print(sum, errors)
