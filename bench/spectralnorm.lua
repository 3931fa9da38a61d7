-- Spectral norm of an infinite matrix: float loops and function calls.
local function A(i, j)
  local ij = i + j - 1
  return 1.0 / (ij * (ij - 1) * 0.5 + i)
end
local function Av(x, y, n)
  for i = 1, n do
    local a = 0
    for j = 1, n do a = a + x[j] * A(i, j) end
    y[i] = a
  end
end
local function Atv(x, y, n)
  for i = 1, n do
    local a = 0
    for j = 1, n do a = a + x[j] * A(j, i) end
    y[i] = a
  end
end
local function AtAv(x, y, t, n) Av(x, t, n); Atv(t, y, n) end
local n = tonumber(arg and arg[1]) or 600
local u, v, t = {}, {}, {}
for i = 1, n do u[i] = 1 end
for _ = 1, 10 do AtAv(u, v, t, n); AtAv(v, u, t, n) end
local vBv, vv = 0, 0
for i = 1, n do
  local ui, vi = u[i], v[i]
  vBv, vv = vBv + ui * vi, vv + vi * vi
end
print(string.format("%0.9f", math.sqrt(vBv / vv)))
