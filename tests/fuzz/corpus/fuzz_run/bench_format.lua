-- string.format in a loop: integers, floats, strings, %q and widths.
local n = tonumber(arg and arg[1]) or 250000
local h, len = 0, 0
for i = 1, n do
  local s = string.format("%d:%5.2f|%-8s|%x|%g|%q", i, i / 7, "k" .. i % 100, i * 31, i * 0.001, "s" .. i)
  len = len + #s
  h = (h * 31 + s:byte(#s // 2 + 1)) % 1000000007
end
print(len, h)
