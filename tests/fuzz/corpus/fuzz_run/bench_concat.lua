-- table.concat of many small pieces, with and without separators and ranges.
local n = tonumber(arg and arg[1]) or 1000000
local pieces = {}
for i = 1, n do pieces[i] = i % 10 == 0 and tostring(i) or "x" end
local total = 0
for round = 1, 14 do
  local s = table.concat(pieces, round % 2 == 0 and "," or "")
  total = total + #s + #table.concat(pieces, "", round * 1000, round * 1000 + 5000)
end
print(total)
