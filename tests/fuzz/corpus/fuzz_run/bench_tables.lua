-- String-keyed tables: inserts, lookups, updates, deletes and iteration.
local n = tonumber(arg and arg[1]) or 200000
local keys = {}
for i = 1, n do keys[i] = "key" .. (i * 7919 % n) end
local t = {}
for round = 1, 4 do
  for i = 1, n do
    local k = keys[i]
    t[k] = (t[k] or 0) + round
  end
end
local records = {}
for i = 1, n // 4 do records[i] = {name = keys[i], size = i, kind = i % 3 == 0 and "a" or "b"} end
local sum = 0
for _, r in ipairs(records) do
  if r.kind == "a" then sum = sum + r.size + t[r.name] else sum = sum - 1 end
end
for i = 1, n, 2 do t[keys[i]] = nil end
local count = 0
for _, v in pairs(t) do count = count + v end
print(sum, count)
