-- Nested numeric loops with integer and float arithmetic.
local n = tonumber(arg and arg[1]) or 5000
local isum, fsum = 0, 0.0
for i = 1, n do
  for j = 1, n do
    isum = isum + (i * j) % 7 + (i ~ j)
    fsum = fsum + (i + j) * 0.5
  end
end
print(isum, string.format("%.1f", fsum))
