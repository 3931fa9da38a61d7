-- weft-gc-interval: 500
-- Keys the array part cannot hold, in the hash part: integers with strides, negative and
-- extreme integers, floats that normalise to integers (2.0, -0.0 is 0), non-integral
-- floats and booleans, mixed with deletions. The hash part keeps such keys in Robin Hood
-- order (an insertion moves later keys of its run, a lookup stops early; table.cpp), and
-- a string key makes the part unordered: each round checks every lookup, hit or miss,
-- against an integer-keyed model, then a traversal that clears fields must visit each
-- key exactly once (manual, `next`).
local NAME = "lang_tables_keys"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

local seed = 7
local function rnd(n) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n end

-- Key number n (0 <= n < space) of a round; distinct n give distinct keys.
local shapes = {
  function(n) return n * 1024 + 4096 end,             -- a power-of-2 stride
  function(n) return n * 7919 - 500000 end,           -- a prime stride, negative keys
  function(n) return math.mininteger + n * 3 end,     -- near the extremes
  function(n) return math.maxinteger - n * 5 end,
  function(n) return (n * 2654435761) % 4294967296 + 65536 end,  -- scattered
}

local function round(r, shape, space, withString)
  local key = shapes[shape]
  local t, model, live = {}, {}, 0
  local wrong = 0
  for op = 1, space * 3 do
    local n = rnd(space)
    local c = rnd(10)
    if c < 5 then
      if model[n] == nil then live = live + 1 end
      t[key(n)] = op; model[n] = op
    elseif c < 7 then
      if model[n] ~= nil then live = live - 1 end
      t[key(n)] = nil; model[n] = nil
    else
      if t[key(n)] ~= model[n] then wrong = wrong + 1 end
      -- A neighbour of a present key that no shape produces here (keys differ by 3 or more).
      if t[key(n) + 1] ~= nil then wrong = wrong + 1 end
    end
    if withString and op == space then t.s = "x" end
  end
  eq(wrong, 0, "round " .. r .. " (shape " .. shape .. ", " .. space .. " keys): wrong lookups")
  for n = 0, space - 1 do
    if t[key(n)] ~= model[n] then wrong = wrong + 1 end
  end
  eq(wrong, 0, "round " .. r .. ": wrong lookups after the last insert")
  if withString then
    eq(t.s, "x", "round " .. r .. ": string key")
    t.s = nil
  end
  local seen, twice, count, bad = {}, 0, 0, 0
  for k, v in pairs(t) do
    count = count + 1
    if seen[k] then twice = twice + 1 end
    seen[k] = true
    if t[k] ~= v then bad = bad + 1 end
    if v % 3 == 0 then t[k] = nil end
  end
  eq(twice, 0, "round " .. r .. ": keys visited twice")
  eq(bad, 0, "round " .. r .. ": traversed values differing from the table")
  eq(count, live, "round " .. r .. ": keys visited")
end

local r = 0
for shape = 1, #shapes do
  for _, space in ipairs({6, 50, 700, 2500}) do
    r = r + 1
    round(r, shape, space, r % 2 == 0)
  end
end

-- Floats with integral values are the same keys as the integers; others are not.
local t = {}
for i = 1, 200 do t[i * 1000] = i end
t[2.0 ^ 53] = "f53"
t[-0.0] = "zero"
t[0.5] = "half"
t[true] = "yes"
t[false] = "no"
t[2 ^ 63] = "big"
eq(t[1000.0], 1, "float key 1000.0")
eq(t[200000], 200, "integer key 200000")
eq(t[math.tointeger(2 ^ 53)], "f53", "2^53 normalised")
eq(t[0], "zero", "-0.0 is key 0")
eq(t[0.0], "zero", "0.0 is key 0")
eq(t[0.5], "half", "non-integral float key")
eq(t[true], "yes", "key true")
eq(t[false], "no", "key false")
eq(t[2 ^ 63], "big", "2^63 stays a float key")
eq(t[math.maxinteger], nil, "maxinteger absent")
eq(t[math.mininteger], nil, "mininteger absent")
t[math.mininteger] = "min"
t[math.maxinteger] = "max"
eq(t[math.mininteger], "min", "key mininteger")
eq(t[math.maxinteger], "max", "key maxinteger")
local count = 0
for k in pairs(t) do
  count = count + 1
  t[k] = nil
end
eq(count, 200 + 8, "keys traversed while clearing")
eq(next(t), nil, "table empty after clearing")

T.done()
