-- The string library (manual §6.4), function by function: byte, char, dump, find,
-- format, gmatch, gsub, len, lower, match, pack, packsize, rep, reverse, sub, unpack,
-- upper, the patterns of §6.4.1, the formats of §6.4.2 and the string metatable.
local NAME = "lib_string"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
-- The message of a failing call, without position and with the function name
-- normalised (how a function is named in messages is not this library's business).
local function err(f, ...)
  local ok, m = pcall(f, ...)
  if ok then return "no error" end
  m = tostring(m):gsub("^[^:]*:%d+: ", "")
  return (m:gsub("to '[%w%.]+' %(", "to 'F' ("))
end
local function all(...) return table.concat(table.pack(...), ",", 1, select("#", ...)) end

-- §6.4 string.byte / string.char
eq(all(("ABC"):byte(1, -1)), "65,66,67", "byte all")
eq(("ABC"):byte(), 65, "byte default")
eq(("ABC"):byte(-1), 67, "byte negative")
eq(select("#", ("ABC"):byte(10)), 0, "byte beyond end")
eq(select("#", ("ABC"):byte(3, 2)), 0, "byte empty range")
eq(select("#", (""):byte()), 0, "byte of empty")
eq(all(("\0\255"):byte(1, 2)), "0,255", "byte extremes")
eq(select("#", ("hi"):byte(-3)), 0, "byte start before the beginning, no end")
eq(all(("hi"):byte(-3, 1)), "104", "byte start before the beginning, end 1")
-- Every start and end from -4 to 4 (and no end) over a two-byte string, printed as one
-- line per function: the end defaults to the start as given, before it is clamped.
do
  local byteRow, subRow = {}, {}
  for i = -4, 4 do
    byteRow[#byteRow + 1] = "[" .. all(("hi"):byte(i)) .. "]"
    for j = -4, 4 do
      byteRow[#byteRow + 1] = "[" .. all(("hi"):byte(i, j)) .. "]"
      subRow[#subRow + 1] = "[" .. ("hi"):sub(i, j) .. "]"
    end
    subRow[#subRow + 1] = "[" .. ("hi"):sub(i) .. "]"
  end
  print("byte " .. table.concat(byteRow))
  print("sub " .. table.concat(subRow))
  check(#byteRow == 90 and #subRow == 90, "index table complete")
end
eq(string.char(), "", "char no args")
eq(string.char(0, 255, 65), "\0\255A", "char extremes")
eq(err(string.char, 256), "bad argument #1 to 'F' (value out of range)", "char 256")
eq(err(string.char, 65, -1), "bad argument #2 to 'F' (value out of range)", "char -1")
eq(err(string.char, "x"), "bad argument #1 to 'F' (number expected, got string)", "char type")
eq(string.char("65"), "A", "char coerces strings")

-- string.dump
do
  local function f(a, b) return a * 10 + b end
  local g = load(string.dump(f))
  eq(g(4, 2), 42, "dump round trip")
  local h = load(string.dump(f, true))
  eq(h(1, 2), 12, "dump stripped")
  eq(err(string.dump, print), "unable to dump given function", "dump native")
  eq(err(string.dump, 1), "bad argument #1 to 'F' (function expected, got number)", "dump type")
end

-- string.find
eq(all(("hello world"):find("o w")), "5,7", "find")
eq(all(("hello"):find("l")), "3,3", "find first")
eq(all(("hello"):find("l", 4)), "4,4", "find init")
eq(all(("hello"):find("l", -2)), "4,4", "find negative init")
eq(("hello"):find("l", 10), nil, "find init beyond")
eq(all(("hello"):find("", 6)), "6,5", "find empty at end")
eq(("hello"):find("", 7), nil, "find empty beyond end")
eq(all(("hello"):find("", -100)), "1,0", "find clamps init")
eq(all(("a.b"):find(".", 1, true)), "2,2", "find plain")
eq(all(("a+b"):find("+", 1, true)), "2,2", "find plain special")
eq(all(("a)b"):find("a)")), "1,2", "no specials: plain search")
eq(all(("key=val"):find("(%w+)=(%w+)")), "1,7,key,val", "find captures")
eq(all(("hello"):find("()ll()")), "3,4,3,5", "position captures")
eq(all(("x\0y"):find("\0", 1, true)), "2,2", "find NUL")
eq(all(("x\0y"):find("%z")), "2,2", "%z still matches NUL")
eq(all(("aaa"):find("a-", 2)), "2,1", "lazy empty match")

-- §6.4.1 patterns
eq(("  abc  "):match("^%s*(.-)%s*$"), "abc", "trim")
eq(("2024-01-15"):match("(%d+)-(%d+)-(%d+)"), "2024", "dates")
eq(all(("2024-01-15"):match("(%d+)-(%d+)-(%d+)")), "2024,01,15", "date parts")
eq(("f(a(b)c)"):match("%b()"), "(a(b)c)", "%b")
eq(("THE (quick) fox"):match("%f[%a]%a+", 5), "quick", "%f")
eq(("hello"):match(".-l"), "hel", "lazy")
eq(("hello"):match(".*l"), "hell", "greedy")
eq(("aXb"):match("%u"), "X", "%u")
eq(("a1_b"):match("[%a_]+", 2), "_b", "set with class")
eq(("]"):match("[]]"), "]", "] first in set")
eq(("a-z"):match("[a%-z]+"), "a-z", "escaped - in set")
eq(("^x"):match("[%^x]+"), "^x", "escaped ^ in set")
eq(("abc"):match("[^a]+"), "bc", "negated set")
eq(("abc"):match("^(a)(b)(c)$"), "a", "anchored captures")
eq(("x = 'hi'"):match("(['\"])(.-)%1", 1), "'", "back reference")
eq(select(2, ("x = 'hi'"):match("(['\"])(.-)%1")), "hi", "back reference content")
eq(("a$"):match("a$"), nil, "$ at end is an anchor")
eq(("a$b"):match("a$b"), "a$b", "$ elsewhere is literal")
eq(("abc"):match("((a)(b))"), "ab", "nested captures")
eq(("abc"):match("()"), 1, "position capture alone")
eq(("abc"):match("b()"), 3, "position after")
eq(err(string.find, "a", "%"), "malformed pattern (ends with '%')", "error %")
eq(err(string.find, "a", "[a"), "malformed pattern (missing ']')", "error [")
eq(err(string.find, "a", "[]"), "malformed pattern (missing ']')", "error []")
eq(err(string.find, "a", "%f"), "missing '[' after '%f' in pattern", "error %f")
eq(err(string.find, "a", "%1"), "invalid capture index %1", "error %1")
eq(err(string.find, "a", "(a)%2"), "invalid capture index %2", "error %2")
eq(err(string.find, "a", "%g)"), "invalid pattern capture", "error )")
eq(err(string.match, "a", "(a"), "unfinished capture", "error unfinished")
eq(err(string.find, "a", "%b"), "malformed pattern (missing arguments to '%b')", "error %b")
eq(err(string.find, "a", ("("):rep(33)), "too many captures", "error captures")
eq(err(string.find, ("a"):rep(300), ("a?"):rep(300)), "pattern too complex", "error depth")
eq(all(string.find(("a"):rep(199), ("a?"):rep(199))), "1,199", "deep but allowed")
eq(("x"):rep(1000):match(".-$"), ("x"):rep(1000), "long lazy match")

-- string.format
eq(string.format("%d|%5d|%-5d|%05d|%+d|% d", 42, 42, 42, 42, 42, 42), "42|   42|42   |00042|+42| 42", "%d")
eq(string.format("%i|%u", -7, 7), "-7|7", "%i %u")
eq(string.format("%x|%X|%#x|%o|%#o", 255, 255, 255, 8, 8), "ff|FF|0xff|10|010", "%x %o")
eq(string.format("%x", -1), "ffffffffffffffff", "%x negative")
eq(string.format("%d", math.mininteger), "-9223372036854775808", "%d minint")
eq(string.format("%d", 3.0), "3", "%d integral float")
eq(string.format("%d", "10"), "10", "%d string")
eq(string.format("%.3f|%10.2f|%-10.2f|", 1/3, 3.14159, 2.5), "0.333|      3.14|2.50      |", "%f")
eq(string.format("%e|%.2E", 12345.678, 0.5), "1.234568e+04|5.00E-01", "%e")
eq(string.format("%g|%g|%g|%G", 1e20, 0.0001, 100, 1e-20), "1e+20|0.0001|100|1E-20", "%g")
eq(string.format("%a|%A", 1, 0.5), "0x1p+0|0X1P-1", "%a")
eq(string.format("%.3a", 1/3), "0x1.555p-2", "%.3a")
eq(string.format("%5.1f", -0.0), " -0.0", "negative zero")
eq(string.format("%f|%f", 1/0, -1/0), "inf|-inf", "infinities")
eq(string.format("%c%c%c", 76, 117, 97), "Lua", "%c")
eq(string.format("%-3c|", 65), "A  |", "%-3c")
eq(string.format("%c", 0), "\0", "%c NUL")
eq(string.format("%s|%10s|%-10s|%.2s", "a", "right", "left", "abc"), "a|     right|left      |ab", "%s")
eq(string.format("%s %s %s %s", 1, 1.5, true, nil), "1 1.5 true nil", "%s of non-strings")
eq(string.format("%s", setmetatable({}, {__tostring = function() return "OBJ" end})), "OBJ", "%s __tostring")
eq(string.format("%s", "a\0b"), "a\0b", "%s keeps zeros")
eq(string.format("%.20s", ("x"):rep(200)), ("x"):rep(20), "%.20s of long")
eq(string.format("%s", ("y"):rep(300)), ("y"):rep(300), "%s of long")
eq(string.format("%%|%5s%%", "a"), "%|    a%", "%%")
eq(string.format("no conversions"), "no conversions", "plain")
eq(string.format("%q", 'a "b"\n\\'), '"a \\"b\\"\\\n\\\\"', "%q quotes")
eq(string.format("%q", "\0\0011\r\127\200"), '"\\0\\0011\\13\\127\200"', "%q control bytes")
eq(string.format("%q", 42), "42", "%q integer")
eq(string.format("%q", math.mininteger), "0x8000000000000000", "%q minint")
eq(string.format("%q", 1.0), "0x1p+0", "%q float")
eq(string.format("%q", 0.1), "0x1.999999999999ap-4", "%q 0.1")
eq(string.format("%q|%q|%q", 1/0, -1/0, 0/0), "1e9999|-1e9999|(0/0)", "%q specials")
eq(string.format("%q|%q|%q", nil, true, false), "nil|true|false", "%q literals")
eq(load("return " .. string.format("%q", "\r\n\0\255x"))(), "\r\n\0\255x", "%q round trip")
eq(load("return " .. string.format("%q", math.mininteger))(), math.mininteger, "%q minint round trip")
eq(load("return " .. string.format("%q", 2^-1074))(), 2^-1074, "%q denormal round trip")
eq(err(string.format, "%q", {}), "bad argument #2 to 'F' (value has no literal form)", "%q table")
eq(err(string.format, "%10q", 1), "specifier '%q' cannot have modifiers", "%q modifiers")
eq(err(string.format, "%y", 1), "invalid conversion '%y' to 'format'", "bad conversion")
eq(err(string.format, "%F", 1), "invalid conversion '%F' to 'format'", "%F unsupported")
eq(err(string.format, "%ld", 1), "invalid conversion '%l' to 'format'", "%l unsupported")
eq(err(string.format, "%", 1), "invalid conversion '%' to 'format'", "lone %")
eq(err(string.format, "%123d", 1), "invalid conversion specification: '%123d'", "width too long")
eq(err(string.format, "%.123f", 1), "invalid conversion specification: '%.123f'", "precision too long")
eq(err(string.format, "%#d", 1), "invalid conversion specification: '%#d'", "bad flag")
eq(err(string.format, "%05s", "a"), "invalid conversion specification: '%05s'", "0 flag on %s")
eq(err(string.format, "%-+ #0-+ #0-+ #0-+ #0-+ #0d", 1), "invalid format (too long)", "too long")
eq(err(string.format, "%d", 1.5), "bad argument #2 to 'F' (number has no integer representation)", "%d 1.5")
eq(err(string.format, "%d", "x"), "bad argument #2 to 'F' (number expected, got string)", "%d string")
eq(err(string.format, "%d"), "bad argument #2 to 'F' (no value)", "missing arg")
eq(err(string.format, "%f", {}), "bad argument #2 to 'F' (number expected, got table)", "%f table")
eq(err(string.format, "%10s", "a\0b"), "bad argument #2 to 'F' (string contains zeros)", "zeros with width")
eq(string.format("%d", 1, 2, 3), "1", "extra args ignored")
eq(#string.format("%099.99f", 1e308), 409, "widest item")

-- string.gmatch
do
  local words = {}
  for w in ("one two  three"):gmatch("%a+") do words[#words + 1] = w end
  eq(table.concat(words, "|"), "one|two|three", "gmatch words")
  local pairs_ = {}
  for k, v in ("a=1, b=2"):gmatch("(%w+)=(%w+)") do pairs_[#pairs_ + 1] = k .. v end
  eq(table.concat(pairs_, "|"), "a1|b2", "gmatch captures")
  local n = 0
  for _ in ("abc"):gmatch("") do n = n + 1 end
  eq(n, 4, "gmatch empty matches")
  local got = {}
  for m in ("abcabc"):gmatch("b", 3) do got[#got + 1] = m end
  eq(#got, 1, "gmatch init")
  got = {}
  for m in ("abcabc"):gmatch("b", -2) do got[#got + 1] = m end
  eq(#got, 1, "gmatch negative init")
  got = {}
  for m in ("abc"):gmatch("x*", 10) do got[#got + 1] = m end
  eq(#got, 0, "gmatch init beyond end")
  got = {}
  for m in ("^a^a"):gmatch("^a") do got[#got + 1] = m end
  eq(#got, 2, "gmatch ^ is literal")
  got = {}
  for a, b in ("abab"):gmatch("()(b)") do got[#got + 1] = a end
  eq(table.concat(got, ","), "2,4", "gmatch position captures")
  eq(err(function() for _ in ("a"):gmatch("%") do end end), "malformed pattern (ends with '%')", "gmatch error")
end

-- string.gsub
eq(all(("hello world"):gsub("o", "0")), "hell0 w0rld,2", "gsub string")
eq(all(("hello world"):gsub("o", "0", 1)), "hell0 world,1", "gsub count")
eq(all(("hello"):gsub("o", "0", 0)), "hello,0", "gsub count 0")
eq(all(("hello"):gsub("o", "0", -1)), "hello,0", "gsub negative count")
eq(all(("abc"):gsub("", "-")), "-a-b-c-,4", "gsub empty pattern")
eq(all(("abc"):gsub("%w", "%0%0")), "aabbcc,3", "gsub %0")
eq(all(("abc"):gsub("(%w)", "%1.")), "a.b.c.,3", "gsub %1")
eq(all(("abc"):gsub("b", "%1")), "abc,1", "gsub %1 without captures")
eq(all(("abc"):gsub("%w", "%%")), "%%%,3", "gsub %%")
eq(all(("hello world"):gsub("(%w+) (%w+)", "%2 %1")), "world hello,1", "gsub swap")
eq(all(("abc"):gsub("()", "%1")), "1a2b3c4,4", "gsub position capture")
eq(all(("$x $y"):gsub("%$(%w+)", {x = "1", y = 2})), "1 2,2", "gsub table")
eq(all(("$x $y"):gsub("%$(%w+)", {x = false})), "$x $y,2", "gsub table false keeps match")
eq(all(("abc"):gsub("%w", function(c) return c:upper() .. "." end)), "A.B.C.,3", "gsub function")
eq(all(("abc"):gsub("%w", function() end)), "abc,3", "gsub function nil")
eq(all(("abc"):gsub("(a)(b)", function(a, b) return b .. a end)), "bac,1", "gsub function captures")
eq(all(("a b"):gsub("%w", 7)), "7 7,2", "gsub number replacement")
eq(all(("x"):gsub("x", function() return 1.5 end)), "1.5,1", "gsub function number")
eq(all(("hello"):gsub("^h", "H")), "Hello,1", "gsub anchored")
eq(all(("hhh"):gsub("^h", "H")), "Hhh,1", "gsub anchored once")
eq(all(string.gsub(123, "2", "x")), "1x3,1", "gsub on a number")
eq(all(("abc"):gsub("x*", "-")), "-a-b-c-,4", "gsub empty matches")
eq(err(string.gsub, "abc", "a", "%2"), "invalid capture index %2", "gsub %2")
eq(err(string.gsub, "abc", "a", "%x"), "invalid use of '%' in replacement string", "gsub %x")
eq(err(string.gsub, "abc", "a", "%"), "invalid use of '%' in replacement string", "gsub trailing %")
eq(err(string.gsub, "abc", "(a)", {a = {}}), "invalid replacement value (a table)", "gsub table value")
eq(err(string.gsub, "abc", "a", function() return {} end), "invalid replacement value (a table)", "gsub function value")
eq(err(string.gsub, "abc", "a", true), "bad argument #3 to 'F' (string/function/table expected, got boolean)", "gsub repl type")
eq(err(string.gsub, "abc", "a", function() error("inner") end), "inner", "gsub propagates errors")
do
  local big = ("ab"):rep(10000)
  local r, n = big:gsub("a", function() return "xy" end)
  eq(n, 10000, "gsub many calls")
  eq(#r, 30000, "gsub many calls length")
end

-- len, lower, upper, reverse, sub
eq(("abc"):len(), 3, "len")
eq((""):len(), 0, "len empty")
eq(("a\0b"):len(), 3, "len with zero")
eq(string.len(12), 2, "len of number")
eq(("MiXeD 1!"):lower(), "mixed 1!", "lower")
eq(("MiXeD 1!"):upper(), "MIXED 1!", "upper")
eq(("\200A"):lower(), "\200a", "lower leaves high bytes")
do -- every byte, short and long strings: only ASCII letters change (the C locale)
  local bytes = {}
  for c = 0, 255 do bytes[#bytes + 1] = string.char(c) end
  local all = table.concat(bytes)
  local lower = all:gsub("%u", function(c) return string.char(c:byte() + 32) end)
  local upper = all:gsub("%l", function(c) return string.char(c:byte() - 32) end)
  eq(all:lower(), lower, "lower of every byte")
  eq(all:upper(), upper, "upper of every byte")
  for c = 0, 255 do
    eq(string.char(c):lower(), lower:sub(c + 1, c + 1), "lower of byte " .. c)
    eq(string.char(c):upper(), upper:sub(c + 1, c + 1), "upper of byte " .. c)
  end
end
eq(("abc"):reverse(), "cba", "reverse")
eq((""):reverse(), "", "reverse empty")
eq(("hello"):sub(2, 4), "ell", "sub")
eq(("hello"):sub(-3), "llo", "sub negative")
eq(("hello"):sub(0), "hello", "sub 0")
eq(("hello"):sub(4, 2), "", "sub empty")
eq(("hello"):sub(-100, 100), "hello", "sub clamps")
eq(("hello"):sub(math.mininteger, math.maxinteger), "hello", "sub extremes")
eq(("hello"):sub(6), "", "sub past end")
eq(("hello"):sub(2, -2), "ell", "sub both relative")
eq(err(string.sub), "bad argument #1 to 'F' (string expected, got no value)", "sub no args")
eq(err(string.sub, "x", "a"), "bad argument #2 to 'F' (number expected, got string)", "sub bad index")
eq(err(string.sub, "x", 1.5), "bad argument #2 to 'F' (number has no integer representation)", "sub float index")

-- string.rep
eq(("ab"):rep(3), "ababab", "rep")
eq(("ab"):rep(3, ","), "ab,ab,ab", "rep sep")
eq(("ab"):rep(1, ","), "ab", "rep one with sep")
eq(("ab"):rep(0), "", "rep 0")
eq(("ab"):rep(-5), "", "rep negative")
-- lua5.4 loops over every repetition of an empty string; Weft returns at once. Only a
-- modest count here so the oracle run stays fast.
eq((""):rep(1 << 20), "", "rep empty many")
eq((""):rep(3, ""), "", "rep empty sep")
eq((""):rep(3, "x"), "xx", "rep only separators")
eq(err(string.rep, "x", 1 << 40), "resulting string too large", "rep huge")
eq(err(string.rep, "x", 1 << 30, ","), "resulting string too large", "rep huge with sep")
eq(err(string.rep, "xx", math.maxinteger), "resulting string too large", "rep maxinteger")
eq(#("x"):rep(100000), 100000, "rep large ok")

-- §6.4.2 pack / unpack / packsize
eq(string.packsize("i4i8"), 12, "packsize")
eq(string.packsize("!i1i8"), 16, "packsize aligned")
eq(string.packsize("!4i1i8"), 12, "packsize max align")
eq(string.packsize("bBhHlLjJTfdn"), 66, "packsize all fixed")
eq(string.packsize(""), 0, "packsize empty")
eq(string.pack("<i3", -2), "\254\255\255", "pack little i3")
eq(string.pack(">I2", 258), "\1\2", "pack big I2")
eq(string.pack("z", "ab"), "ab\0", "pack z")
eq(string.pack("s1", "ab"), "\2ab", "pack s1")
eq(string.pack("c5", "ab"), "ab\0\0\0", "pack c pads")
eq(string.pack(">!4 i1 i4", 1, 2), "\1\0\0\0\0\0\0\2", "pack alignment")
eq(string.pack("i1 x i1", 1, 2), "\1\0\2", "pack x")
eq(string.pack("!4 i1 Xi4 i1", 1, 2), "\1\0\0\0\2", "pack X")
eq(#string.pack("d f n", 1, 2, 3), 20, "pack floats")
eq(all(string.unpack("<i2 >i2 z s2 B b h H", string.pack("<i2 >i2 z s2 B b h H", -2, 3, "zz", "ss", 255, -128, -1, 65535))),
   "-2,3,zz,ss,255,-128,-1,65535,18", "unpack round trip")
eq(all(string.unpack("j J T", string.pack("j J T", math.mininteger, -1, 7))), math.mininteger .. ",-1,7,25", "unpack j J T")
eq(all(string.unpack("f d", string.pack("f d", 1.5, -2.25))), "1.5,-2.25,13", "unpack floats")
eq(all(string.unpack("i16", string.pack("i16", -3))), "-3,17", "i16 round trip")
eq(all(string.unpack("I9", string.pack("I9", 5))), "5,10", "I9 round trip")
eq(all(string.unpack("i4", "\1\0\0\0\2\0\0\0", 5)), "2,9", "unpack init")
eq(all(string.unpack("i1", "\1\2", -1)), "2,3", "unpack negative init")
eq(all(string.unpack("c2 c0", "abcd")), "ab,,3", "unpack c0")
eq(select("#", string.unpack("!4 i1 x Xi4", "\1\0\0\0")), 2, "unpack padding yields nothing")
eq(err(string.pack, "i17", 1), "integral size (17) out of limits [1,16]", "pack size limit")
eq(err(string.pack, "i0", 1), "integral size (0) out of limits [1,16]", "pack size 0")
eq(err(string.pack, "y", 1), "invalid format option 'y'", "pack bad option")
eq(err(string.pack, "c", "a"), "missing size for format option 'c'", "pack c without size")
eq(err(string.pack, "c2", "abc"), "bad argument #2 to 'F' (string longer than given size)", "pack c too long")
eq(err(string.pack, "i1", 200), "bad argument #2 to 'F' (integer overflow)", "pack overflow")
eq(err(string.pack, "I1", -1), "bad argument #2 to 'F' (unsigned overflow)", "pack unsigned overflow")
eq(err(string.pack, "z", "a\0b"), "bad argument #2 to 'F' (string contains zeros)", "pack z zeros")
eq(err(string.pack, "s1", ("x"):rep(256)), "bad argument #2 to 'F' (string length does not fit in given size)", "pack s1 long")
eq(err(string.pack, "!3i4", 1), "bad argument #1 to 'F' (format asks for alignment not power of 2)", "pack align")
eq(err(string.pack, "X", 1), "bad argument #1 to 'F' (invalid next option for option 'X')", "pack X at end")
eq(err(string.pack, "i", 1.5), "bad argument #2 to 'F' (number has no integer representation)", "pack float as int")
eq(err(string.pack, "i"), "bad argument #2 to 'F' (number expected, got nil)", "pack missing")
eq(err(string.packsize, "s"), "bad argument #1 to 'F' (variable-length format)", "packsize s")
eq(err(string.packsize, ("c1000000000"):rep(3)), "bad argument #1 to 'F' (format result too large)", "packsize too large")
eq(err(string.packsize, "c" .. (1 << 31)), "invalid format option '8'", "packsize count overflow")
eq(err(string.unpack, "i4", "abc"), "bad argument #2 to 'F' (data string too short)", "unpack short")
eq(err(string.unpack, "i4", "abcd", 6), "bad argument #3 to 'F' (initial position out of string)", "unpack init")
eq(err(string.unpack, "z", "abc"), "bad argument #2 to 'F' (unfinished string for format 'z')", "unpack z")
eq(err(string.unpack, "s1", "\5abc"), "bad argument #2 to 'F' (data string too short)", "unpack s short")
eq(err(string.unpack, "i9", "\0\0\0\0\0\0\0\0\1"), "9-byte integer does not fit into Lua Integer", "unpack i9")
eq(err(string.unpack, "I16", ("\255"):rep(16)), "16-byte integer does not fit into Lua Integer", "unpack I16")

-- the string metatable
eq(getmetatable("").__index, string, "string metatable")
eq(("x"):upper(), "X", "method call")
eq(("%d"):format(5), "5", "method format")
do -- method calls follow whatever the metatable's __index is at the moment of the call
  local mt = getmetatable("")
  local gsub = string.gsub
  local function call(s) return s:shout() end
  local function err(f, ...) -- no string methods: they are what this block breaks
    local ok, m = pcall(f, ...)
    return ok and "no error" or (gsub(tostring(m), "^[^:]*:%d+: ", ""))
  end
  eq(err(call, "a"), "attempt to call a nil value (method 'shout')", "missing method")
  string.shout = function(s) return s:upper() .. "!" end
  eq(call("a"), "A!", "method added to string")
  string.shout = nil
  mt.__index = setmetatable({}, {__index = function(_, k) return string[k] or function() return k end end})
  eq(call("a"), "shout", "__index table with its own __index")
  eq(("b"):upper(), "B", "method through two levels")
  mt.__index = function(s, k) return function() return s .. k end end
  eq(call("a"), "ashout", "__index function")
  mt.__index = {}
  eq(err(call, "a"), "attempt to call a nil value (method 'shout')", "empty __index table")
  mt.__index = nil
  eq(err(call, "a"), "attempt to index a string value (local 's')", "no __index")
  mt.__index = string
  eq(("c"):upper(), "C", "__index restored")
end
eq("10" + 1, 11, "string + number")
eq("3" * "4", 12, "string * string")
eq("10" // "3", 3, "string //")
eq("2" ^ "2", 4.0, "string ^")
eq(-"2", -2, "string unm")
eq("0x10" + 0, 16, "hex string")
eq("1e1" + 0, 10.0, "float string")
eq(" 5 " * 2, 10, "spaces allowed")
eq("7" % "4", 3, "string %")
eq("1" / "2", 0.5, "string /")
eq(err(function() return "a" + 1 end), "attempt to add a 'string' with a 'number'", "bad string arith")
eq(err(function() return 1 + "a" end), "attempt to add a 'number' with a 'string'", "bad string arith 2")
eq(err(function() return "a" + {} end), "attempt to add a 'string' with a 'table'", "string with table")
eq(err(function() return -"a" end), "attempt to unm a 'string' with a 'string'", "bad unm")
eq(err(function() return "1" // "0" end), "attempt to divide by zero", "string // 0")
eq(err(function() return "1" % "0" end), "attempt to perform 'n%0'", "string % 0")
eq("5" + setmetatable({}, {__add = function(a, b) return "mt" end}), "mt", "defers to the other metamethod")

-- %p shows a string's identity (manual 6.4.1, lua_topointer): short strings are interned,
-- so equal ones show alike; long strings are objects of their own, and two equal ones
-- differ, while one keeps its identity across collections (which may move it in Weft).
do
  local p = function(v) return string.format("%p", v) end
  local long1, long2 = string.rep("x", 100), string.rep("x", 100)
  check(p(long1) ~= p(long2), "distinct equal long strings differ")
  local before = p(long1)
  for _ = 1, 3 do local junk = {} for i = 1, 1000 do junk[i] = {i} end collectgarbage() end
  eq(p(long1), before, "a long string keeps its identity across collections")
  eq(p("abc"), p("ab" .. string.char(99)), "equal short strings show alike")
  check(p("abc") ~= p("abd"), "different short strings differ")
  -- A gsub that replaces nothing (no match, or every replacement nil or false) returns
  -- its subject itself; one that replaces something returns a new string.
  eq(p((string.gsub(long1, "y", "z"))), p(long1), "gsub without a match")
  eq(p((string.gsub(long1, ".", {y = "z"}))), p(long1), "gsub whose table replaces nothing")
  eq(p((string.gsub(long1, ".", function() return false end))), p(long1), "gsub whose function replaces nothing")
  check(p((string.gsub(long1, "x", "x"))) ~= p(long1), "gsub with a string replacement makes a new string")
end

-- Lua's compiler keeps one object per string of a chunk, so equal long string literals
-- anywhere in one chunk (other functions, <const> locals, nested functions) are one
-- string, while a long string built at run time, or compiled in another chunk, is not.
do
  local p = function(v) return string.format("%p", v) end
  local a <const> = "a literal longer than forty bytes, so not an interned one"
  local b = "a literal longer than forty bytes, so not an interned one"
  local function inner() return "a literal longer than forty bytes, so not an interned one" end
  local function viaUpvalue() return a end
  local function nested() return function() return "a literal longer than forty bytes, so not an interned one" end end
  eq(p(b), p(a), "equal long literals of one function")
  eq(p(inner()), p(a), "an equal long literal in a nested function")
  eq(p(viaUpvalue()), p(a), "a <const> long literal through a function")
  eq(p(nested()()), p(a), "an equal long literal two functions down")
  local built = "a literal longer than forty bytes, " .. "so not an interned one"
  check(built == a and p(built) ~= p(a), "a long string built at run time is another object")
  local other = load('return "a literal longer than forty bytes, so not an interned one"')()
  check(other == a and p(other) ~= p(a), "an equal long literal of another chunk is another object")
  local f = load('local x = "another literal of more than forty bytes, the second one" '
                 .. 'return x, function() return "another literal of more than forty bytes, the second one" end')
  local x, g = f()
  eq(p(g()), p(x), "equal long literals of a loaded chunk")
end

T.done()
