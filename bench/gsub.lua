-- gsub with each replacement kind: string (with captures), table, function; anchors.
local parts = {}
for i = 1, 40000 do parts[i] = "name" .. (i % 50) .. " = value" .. i end
local text = table.concat(parts, "\n")
local map = {}
for i = 0, 49 do map["name" .. i] = (i % 2 == 0) and ("N" .. i) or false end
local h = 0
local function hash(s) for i = 1, #s, 97 do h = (h * 33 + s:byte(i)) % 4294967296 end end
local rounds = tonumber(arg and arg[1]) or 6
for _ = 1, rounds do
  local a, na = text:gsub("(%w+) = (%w+)", "%2 := %1")
  local b, nb = text:gsub("name%d+", map)
  local c, nc = text:gsub("value(%d+)", function(d) return d % 3 == 0 and "#" .. d or nil end)
  local d, nd = text:gsub("^name", "N", 1)
  local e, ne = text:gsub("%s+", " ")
  hash(a); hash(b); hash(c); hash(d); hash(e)
  h = (h + na + nb + nc + nd + ne) % 4294967296
end
print(h)
