-- A big long-lived heap built while short-lived garbage churns, then reshaped: every
-- round replaces one slot in seven with a new table and asks for a full collection. It
-- measures what a major costs in time and in peak memory once most of the heap is old
-- (a copying major needs the live heap twice; a mark-region one does not).
local n = tonumber(arg and arg[1]) or 600000

local keep = {}
local churn = 0
for i = 1, n do
  keep[i] = {i, tostring(i)}
  local garbage = {i, i + 1}
  churn = churn + #garbage
end

for round = 1, 5 do
  for i = 1, n, 7 do keep[i] = {i * round, "r"} end
  collectgarbage()
end

local check = 0
for i = 1, n do check = check + keep[i][1] end
print(check, churn)
