-- Lexical conventions (manual §3.1): escapes, long strings and comments, numerals.
local NAME = "lang_lexical"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

-- Escape sequences.
eq("\a", string.char(7), "\\a")
eq("\b", string.char(8), "\\b")
eq("\f", string.char(12), "\\f")
eq("\n", string.char(10), "\\n")
eq("\r", string.char(13), "\\r")
eq("\t", string.char(9), "\\t")
eq("\v", string.char(11), "\\v")
eq("\\", string.char(92), "backslash")
eq("\"", string.char(34), "double quote")
eq('\'', string.char(39), "single quote")
eq("a\
b", "a\nb", "escaped newline")
eq("\x41\x62\x5A", "AbZ", "\\xXX")
eq("\x7f\xFF", string.char(127, 255), "\\xXX upper and lower")
eq("\65\066\0671", "ABC1", "decimal escapes, at most three digits")
eq("\0", string.char(0), "\\0")
eq(#"a\0b", 3, "embedded zero")
eq("\255", string.char(255), "\\255")
eq("x\z
      y", "xy", "\\z skips whitespace")
eq(load("return 'x\\z  \n\n  y'")(), "xy", "\\z skips newlines")
eq("\u{41}", "A", "\\u{41}")
eq("\u{7FF}", "\xDF\xBF", "\\u two bytes")
eq("\u{FFFF}", "\xEF\xBF\xBF", "\\u three bytes")
eq("\u{10FFFF}", "\xF4\x8F\xBF\xBF", "\\u four bytes")
eq("\u{7FFFFFFF}", "\xFD\xBF\xBF\xBF\xBF\xBF", "\\u six bytes")
eq("\u{0000041}", "A", "\\u leading zeros")

-- Escape errors are syntax errors with Lua's messages.
local function loadError(src)
  local f, msg = load(src, "=src")
  return f == nil and msg or "loaded"
end
eq(loadError([[return "\q"]]), [[src:1: invalid escape sequence near '"\q']], "invalid escape")
eq(loadError([[return "\x4"]]), [[src:1: hexadecimal digit expected near '"\x4"']], "short \\x")
eq(loadError([[return "\256"]]), [[src:1: decimal escape too large near '"\256"']], "decimal too large")
eq(loadError([[return "\u{110000000}"]]), [[src:1: UTF-8 value too large near '"\u{110000000']], "utf8 too large")
eq(loadError([[return "\u41"]]), [[src:1: missing '{' near '"\u4']], "\\u without brace")
eq(loadError("return \"abc"), [[src:1: unfinished string near <eof>]], "unfinished string")
eq(loadError("return \"abc\ndef\""), [[src:1: unfinished string near '"abc']], "newline in string")
eq(loadError("return [==[abc]=]"), "src:1: unfinished long string (starting at line 1) near <eof>", "unfinished long string")
eq(loadError("x = [=x"), "src:1: invalid long string delimiter near '[='", "bad long delimiter")

-- Long strings.
eq([[abc]], "abc", "long string")
eq([[
first newline skipped]], "first newline skipped", "leading newline")
eq([==[a]]b]=]c]==], "a]]b]=]c", "level 2 long string")
eq([[a\nb]], "a\\nb", "no escapes in long strings")
eq([[
a
b]], "a\nb", "newlines kept")
eq(load("return [[\r\na\r\nb\n\rc]]")(), "a\nb\nc", "CR LF pairs become \\n")
eq([=[]=], "", "empty long string")

-- Comments.
local x = 1 --[[ a long
comment ]] + 1
eq(x, 2, "long comment inside an expression")
--[==[ level two ]] still comment ]==] x = x + 1
eq(x, 3, "level 2 comment ends at its delimiter")
-- a short comment --[[ is not a long one
eq(x, 3, "short comment")

-- Numerals.
eq(3, 0x3, "integer 3 is hex 0x3")
eq(345, 0x159, "integer 345 is hex 0x159")
eq(0xff, 255, "hex integer")
eq(0xBEBADA, 12499674, "hex mixed case")
eq(3.0, 0x1.8p1, "float 3.0 is hex 0x1.8p1")
eq(3.1416, 31416 / 10000, "float 3.1416 is the rounded quotient 31416 / 10000")
eq(314.16e-2, 3.1416, "exponent")
eq(0.31416E1, 3.1416, "exponent E")
eq(34e1, 340.0, "integral exponent is float")
eq(math.type(34e1), "float", "34e1 is a float")
eq(0x0.1E, 0.1171875, "hex float")
eq(0xA23p-4, 162.1875, "hex binary exponent")
eq(0X1P+2, 4.0, "hex P+")
eq(0x.8, 0.5, "hex fraction only")
eq(.5, 0.5, "leading dot")
eq(5., 5.0, "trailing dot")
eq(1e308 * 10, math.huge, "float overflow to inf")
eq(9223372036854775807, math.maxinteger, "maxinteger literal")
eq(9223372036854775808, 9223372036854775808.0, "decimal integer overflow becomes float")
eq(math.type(9223372036854775808), "float", "overflowing decimal is float")
eq(-9223372036854775808, -9223372036854775808.0, "negated overflowing literal is float")
eq(math.mininteger, -9223372036854775807 - 1, "mininteger")
eq(0xffffffffffffffff, -1, "hex integers wrap around")
eq(0x7fffffffffffffff, math.maxinteger, "hex maxinteger")
eq(0x10000000000000000, 0, "hex wraps modulo 2^64")
eq(0x1p63, 9.2233720368547758e18, "hex float exponent")
eq(1e-400, 0.0, "underflow to zero")
eq(loadError("return 3x"), "src:1: malformed number near '3x'", "malformed number")
eq(loadError("return 0x"), "src:1: malformed number near '0x'", "0x alone")
eq(loadError("return 1e"), "src:1: malformed number near '1e'", "missing exponent")
eq(loadError("return 1..2"), "src:1: malformed number near '1..2'", "two dots")
eq(loadError("return 0xg"), "src:1: malformed number near '0xg'", "bad hex")

-- Names and keywords.
local _x1, X_, _ = 1, 2, 3
eq(_x1 + X_ + _, 6, "names with underscores and digits")
eq(loadError("local and = 1"), "src:1: <name> expected near 'and'", "keyword as a name")
eq(loadError("x = @"), "src:1: unexpected symbol near '@'", "bad character")
eq(type(load("local a = 1 ~= 2 ~ 3 // 4 >> 5 << 6 & 7 | 8 <= 9 >= 10 == 11 .. 12 ::l:: goto l")), "function", "all operators lex")
local And, AND = 1, 2
eq(And + AND, 3, "keywords are case-sensitive")

-- Line counting through all newline forms (error messages carry line numbers).
eq(loadError("\n\n\nx = = 1"), "src:4: unexpected symbol near '='", "LF lines")
eq(loadError("\r\n\r\nx = = 1"), "src:3: unexpected symbol near '='", "CRLF lines")
eq(loadError("\r\rx = = 1"), "src:3: unexpected symbol near '='", "CR lines")
eq(loadError("--[[\n\n]] x = = 1"), "src:3: unexpected symbol near '='", "lines inside comments")

-- tostring of numerals (%.14g for floats).
print(1e15, 1e16, 0.1, -0.0, 1/3, 2^63, 100 // 1.0, 3 | 0, 1e100)
print(0x7fffffffffffffff, 0x8000000000000000, 255 // 1, 7.0)

T.done()
