-- The string basics the other scripts lean on (manual §6.4): sub, byte/char, rep, upper,
-- lower, len, reverse, format, find/match/gsub/gmatch, and the string metatable.
local NAME = "lang_strings"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

eq(("hello"):sub(2, 4), "ell", "sub")
eq(("hello"):sub(-3), "llo", "negative start")
eq(("hello"):sub(0), "hello", "start 0")
eq(("hello"):sub(4, 2), "", "empty range")
eq(("hello"):sub(-100, 100), "hello", "clamped range")
eq(("hello"):sub(math.mininteger, math.maxinteger), "hello", "extreme indices")
eq(("ABC"):byte(), 65, "byte")
eq(select("#", ("ABC"):byte(1, -1)), 3, "byte range")
eq(("ABC"):byte(10), nil, "byte out of range")
eq(string.char(72, 105), "Hi", "char")
eq(string.char(), "", "char()")
eq(("ab"):rep(3), "ababab", "rep")
eq(("ab"):rep(3, ","), "ab,ab,ab", "rep with separator")
eq(("ab"):rep(0), "", "rep 0")
eq(("MiXeD"):upper(), "MIXED", "upper")
eq(("MiXeD"):lower(), "mixed", "lower")
eq(("abc"):len(), 3, "len")
eq(("abc"):reverse(), "cba", "reverse")
eq(#("\0\1\2"), 3, "binary-safe length")

-- format.
eq(string.format("%d|%5d|%-5d|%05d", 42, 42, 42, 42), "42|   42|42   |00042", "%d widths")
eq(string.format("%x|%X|%o", 255, 255, 8), "ff|FF|10", "%x %X %o")
eq(string.format("%5.2f|%.3e|%g", 3.14159, 12345.678, 0.0001), " 3.14|1.235e+04|0.0001", "floats")
eq(string.format("%g|%g|%g", 1e20, 100, 2^63), "1e+20|100|9.22337e+18", "%g")
eq(string.format("%s|%10s|%-4s|", "a", "right", "l"), "a|     right|l   |", "%s widths")
eq(string.format("%q", 'a "q"\n\0'), '"a \\"q\\"\\\n\\0"', "%q string")
eq(string.format("%q", 1 / 0), "1e9999", "%q inf")
eq(string.format("%q", math.mininteger), "0x8000000000000000", "%q mininteger")
eq(string.format("%q", 0.1), "0x1.999999999999ap-4", "%q float is hex")
eq(string.format("%c%c", 76, 117), "Lu", "%c")
eq(string.format("%%"), "%", "%%")
eq(string.format("%s %s", 1, 1.0), "1 1.0", "%s of numbers")
eq(string.format("%s", setmetatable({}, {__tostring = function() return "T" end})), "T", "%s uses __tostring")
eq(string.format("%.3s", "abcdef"), "abc", "%.3s")
eq(string.format("%a", 1.0), "0x1p+0", "%a")
eq(string.format("%i", 7), "7", "%i")
eq(string.format("%5.1f", -0.05), " -0.1", "rounding negative")
eq(string.format("%d", 3.0), "3", "%d with an integral float")
eq(select(2, pcall(string.format, "%y", 1)):gsub("^[^:]*:%d+: ", ""), "invalid conversion '%y' to 'format'", "bad conversion")

-- find / match / gsub / gmatch.
eq(("hello world"):find("wor"), 7, "find plain substring")
eq(select(2, ("hello world"):find("wor")), 9, "find end")
eq(("a.b"):find(".", 1, true), 2, "find plain")
eq(("a+b"):find("+", 1, true), 2, "find plain special char")
eq(("hello"):find("l+"), 3, "find pattern")
eq(("hello"):find("xyz"), nil, "not found")
eq(("hello"):find(""), 1, "empty pattern")
eq(("hello"):find("", 10), nil, "empty pattern past the end")
eq(("key = value"):match("(%w+)%s*=%s*(%w+)"), "key", "match captures")
eq(select(2, ("key = value"):match("(%w+)%s*=%s*(%w+)")), "value", "second capture")
eq(("  trim  "):match("^%s*(.-)%s*$"), "trim", "lazy match trim")
eq(("2024-01-15"):match("(%d+)-(%d+)-(%d+)"), "2024", "digits")
eq(("abc"):match("()b()"), 2, "position captures")
eq(("[[x]]"):match("%[%[(.-)%]%]"), "x", "escaped brackets")
eq(("THE (quick) fox"):find("%((%a+)%)"), 5, "find with a capture")
eq(("hello"):match(".-(l+)(.*)"), "ll", "lazy then greedy")
eq(("f(a(b)c)"):match("%b()"), "(a(b)c)", "%b balanced")
eq(("THE END"):match("%f[%a]%a+$"), "END", "%f frontier")
eq(("abc"):gsub("b", "X"), "aXc", "gsub string")
eq(select(2, ("aaa"):gsub("a", "b")), 3, "gsub count")
eq(("abc"):gsub("%w", "%0%0"), "aabbcc", "gsub %0")
eq(("hello world"):gsub("(%w+) (%w+)", "%2 %1"), "world hello", "gsub captures")
eq(("$x and $y"):gsub("%$(%w+)", {x = "1", y = false}), "1 and $y", "gsub table (false keeps match)")
eq(("abc"):gsub(".", function(c) return c:byte() .. "," end), "97,98,99,", "gsub function")
eq(("abc"):gsub("", "-"), "-a-b-c-", "gsub empty pattern")
eq(("abc"):gsub("b", "%%"), "a%c", "gsub %%")
eq(("aaa"):gsub("a", "b", 2), "bba", "gsub max")
local words = {}
for w in ("one two  three"):gmatch("%a+") do words[#words + 1] = w end
eq(table.concat(words, "|"), "one|two|three", "gmatch")
local pairsOut = {}
for k, v in ("a=1, b=2"):gmatch("(%w+)=(%w+)") do pairsOut[#pairsOut + 1] = k .. v end
eq(table.concat(pairsOut), "a1b2", "gmatch captures")
eq(select(2, pcall(string.rep, "x", -1)), "", "rep negative")
eq(select(2, pcall(string.find, "x", "[")):gsub("^[^:]*:%d+: ", ""), "malformed pattern (missing ']')", "malformed pattern")
eq(select(2, pcall(string.find, "x", "(")):gsub("^[^:]*:%d+: ", ""), "unfinished capture", "unfinished capture")
eq(select(2, pcall(string.gsub, "abc", "%w", "%2")):gsub("^[^:]*:%d+: ", ""), "invalid capture index %2", "bad capture index")

-- Strings are interned values and compare by contents.
local built = {}
for i = 1, 10 do built[i] = string.char(96 + i) end
eq(table.concat(built), "abcdefghij", "concat built string")
eq(table.concat(built) == "abcdefghij", true, "equal to the literal")
eq(("x"):rep(1000):len(), 1000, "long string")
local long1, long2 = ("y"):rep(100) .. "z", ("y"):rep(100) .. "z"
eq(long1 == long2, true, "long strings compare by value")
local set = {}
set[long1] = true
eq(set[long2], true, "long strings as equal keys")
eq(("%d"):format(5), "5", "method call on a literal")
eq(#string.format("%099d", 1), 99, "wide format")
eq(tostring(12):len(), 2, "number tostring then method")

T.done()
