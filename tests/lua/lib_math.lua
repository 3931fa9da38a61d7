-- The math library (manual §6.7): every function and constant, integer/float results,
-- limits, nan and infinities, and the seeded xoshiro256** sequence of Lua 5.4.
local NAME = "lib_math"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function isnan(x) return x ~= x end
local function err(f, ...)
  local ok, m = pcall(f, ...)
  if ok then return "no error" end
  m = tostring(m):gsub("^[^:]*:%d+: ", "")
  return (m:gsub("to '[%w%.]+' %(", "to 'F' ("))
end

-- constants
eq(math.pi, 3.141592653589793, "pi")
eq(math.huge, 1 / 0, "huge")
eq(math.maxinteger, 0x7fffffffffffffff, "maxinteger")
eq(math.mininteger, -0x8000000000000000, "mininteger")
eq(math.maxinteger + 1, math.mininteger, "wrap-around")

-- abs
eq(math.abs(-3), 3, "abs int")
eq(math.abs(-3.5), 3.5, "abs float")
eq(math.abs(math.mininteger), math.mininteger, "abs minint wraps")
eq(math.abs(-0.0), 0.0, "abs -0.0")
eq(math.abs("-2"), 2.0, "abs string converts to float")
eq(err(math.abs, "x"), "bad argument #1 to 'F' (number expected, got string)", "abs type")
eq(err(math.abs), "bad argument #1 to 'F' (number expected, got no value)", "abs missing")

-- ceil / floor
eq(math.floor(3.7), 3, "floor")
eq(math.floor(-3.5), -4, "floor negative")
eq(math.floor(5), 5, "floor int")
eq(math.floor(-0.0), 0, "floor -0.0 is integer 0")
eq(math.floor(2^70), 2^70, "floor huge stays float")
eq(math.floor(2^63), 2^63, "floor 2^63 float")
eq(math.floor(-2^63), math.mininteger, "floor -2^63 integer")
eq(math.floor("3.5"), 3, "floor string")
eq(math.ceil(3.2), 4, "ceil")
eq(math.ceil(-0.5), 0, "ceil to -0 is integer 0")
eq(math.ceil(1/0), 1/0, "ceil inf")
check(isnan(math.floor(0/0)), "floor nan")

-- fmod / modf
eq(math.fmod(7, 3), 1, "fmod int")
eq(math.fmod(-6, 4), -2, "fmod truncates")
eq(math.fmod(6, -4), 2, "fmod sign of dividend")
eq(math.fmod(math.mininteger, -1), 0, "fmod minint -1")
eq(math.fmod(5.5, 2), 1.5, "fmod float")
eq(math.fmod(-6, 4.0), -2.0, "fmod mixed")
check(isnan(math.fmod(1, 0.0)), "fmod float zero")
eq(err(math.fmod, 1, 0), "bad argument #2 to 'F' (zero)", "fmod int zero")
eq(math.fmod(3, math.mininteger), 3, "fmod by minint")
local ip, fp = math.modf(3.7)
eq(ip, 3, "modf int part")
check(math.abs(fp - 0.7) < 1e-12, "modf frac part")
ip, fp = math.modf(-3.7)
eq(ip, -3, "modf negative")
ip, fp = math.modf(5)
eq(ip, 5, "modf int arg")
eq(fp, 0.0, "modf int arg frac")
ip, fp = math.modf(1/0)
eq(ip, 1/0, "modf inf")
eq(fp, 0.0, "modf inf frac")
ip, fp = math.modf(2^70)
eq(ip, 2^70, "modf huge")

-- deg, rad (standard in 5.4, not compatibility functions)
eq(math.deg(math.pi), 180.0, "deg pi")
eq(math.deg(1), 180 / math.pi, "deg of an integer is a float")
eq(math.rad(180), math.pi, "rad 180")
eq(math.rad(-90.0), -math.pi / 2, "rad negative")
eq(string.format("%.17g", math.deg(0.1)), "5.729577951308233", "deg to the last bit")
eq(string.format("%.17g", math.rad(33)), "0.57595865315812877", "rad to the last bit")
eq(err(math.deg, "x"), "bad argument #1 to 'F' (number expected, got string)", "deg type")
-- sqrt, exp, log
eq(math.sqrt(16), 4.0, "sqrt")
check(isnan(math.sqrt(-1)), "sqrt negative")
eq(math.exp(0), 1.0, "exp")
eq(math.log(1), 0.0, "log")
eq(math.log(8, 2), 3.0, "log2")
eq(math.log(100, 10), 2.0, "log10")
check(math.abs(math.log(27, 3) - 3) < 1e-12, "log base 3")
eq(math.log(0), -1/0, "log 0")
eq(math.log(2, 2.0), 1.0, "log float base")
check(isnan(math.log(-1)), "log negative")

-- trigonometry
eq(math.sin(0), 0.0, "sin")
eq(math.cos(0), 1.0, "cos")
eq(math.tan(0), 0.0, "tan")
eq(math.asin(1), math.pi / 2, "asin")
eq(math.acos(1), 0.0, "acos")
eq(math.atan(1), math.pi / 4, "atan")
eq(math.atan(1, 1), math.pi / 4, "atan 2 args")
eq(math.atan(1, -1), 3 * math.pi / 4, "atan quadrant")
eq(math.atan(0, -1), math.pi, "atan pi")
eq(math.atan(-0.0, -1), -math.pi, "atan -pi")

-- max / min
eq(math.max(1, 2.5, 2), 2.5, "max")
eq(math.max(3), 3, "max one")
eq(math.min(3, 1, 2), 1, "min")
eq(math.max(1, 1.0), 1, "max keeps first of equals")
eq(math.max(1.0, 1), 1.0, "max keeps first float")
eq(math.max(math.mininteger, -2^63), math.mininteger, "max exact compare")
eq(math.min(math.maxinteger, 2^63), math.maxinteger, "min exact compare")
eq(err(math.max), "bad argument #1 to 'F' (value expected)", "max no args")
-- lua5.4 compares the arguments as they are: strings as strings, others fail to compare.
eq(err(math.min, 1, "x"), "attempt to compare string with number", "min compares")
eq(err(math.max, 1, {}), "attempt to compare number with table", "max compares")
eq(math.max("10", "9"), "9", "max of strings")

-- tointeger / type / ult
eq(math.tointeger(3.0), 3, "tointeger")
eq(math.tointeger(3.5), nil, "tointeger fraction")
eq(math.tointeger(2^63), nil, "tointeger out of range")
eq(math.tointeger("8"), 8, "tointeger string")
eq(math.tointeger({}), nil, "tointeger table")
eq(err(math.tointeger), "bad argument #1 to 'F' (value expected)", "tointeger missing")
eq(math.type(1), "integer", "type int")
eq(math.type(1.0), "float", "type float")
eq(math.type("1"), nil, "type string")
eq(err(math.type), "bad argument #1 to 'F' (value expected)", "type missing")
eq(math.ult(1, -1), true, "ult")
eq(math.ult(-1, 1), false, "ult 2")
eq(math.ult(1, 1), false, "ult equal")

-- random
do
  eq(select("#", math.randomseed(42)), 2, "randomseed returns its seeds")
  eq(select(1, math.randomseed(42)), 42, "randomseed first seed")
  eq(select(2, math.randomseed(42, 7)), 7, "randomseed second seed")
  math.randomseed(42)
  eq(math.random(1, 100), 50, "seeded random(m, n)")
  eq(string.format("%.17g", math.random()), "0.54688311243421495", "seeded random()")
  eq(math.random(0), -3807604385970496171, "seeded random(0)")
  eq(math.random(10), 6, "seeded random(m)")
  math.randomseed(42, 7)
  eq(math.random(1, 100), 49, "two-word seed")
  math.randomseed(-1, 3)
  local a = math.random(1000)
  math.randomseed(-1, 3)
  eq(math.random(1000), a, "reseeding repeats")
  local inrange = true
  for _ = 1, 1000 do
    local r = math.random(3, 5)
    if r < 3 or r > 5 or math.type(r) ~= "integer" then inrange = false end
    local f = math.random()
    if f < 0 or f >= 1 then inrange = false end
  end
  check(inrange, "random ranges")
  eq(math.random(7, 7), 7, "single-value interval")
  local full = math.random(math.mininteger, math.maxinteger)
  eq(math.type(full), "integer", "full range")
  eq(err(math.random, 2, 1), "bad argument #1 to 'F' (interval is empty)", "empty interval")
  eq(err(math.random, 0.5), "bad argument #1 to 'F' (number has no integer representation)", "random float")
  eq(err(math.random, 1, 2, 3), "wrong number of arguments", "random 3 args")
  eq(err(math.random, -5), "bad argument #1 to 'F' (interval is empty)", "random(-5)")
  eq(err(math.randomseed, "x"), "bad argument #1 to 'F' (number expected, got string)", "randomseed type")
  math.randomseed()
  local r = math.random(1, 10)
  check(r >= 1 and r <= 10, "random after unseeded randomseed")
end

T.done()
