-- A big long-lived array receiving a few new tables while short-lived ones are made by
-- the million: the collector's minor pause must not grow with the old array (card
-- marking, docs/design/gc-v2.md "Cards"); `weft --stats` shows the minor pauses.
local n = tonumber(arg and arg[1]) or 1000000
local big = {}
for i = 1, n do big[i] = i end
collectgarbage()
local sum = 0
for r = 1, 3 * n do
  local t = {r}
  if r % 1000 == 0 then big[(r * 7919) % n + 1] = t end
  sum = sum + #t
end
local tables = 0
for i = 1, n do
  if type(big[i]) == "table" then tables = tables + 1 end
end
print(n, sum, tables)
