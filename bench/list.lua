-- Linked lists: cons cells built, mapped, filtered, reversed and dropped every round,
-- with one long-lived list replaced now and then, so most cells die young and some
-- survive a while (the collector's nursery and promotion).
local function range(n)
  local list = nil
  for i = n, 1, -1 do list = {head = i, tail = list} end
  return list
end

local function reverse(list)
  local out = nil
  while list do
    out = {head = list.head, tail = out}
    list = list.tail
  end
  return out
end

-- Builds in reverse, then reverses: map and filter keep the list's order.
local function map(f, list)
  local out = nil
  while list do
    out = {head = f(list.head), tail = out}
    list = list.tail
  end
  return reverse(out)
end

local function filter(keep, list)
  local out = nil
  while list do
    if keep(list.head) then out = {head = list.head, tail = out} end
    list = list.tail
  end
  return reverse(out)
end

local function fold(f, acc, list)
  while list do
    acc = f(acc, list.head)
    list = list.tail
  end
  return acc
end

local function square(x) return x * x % 1000003 end
local function odd(x) return x % 2 == 1 end
local function add(a, b) return a + b end
local function count(a) return a + 1 end

local rounds = tonumber(arg and arg[1]) or 2000
local kept, checksum = range(10), 0
for round = 1, rounds do
  local list = range(1000)
  local squares = filter(odd, map(square, list))
  checksum = (checksum + fold(add, 0, squares) + fold(count, 0, squares)) % 1000000007
  if round % 50 == 0 then kept = map(square, list) end
end
print(rounds, checksum, fold(add, 0, kept))
