-- String building: concatenation in a loop, string.rep/sub/byte, table.concat.
local n = tonumber(arg and arg[1]) or 300000
local parts = {}
for i = 1, n do parts[#parts + 1] = "item" .. i .. ";" end
local joined = table.concat(parts)
local s = ""
for i = 1, 20000 do s = s .. string.char(97 + i % 26) end
local h = 0
for i = 1, #joined, 7 do h = (h * 31 + joined:byte(i)) % 1000000007 end
local upper = 0
for i = 1, 200 do upper = upper + #(s:sub(i, i + 500):upper() .. s:rep(2, "-"):sub(1, 100)) end
print(#joined, #s, h, upper)
