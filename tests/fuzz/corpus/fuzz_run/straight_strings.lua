local s = string.rep("ab", 10, ",")
local t = {s:byte(1, -1)}
local u = string.format("%q %5.2f %x %s", s, 3.14159, 255, #t)
local a, b = string.find(u, "(%d+)%.(%d+)")
local g = string.gsub(u, "%s+", "_")
local p = string.pack("<i4 d s1", 7, 2.5, "xy")
local q1, q2, q3 = string.unpack("<i4 d s1", p)
local c = table.concat({q1, q2, q3, a, b, g}, "|")
return utf8.char(72, 228, 8364) .. c:upper():sub(2, -2):reverse()
