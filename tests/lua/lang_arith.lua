-- Operators (manual §3.4.1-3.4.6): arithmetic, bitwise, comparison and concatenation on
-- every subtype pair; integer wrap-around; floor division and modulo signs; division by
-- zero, infinities and NaN; shifts; int/float comparisons at the 2^53 and 2^63 edges.
-- The operator matrix at the end is printed and compared with lua5.4's output through
-- NAME.expected.
local NAME = "lang_arith"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function errorOf(f)
  local ok, msg = pcall(f)
  return not ok and tostring(msg):gsub("^[^:]*:%d+: ", "") or "no error"
end
local maxi, mini = math.maxinteger, math.mininteger

-- Integer arithmetic wraps around (two's complement).
eq(maxi + 1, mini, "maxinteger + 1")
eq(mini - 1, maxi, "mininteger - 1")
eq(maxi * 2, -2, "maxinteger * 2")
eq(-mini, mini, "-mininteger")
eq(mini * -1, mini, "mininteger * -1")
eq(mini // -1, mini, "mininteger // -1")
eq(mini % -1, 0, "mininteger % -1")
eq(maxi + 1.0, 2^63, "float addition does not wrap")

-- Floor division and modulo with negative operands.
eq(7 // 2, 3, "7 // 2")
eq(-7 // 2, -4, "-7 // 2")
eq(7 // -2, -4, "7 // -2")
eq(-7 // -2, 3, "-7 // -2")
eq(7 % 3, 1, "7 % 3")
eq(-7 % 3, 2, "-7 % 3")
eq(7 % -3, -2, "7 % -3")
eq(-7 % -3, -1, "-7 % -3")
eq(7.0 // 2, 3.0, "7.0 // 2")
eq(-7.5 // 2, -4.0, "-7.5 // 2")
eq(7.5 % 2, 1.5, "7.5 % 2")
eq(-7.5 % 2, 0.5, "-7.5 % 2")
eq(7.5 % -2, -0.5, "7.5 % -2")
eq(5.3 % 1 < 1, true, "float modulo in range")
eq(3 % math.huge, 3.0, "x % inf")
eq(-3 % math.huge, math.huge, "-x % inf")
eq(3 % -math.huge, -math.huge, "x % -inf")

-- Integer division by zero is an error; float division gives inf or nan.
-- (lua 5.4.4's messages: "attempt to divide by zero" for //, "attempt to perform 'n%%0'"
-- for %, the latter formatted through %% to a single percent sign.)
eq(errorOf(function() return 1 // 0 end), "attempt to divide by zero", "1 // 0")
eq(errorOf(function() return 1 % 0 end), "attempt to perform 'n%0'", "1 % 0")
local zero = 0
eq(errorOf(function() return 5 // zero end), "attempt to divide by zero", "runtime n // 0")
eq(errorOf(function() return 5 % zero end), "attempt to perform 'n%0'", "runtime n % 0")
eq(errorOf(function() return mini // zero end), "attempt to divide by zero", "mininteger // 0")
eq(1 / 0, math.huge, "1 / 0")
eq(-1 / 0, -math.huge, "-1 / 0")
eq(1.0 // 0, math.huge, "1.0 // 0")
eq(-1 // 0.0, -math.huge, "-1 // 0.0")
local nan = 0 / 0
check(nan ~= nan, "0/0 is nan")
local r = 1 % 0.0
check(r ~= r, "1 % 0.0 is nan")
eq(1 / -0.0, -math.huge, "1 / -0.0")

-- Exponentiation and division always give floats.
eq(2 ^ 2, 4.0, "2 ^ 2")
eq(2 ^ -1, 0.5, "2 ^ -1")
eq(4 / 2, 2.0, "4 / 2")
eq((-8) ^ (1 / 3) ~= (-8) ^ (1 / 3), true, "negative base, fractional exponent is nan")
eq(2 ^ 3 ^ 2, 512.0, "^ is right associative")
eq(-2 ^ 2, -4.0, "unary minus binds looser than ^")

-- Bitwise operators on integers and integral floats.
eq(0xF0 & 0x3C, 0x30, "&")
eq(0xF0 | 0x0F, 0xFF, "|")
eq(0xFF ~ 0x0F, 0xF0, "~ (xor)")
eq(~0, -1, "~0")
eq(1 << 63, mini, "1 << 63")
eq(1 << 64, 0, "shift by 64")
eq(1 << 100, 0, "shift by more than 64")
eq(-1 >> 1, maxi, "logical right shift")
eq(-1 >> 64, 0, ">> 64")
eq(1 << -1, 0, "negative left shift shifts right")
eq(2 >> -1, 4, "negative right shift shifts left")
eq(8 >> 1, 4, "8 >> 1")
eq(3.0 | 0, 3, "integral float converts")
eq(math.type(3.0 | 0), "integer", "bitwise result is integer")
eq(errorOf(function() return 3.5 | 0 end), "number has no integer representation", "3.5 | 0")
eq(errorOf(function() return 2^63 | 0 end), "number has no integer representation", "2^63 | 0")
eq(errorOf(function() return {} | 0 end), "attempt to perform bitwise operation on a table value", "table | 0")
eq(1 | 2 ~ 3 & 4, 3, "precedence & over ~ over |")
eq(1 << 2 + 1, 8, "shift looser than +")

-- Comparisons across subtypes, exact at the edges.
eq(1 < 1.5, true, "1 < 1.5")
eq(2^53 < (1 << 53) + 1, true, "2^53 < 2^53 + 1 (int)")
eq((1 << 53) + 1 > 2^53, true, "int 2^53+1 > float 2^53")
eq(maxi < 2^63, true, "maxinteger < 2^63")
eq(maxi + 0.0 == 2^63, true, "maxinteger converts to 2^63 as float")
eq(maxi == 2^63, false, "but maxinteger ~= 2^63")
eq(mini == -2^63, true, "mininteger == -2^63")
eq(mini <= -2^63, true, "mininteger <= -2^63")
eq(mini < -2^63, false, "not mininteger < -2^63")
eq(maxi >= 2^63, false, "maxinteger >= 2^63 is false")
eq(1 < math.huge, true, "int < inf")
eq(mini > -math.huge, true, "int > -inf")
eq(1 < nan, false, "int < nan")
eq(1 > nan, false, "int > nan")
eq(nan <= nan, false, "nan <= nan")
eq("a" < "b", true, "string <")
eq("a" < "ab", true, "prefix is smaller")
eq("Z" < "a", true, "byte order")
eq("a\0b" < "a\0c", true, "embedded zeros compare")
eq("" < "a", true, "empty string smallest")
eq(errorOf(function() return 1 < "2" end), "attempt to compare number with string", "1 < '2'")
eq(errorOf(function() return {} < {} end), "attempt to compare two table values", "{} < {}")
eq(errorOf(function() return nil <= 1 end), "attempt to compare nil with number", "nil <= 1")

-- Concatenation.
eq(1 .. 2, "12", "int .. int")
eq(1.0 .. "", "1.0", "float .. string")
eq("a" .. "b" .. "c", "abc", "chain")
eq(-0.0 .. "|" .. 1e100, "-0.0|1e+100", "float formats")
eq(errorOf(function() return "a" .. {} end), "attempt to concatenate a table value", "string .. table")
eq(errorOf(function() return nil .. "a" end), "attempt to concatenate a nil value", "nil .. string")
eq(errorOf(function() local t = true; return "x" .. t end), "attempt to concatenate a boolean value (local 't')", "local named")

-- Arithmetic errors name the operand.
eq(errorOf(function() return {} + 1 end), "attempt to perform arithmetic on a table value", "table + 1")
-- Strings coerce through the string metatable's __add etc., whose message differs.
eq(errorOf(function() local s = "x"; return s + 1 end), "attempt to add a 'string' with a 'number'", "non-numeric string")
eq(errorOf(function() local s = "x"; return 2 * s end), "attempt to mul a 'number' with a 'string'", "number * bad string")
eq(errorOf(function() return -{} end), "attempt to perform arithmetic on a table value", "unary minus on table")
eq(errorOf(function() return ~1.5 end), "number has no integer representation", "~1.5")

-- Constant folding: an operator on two literals, compiled through load so the compiler
-- may fold it, gives what the same operator gives at run time (floor modulo of two
-- negative floats once folded to -9.0). No -0.0 operand: lua5.4 compiles "x - 0" as
-- "x + -0", so its own folded and run-time results differ in the sign of a zero there.
eq(-4.0 % -5, -4.0, "folded -4.0 % -5")
eq(-4 % -5.0, -4.0, "folded -4 % -5.0")
eq(-7.5 % -2, -1.5, "folded -7.5 % -2")
do
  local nums = {3, -4, -5, 0.0, 2.5, -4.0, maxi, mini, -math.huge}
  local function literal(v)
    if v == mini then return "(-9223372036854775807 - 1)" end
    if math.type(v) == "integer" then return tostring(v) end
    if v == math.huge then return "1e999" elseif v == -math.huge then return "-1e999" end
    return string.format("%.17g", v):find("[%.e]") and string.format("%.17g", v)
      or string.format("%.17g", v) .. ".0"
  end
  local function shown(ok, v)
    if not ok then return "E" end
    if math.type(v) == "float" then return string.format("%.17g", v) .. "f" end
    return tostring(v)
  end
  local opers = {"+", "-", "*", "/", "//", "%", "^", "&", "|", "~", "<<", ">>",
                 "==", "~=", "<", "<=", ">", ">="}
  local differ = 0
  for _, op in ipairs(opers) do
    local src, pairs_ = {"local r = {}"}, {}
    for _, a in ipairs(nums) do
      for _, b in ipairs(nums) do
        pairs_[#pairs_ + 1] = {a, b}
        src[#src + 1] = string.format("r[%d] = function() return (%s) %s (%s) end",
                                      #pairs_, literal(a), op, literal(b))
      end
    end
    src[#src + 1] = "return r"
    local folded = assert(load(table.concat(src, "\n")))()
    local runtime = assert(load("return function(a, b) return a " .. op .. " b end"))()
    for i, p in ipairs(pairs_) do
      local want = shown(pcall(runtime, p[1], p[2]))
      local got = shown(pcall(folded[i]))
      if got ~= want then
        differ = differ + 1
        if differ <= 5 then
          print("folded " .. literal(p[1]) .. " " .. op .. " " .. literal(p[2]) .. " = " ..
                got .. ", run time " .. want)
        end
      end
    end
  end
  eq(differ, 0, "folded and run-time operators agree")
end

-- The operator matrix: every operator on every pair of sample operands.
local samples = {0, 1, -7, 3, 0.0, -0.0, 2.5, -3.5, maxi, mini, 2^53, math.huge, -math.huge, 0/0, "10", "0x10", "2.5"}
local function show(v)
  if math.type(v) == "float" then return string.format("%.17g", v) .. "f" end
  return tostring(v)
end
local ops = {
  {"+", function(a, b) return a + b end}, {"-", function(a, b) return a - b end},
  {"*", function(a, b) return a * b end}, {"/", function(a, b) return a / b end},
  {"//", function(a, b) return a // b end}, {"%", function(a, b) return a % b end},
  {"^", function(a, b) return a ^ b end}, {"&", function(a, b) return a & b end},
  {"|", function(a, b) return a | b end}, {"~", function(a, b) return a ~ b end},
  {"<<", function(a, b) return a << b end}, {">>", function(a, b) return a >> b end},
  {"==", function(a, b) return a == b end}, {"<", function(a, b) return a < b end},
  {"<=", function(a, b) return a <= b end}, {"..", function(a, b) return a .. b end},
}
local lines = 0
for _, op in ipairs(ops) do
  local row = {}
  for _, a in ipairs(samples) do
    for _, b in ipairs(samples) do
      local ok, v = pcall(op[2], a, b)
      row[#row + 1] = ok and show(v) or "E"
    end
  end
  print(op[1], table.concat(row, " "))
  lines = lines + 1
end
eq(lines, #ops, "matrix printed")
for _, a in ipairs(samples) do
  local okU, u = pcall(function() return -a end)
  local okN, n = pcall(function() return ~a end)
  print("unary", show(a), okU and show(u) or "E", okN and show(n) or "E")
end

T.done()
