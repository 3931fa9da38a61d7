-- A first Weft script: a greeting and something computed.
local function fib(n)
  local a, b = 0, 1
  for _ = 1, n do a, b = b, a + b end
  return a
end

local primes = {}
for n = 2, 50 do
  local prime = true
  for _, p in ipairs(primes) do
    if p * p > n then break end
    if n % p == 0 then prime = false; break end
  end
  if prime then primes[#primes + 1] = n end
end

print("Hello from " .. _VERSION .. "!")
print("fib(90) = " .. fib(90))
print("primes below 50: " .. table.concat(primes, " "))
