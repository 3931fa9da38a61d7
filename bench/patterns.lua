-- Pattern matching over a large generated text: find, match, gmatch with captures.
local function lcg(seed) return function() seed = (seed * 1103515245 + 12345) % 2147483648; return seed end end
local rnd = lcg(42)
local words = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"}
local lines = {}
local n = tonumber(arg and arg[1]) or 60000
for i = 1, n do
  local w1, w2 = words[rnd() % 10 + 1], words[rnd() % 10 + 1]
  lines[i] = string.format("%05d %s=%d; %s.%s@example.org (%d)", i, w1, rnd() % 1000, w2, w1, rnd() % 97)
end
local text = table.concat(lines, "\n")
local n1 = 0
for k, v in text:gmatch("(%a+)=(%d+)") do n1 = n1 + #k + tonumber(v) end
local n2 = 0
for user, host in text:gmatch("([%w%.]+)@([%w%.]+)") do n2 = n2 + #user + #host end
local n3, pos = 0, 1
while true do
  local s, e = text:find("theta", pos, true)
  if not s then break end
  n3, pos = n3 + 1, e + 1
end
local n4 = 0
for line in text:gmatch("[^\n]+") do
  local num, paren = line:match("^(%d+).-%((%d+)%)$")
  if num then n4 = n4 + tonumber(num) % 7 + tonumber(paren) end
end
local n5 = select(2, text:gsub("%f[%a]eta%f[%A]", ""))
print(n1, n2, n3, n4, n5)
