-- Powers, shifts and bitwise not, with operands only known at run time: the loops run
-- long enough for the JIT to compile them (docs/design/jit.md, "Guards and exits"), and
-- the edge cases (shifts of 64 and more either way, INT64_MIN, exact and inexact floats,
-- strings, metamethods) go through the same instructions afterwards.
local function show(...) print(...) end

local values = {0, 1, -1, 3, 63, 64, 65, -63, -64, -65, math.maxinteger, math.mininteger, 0x5a5a}
local function shifts(rounds)
  local acc = 0
  for round = 1, rounds do
    for i = 1, #values do
      local x, n = values[i], values[(i + round) % #values + 1]
      acc = acc ~ (x << n) ~ (x >> n) ~ ~x ~ (x >> 3) ~ (x << 5) ~ (2 << n)
    end
  end
  return acc
end
show("shifts", shifts(1), shifts(3000))

-- One line per row value: cell(x, y) for each column value y.
local function grid(rows, columns, cell)
  for _, x in ipairs(rows) do
    local row = {}
    for _, y in ipairs(columns) do row[#row + 1] = cell(x, y) end
    show(x, table.concat(row, " "))
  end
end
grid(values, values, function(x, n) return string.format("%x/%x", x << n, x >> n) end)

local function powers(rounds)
  local sum = 0.0
  for round = 1, rounds do
    local x = round % 7 - 3
    sum = sum + x ^ 2 + x ^ 0.5 + 2 ^ x + x ^ round % 3
  end
  return sum
end
show("powers", powers(1), powers(3000))
local bases, exps = {2, -2, 0, 0.5, -0.0, 1e308, math.huge, -math.huge}, {2, 3, -1, 0.5, 0, -0.0, 1e9, math.huge}
grid(bases, exps, function(b, e) return tostring(b ^ e) end)

-- Floats with an exact integer value shift and negate as integers; others raise.
local function floats(rounds)
  local acc = 0
  for round = 1, rounds do acc = acc ~ (round * 1.0 << 2) ~ ~(round * 2.0) end
  return acc
end
show("floats", floats(3000))
for _, bad in ipairs({2.5, "3", {}, math.huge}) do
  show(pcall(function() return bad << 1 end))
  show(pcall(function() return 1 >> bad end))
  show(pcall(function() return ~bad end))
end
show(pcall(function() return "2" ^ 3 end))
show(pcall(function() return {} ^ 3 end))

-- Metamethods run where the operands are no numbers, also after the loop compiled.
local mt = {__shl = function(a, b) return "shl" end, __shr = function(a, b) return "shr" end,
            __bnot = function(a) return "bnot" end, __pow = function(a, b) return "pow" end}
local function mixed(rounds)
  local t = setmetatable({}, mt)
  local out = {}
  for round = 1, rounds do
    local v = round < rounds and round or t
    local r1, r2, r3, r4 = v << 1, v >> 1, ~v, v ^ 2
    if round == rounds then out = {r1, r2, r3, r4} end
  end
  return table.concat(out, " ")
end
show("mixed", mixed(3000))
