-- Values and types (manual §2.1, §3.4.3): subtypes, coercions, table keys, length.
local NAME = "lang_values"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

-- type() of every basic type.
eq(type(nil), "nil", "nil")
eq(type(true), "boolean", "boolean")
eq(type(1), "number", "integer")
eq(type(1.5), "number", "float")
eq(type("x"), "string", "string")
eq(type({}), "table", "table")
eq(type(print), "function", "native function")
eq(type(function() end), "function", "Lua function")
eq(type(coroutine.create(function() end)), "thread", "thread")
eq(type(io.stdout), "userdata", "userdata")
-- The names are strings interned once (State::typeNames): after a collection, which
-- moves them, they are still the names, and equal to the same text made anew.
collectgarbage()
eq(type({}), "table", "table after a collection")
eq(type(false) .. "", string.rep("boolean", 1), "boolean after a collection, as any string")

-- math.type and the integer/float subtypes.
eq(math.type(1), "integer", "1")
eq(math.type(1.0), "float", "1.0")
eq(math.type("1"), nil, "string is not a number")
eq(math.type(2^53), "float", "power is float")
eq(math.type(10 // 3), "integer", "int // int")
eq(math.type(10 / 2), "float", "/ is float")
eq(1 == 1.0, true, "1 == 1.0")
eq(math.tointeger(3.0), 3, "tointeger(3.0)")
eq(math.tointeger(3.5), nil, "tointeger(3.5)")
eq(math.tointeger(2^63), nil, "tointeger(2^63)")
eq(math.tointeger(-2^63), math.mininteger, "tointeger(-2^63)")

-- String to number coercions in arithmetic.
eq("10" + 1, 11, "'10' + 1 is integer")
eq("10" + 1.0, 11.0, "'10' + 1.0 is float")
eq("3.0" + 1, 4.0, "'3.0' + 1 is float")
eq("0x10" * 2, 32, "hex string")
eq(" 5 " * 2, 10, "spaces allowed")
eq("1e1" + 0, 10.0, "exponent string")
eq(10 .. "", "10", "integer to string")
eq(1.5 .. "", "1.5", "float to string")
eq(-0.0 .. "", "-0.0", "negative zero to string")
eq(2^63 .. "", "9.2233720368548e+18", "large float to string")
eq("10" // "3", 3, "string // string")
eq("7" % "2", 1, "string % string")
eq(-"2", -2, "unary minus on string")
eq("2" ^ "3", 8.0, "string ^ string")
eq(select(2, pcall(function() return "3" | 0 end)):match("attempt to perform bitwise operation on a string value") ~= nil, true, "no string coercion in bitwise ops")
eq(pcall(function() return "abc" + 1 end), false, "non-numeric string")
eq(tostring(10 == "10"), "false", "no coercion in ==")

-- tonumber.
eq(tonumber("0x1p4"), 16.0, "hex float string")
eq(tonumber("  12  "), 12, "whitespace")
eq(tonumber("12a"), nil, "trailing garbage")
eq(tonumber(""), nil, "empty")
eq(tonumber("1e"), nil, "bad exponent")
eq(tonumber("9223372036854775808"), 9223372036854775808.0, "overflow to float")
eq(tonumber("-9223372036854775808"), math.mininteger, "mininteger string stays integer")
eq(tonumber("z", 36), 35, "base 36")
eq(tonumber("ff", 16), 255, "base 16")
eq(tonumber("FF", 16), 255, "base 16 upper")
eq(tonumber("777", 8), 511, "base 8")
eq(tonumber("8", 8), nil, "digit out of base")
eq(tonumber("-101", 2), -5, "negative binary")
eq(tonumber(" 11 ", 2), 3, "spaces with a base")
eq(tonumber(nil), nil, "tonumber(nil)") -- 5.4.4 accepts nil
eq(tonumber("inf"), nil, "inf is not a numeral")
eq(tonumber("nan"), nil, "nan is not a numeral")
eq(tonumber("0x"), nil, "0x alone")
eq(tonumber("1 2"), nil, "two numbers")

-- Float keys with integral values are normalised to integers.
local t = {}
t[1.0] = "a"
eq(t[1], "a", "t[1.0] is t[1]")
t[2] = "b"
eq(t[2.0], "b", "t[2] read as t[2.0]")
t[2^53] = "big"
eq(t[math.tointeger(2^53)], "big", "2^53 key normalised")
t[1.5] = "f"
eq(t[1.5], "f", "non-integral float key")
eq(#t, 2, "normalised keys count for the border")
local keys = 0
for k in pairs(t) do
  keys = keys + 1
  if k == 1 or k == 2 then eq(math.type(k), "integer", "pairs returns normalised key") end
end
eq(keys, 4, "four keys")
t[-0.0] = "zero"
eq(t[0], "zero", "-0.0 key is 0")
eq(pcall(function() t[0/0] = 1 end), false, "NaN key is an error")
eq(select(2, pcall(function() t[nil] = 1 end)):match("index is nil") ~= nil, true, "nil key error")
eq(select(2, pcall(function() t[0/0] = 1 end)):match("index is NaN") ~= nil, true, "NaN key error")
eq(t[nil], nil, "reading a nil key is fine")
eq(t[0/0], nil, "reading a NaN key is fine")
local s1, s2 = "ab", "a" .. "b"
t[s1] = 1
eq(t[s2], 1, "string keys compare by value")
local f1 = function() end
t[f1] = "fn"
eq(t[f1], "fn", "function key")
t[true] = "yes"
eq(t[true], "yes", "boolean key")

-- Length operator and borders.
eq(#"", 0, "#''")
eq(#"abc", 3, "#'abc'")
eq(#{}, 0, "#{}")
eq(#{1, 2, 3}, 3, "sequence")
eq(#{1, 2, 3, nil}, 3, "trailing nil in constructor")
eq(#{n = 1}, 0, "hash only")
local seq = {}
for i = 1, 100 do seq[i] = i end
eq(#seq, 100, "built sequence")
seq[100] = nil
eq(#seq, 99, "remove last")
seq[#seq + 1] = "x"
eq(#seq, 100, "append")
local holes = {1, 2, nil, 4}
local b = #holes
check(b == 4 or b == 2, "a border of {1, 2, nil, 4}: " .. b)
local sparse = {[1] = 1, [2] = 2, [4] = 4}
b = #sparse
check((b == 2 or b == 4) and sparse[b] ~= nil and sparse[b + 1] == nil, "border of sparse table")
eq(#{[1] = "a", [2] = "b", [3] = "c"}, 3, "hash-built sequence")
eq(#{nil}, 0, "{nil}")
local grow = {}
for i = 1, 1000 do grow[#grow + 1] = i end
eq(#grow, 1000, "grown by #t + 1")

-- Truthiness: only nil and false are false.
eq(not nil, true, "not nil")
eq(not false, true, "not false")
eq(not 0, false, "0 is true")
eq(not "", false, "'' is true")
eq(nil and 1, nil, "nil and 1")
eq(false or "x", "x", "false or x")
eq(1 and 2, 2, "1 and 2")
eq(nil or false, false, "nil or false")

-- Equality of references and values.
local ta, tb = {}, {}
eq(ta == tb, false, "distinct tables")
eq(ta == ta, true, "same table")
eq("abc" == "abc", true, "equal strings")
eq(0.0 == -0.0, true, "zeros")
eq(0/0 == 0/0, false, "NaN ~= NaN")
eq(math.maxinteger + 0.0 == math.maxinteger, false, "2^63 float vs maxinteger")
eq(2^53 == (1 << 53) + 1, false, "2^53 float vs 2^53+1 int")

T.done()
