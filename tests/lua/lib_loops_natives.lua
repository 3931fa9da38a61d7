-- The library functions compiled code computes in place (math.floor, ceil, abs, sqrt,
-- min and max of two, string.len, string.byte for one result, ipairs, pairs, next, `#`)
-- and generic `for` loops (manual §3.3.5, §6.1, §6.4, §6.7): each at its edges, and with
-- what makes it the library's again (coercions, metamethods, errors, closing values).
-- Under --jit=eager every function here is compiled at its first call (none ends in a
-- call whose results it returns: those are the interpreter's).

local function show(...)
  local out = {}
  for i = 1, select('#', ...) do
    local v = select(i, ...)
    out[i] = math.type(v) == 'float' and string.format('%.17g(f)', v) or tostring(v)
  end
  print(table.concat(out, ' '))
end

local function rounding(x)
  local f, c = math.floor(x), math.ceil(x)
  return f, c
end
for _, x in ipairs({0, -0.0, 2.5, -2.5, 7, -7, 2^53 + 0.5, 2^63, -2^63, 2^70, 1/0, -1/0, 1e-300, '4.5'}) do
  show(x, rounding(x))
end
local nan = 0 / 0
print(math.floor(nan) ~= math.floor(nan), math.ceil(nan) ~= math.ceil(nan))

local function absolute(x)
  local a = math.abs(x)
  return a
end
for _, x in ipairs({0, -0.0, -3, 3, -2.5, math.mininteger, math.maxinteger, -1/0, '-8'}) do show(x, absolute(x)) end

local function roots(x)
  local r = math.sqrt(x)
  return r
end
for _, x in ipairs({0, 4, 2, 2.25, 1e308, '9'}) do show(x, roots(x)) end
print(roots(-1) ~= roots(-1))

local function least(a, b)
  local lo, hi = math.min(a, b), math.max(a, b)
  return lo, hi
end
for _, p in ipairs({{1, 2}, {2, 1}, {2, 2.0}, {2.0, 2}, {-0.0, 0.0}, {0.0, -0.0}, {1.5, 2}, {3, 2.5},
                    {math.mininteger, math.maxinteger}, {'a', 'b'}, {'10', '9'}}) do
  show(p[1], p[2], least(p[1], p[2]))
end
print(select(2, least(nan, 1)) ~= select(2, least(nan, 1)), least(1, nan))

local function bytes(s, i)
  local b, first, n = string.byte(s, i), string.byte(s), string.len(s)
  return b, first, n
end
for _, c in ipairs({{'abc', 1}, {'abc', 3}, {'abc', 4}, {'abc', 0}, {'abc', -1}, {'abc', -3}, {'abc', -4},
                    {'\200\0\255', 1}, {'\200\0\255', 2}, {'\200\0\255', 3}, {'', 1}, {123, 2}, {'xyz', '2'}}) do
  show(#tostring(c[1]), c[2], bytes(c[1], c[2]))
end

local function len(v)
  local n = #v
  return n
end
print(len('hello'), len(''), len('a\0b'), len({1, 2, 3}), len({n = 1}),
      len(setmetatable({1}, {__len = function() return 42 end})),
      len(setmetatable({1, 2}, {__index = function() return 0 end})))
print(pcall(len, 5))

-- ipairs: stops at the first nil; reads through __index; integers stored in the hash part.
local function ipairsSum(t)
  local n, s = 0, 0
  for i, v in ipairs(t) do n, s = i, s + v end
  return n, s
end
local sparse = {}
sparse[3], sparse[2], sparse[1] = 30, 20, 10
print(ipairsSum({1, 2, 3}), ipairsSum({1, 2, nil, 4}), ipairsSum({}), ipairsSum(sparse))
print(ipairsSum(setmetatable({1}, {__index = function(_, k) if k <= 4 then return k * 100 end end})))
local grown = {1}
for i, v in ipairs(grown) do
  if i < 5 then grown[i + 1] = v * 2 end
end
print(#grown, grown[5])
print(pcall(ipairsSum, nil))
print(pcall(ipairsSum, {1, 'x'}))

-- pairs and next: every key once; assigning existing fields during the traversal;
-- __pairs; a removed key; next called directly.
local function keys(t)
  local ks = {}
  for k, v in pairs(t) do ks[#ks + 1] = tostring(k) .. '=' .. tostring(v) end
  table.sort(ks)
  return table.concat(ks, ',')
end
print(keys({}), keys({1, 2}), keys({a = 1, b = 2, 10, [2.5] = 'f', [true] = false}))
local doubled = {a = 1, b = 2, c = 3, 4, 5}
for k, v in pairs(doubled) do doubled[k] = v * 2 end
print(keys(doubled))
local shrinking = {a = 1, b = 2, c = 3}
for k in pairs(shrinking) do shrinking[k] = nil end
print(next(shrinking))
print(keys(setmetatable({}, {__pairs = function(t) return function(_, k) if not k then return 'only', 1 end end, t, nil end})))
local function nextLoop(t)
  local n = 0
  for k, v in next, t do n = n + v end
  return n
end
print(nextLoop({1, 2, 3, x = 4}))
print(pcall(keys, nil))
print(pcall(next, {}, 'missing'))

-- Closing values: the fourth value of a generic for is closed when the loop ends, by
-- break, by error and normally.
local log = {}
local function closer(name) return setmetatable({}, {__close = function() log[#log + 1] = name end}) end
local function closing()
  for _ in next, {1, 2}, nil, closer('end') do end
  for _ in next, {1, 2}, nil, closer('break') do break end
  pcall(function() for _ in next, {1}, nil, closer('error') do error('stop') end end)
  for _, v in ipairs({1, 2}) do
    local inner <close> = closer('inner' .. v)
  end
end
closing()
print(table.concat(log, ' '))

-- A Lua iterator and a native one no fast path knows.
local function range(n)
  return function(_, i) if i < n then return i + 1 end end, nil, 0
end
local function iterate()
  local s = 0
  for i in range(5) do s = s + i end
  for w in string.gmatch('one two three', '%a+') do s = s + #w end
  return s
end
print(iterate())

-- A callee that changes at one site, and natives called through locals and fields.
local function apply(f, x)
  local r = f(x)
  return r
end
print(apply(math.floor, 2.5), apply(math.ceil, 2.5), apply(math.abs, -2), apply(string.len, 'abcd'),
      apply(function(v) return v * 10 end, 3), apply(string.upper, 'x'))
print(pcall(apply, math.floor, {}))
print(pcall(apply, string.byte, nil))

-- Methods: through a metatable's __index table, a string's, an __index function, and a
-- field of the object itself; then computed in place.
local Account = {}
Account.__index = Account
function Account:balance() return self.amount end
local function methods(s, acct, proxy, own)
  local n = 0
  for i = 1, #s do n = n + s:byte(i) end
  n = n + s:len() + acct:balance() + proxy:twice(3) + own:get()
  return n
end
local proxy = setmetatable({}, {__index = function(_, k) return function(_, x) return x * 2 end end})
print(methods('hello', setmetatable({amount = 7}, Account), proxy, {get = function() return 100 end}))
print(pcall(methods, 'x', {}, proxy, {}))
