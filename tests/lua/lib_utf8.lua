-- The utf8 library (manual §6.5): char, charpattern, codes, codepoint, len, offset,
-- strict and lax decoding, and the errors.
local NAME = "lib_utf8"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function err(f, ...)
  local ok, m = pcall(f, ...)
  if ok then return "no error" end
  m = tostring(m):gsub("^[^:]*:%d+: ", "")
  return (m:gsub("to '[%w%.]+' %(", "to 'F' ("))
end
local function all(...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = tostring(t[i]) end
  return table.concat(t, ",", 1, t.n)
end
local WEFT = os.getenv("WEFT_TEST") ~= nil

-- utf8.char
eq(utf8.char(72, 105), "Hi", "char ascii")
eq(utf8.char(0xe4), "\xc3\xa4", "char 2 bytes")
eq(utf8.char(0x20ac), "\xe2\x82\xac", "char 3 bytes")
eq(utf8.char(0x10ffff), "\xf4\x8f\xbf\xbf", "char max unicode")
eq(utf8.char(0x7fffffff), "\xfd\xbf\xbf\xbf\xbf\xbf", "char 6 bytes")
eq(utf8.char(0), "\0", "char NUL")
eq(utf8.char(), "", "char none")
eq(err(utf8.char, -1), "bad argument #1 to 'F' (value out of range)", "char negative")
eq(err(utf8.char, 0x80000000), "bad argument #1 to 'F' (value out of range)", "char too big")
eq(err(utf8.char, 65, "x"), "bad argument #2 to 'F' (number expected, got string)", "char type")

-- utf8.charpattern
eq(utf8.charpattern, "[\0-\x7F\xC2-\xFD][\x80-\xBF]*", "charpattern")
do
  local n = 0
  for _ in ("häé€"):gmatch(utf8.charpattern) do n = n + 1 end
  eq(n, 4, "charpattern iterates characters")
end

-- utf8.codepoint
eq(all(utf8.codepoint("häé", 1, -1)), "104,228,233", "codepoint all")
eq(utf8.codepoint("häé"), 104, "codepoint default")
eq(utf8.codepoint("häé", 2), 228, "codepoint at 2")
eq(select("#", utf8.codepoint("abc", 4, 3)), 0, "codepoint empty range")
eq(utf8.codepoint("\u{7FFFFFFF}", 1, 1, true), 0x7fffffff, "codepoint lax")
eq(err(utf8.codepoint, "\u{7FFFFFFF}"), "invalid UTF-8 code", "codepoint strict")
eq(err(utf8.codepoint, "\xff"), "invalid UTF-8 code", "codepoint invalid byte")
eq(err(utf8.codepoint, "abc", 4), "bad argument #3 to 'F' (out of bounds)", "codepoint i beyond")
eq(err(utf8.codepoint, "abc", 0), "bad argument #2 to 'F' (out of bounds)", "codepoint i zero")
eq(err(utf8.codepoint, "abc", 1, 4), "bad argument #3 to 'F' (out of bounds)", "codepoint j beyond")
eq(err(utf8.codepoint, "\xe4"), "invalid UTF-8 code", "codepoint truncated")

-- utf8.len
eq(utf8.len("häé"), 3, "len")
eq(utf8.len(""), 0, "len empty")
eq(all(utf8.len("a\xffb")), "nil,2", "len invalid")
eq(utf8.len("abc", 4), 0, "len at end")
eq(utf8.len("abc", 2), 2, "len from 2")
eq(utf8.len("abc", -1), 1, "len negative")
eq(utf8.len("häé", 1, 2), 2, "len partial")
eq(all(utf8.len("\xed\xa0\x80")), "nil,1", "len surrogate strict")
eq(utf8.len("\xed\xa0\x80", 1, -1, true), 1, "len surrogate lax")
eq(all(utf8.len("\xf4\x90\x80\x80")), "nil,1", "len above 10FFFF strict")
eq(utf8.len("\xf4\x90\x80\x80", 1, -1, true), 1, "len above 10FFFF lax")
eq(all(utf8.len("\xc0\x80")), "nil,1", "len overlong")
eq(all(utf8.len("\xe0\x80\x80")), "nil,1", "len overlong 3")
eq(all(utf8.len("ab\x80")), "nil,3", "len stray continuation")
eq(err(utf8.len, "abc", 5), "bad argument #2 to 'F' (initial position out of bounds)", "len i beyond")
eq(err(utf8.len, "abc", 1, 4), "bad argument #3 to 'F' (final position out of bounds)", "len j beyond")

-- utf8.offset
eq(utf8.offset("häé", 3), 4, "offset 3rd char")
eq(utf8.offset("häé", -1), 4, "offset last")
eq(utf8.offset("häé", 0, 3), 2, "offset 0 finds start")
eq(utf8.offset("abc", 5), nil, "offset beyond")
eq(utf8.offset("abc", 4), 4, "offset one past")
eq(utf8.offset("abc", -4), nil, "offset before start")
eq(utf8.offset("abc", 1), 1, "offset 1")
eq(utf8.offset("", 1), 1, "offset in empty")
eq(utf8.offset("a€b", 2, 1), 2, "offset from start")
eq(utf8.offset("a€b", -1, 5), 2, "offset back over 3-byte char")
eq(err(utf8.offset, "häé", 1, 3), "initial position is a continuation byte", "offset continuation")
eq(err(utf8.offset, "abc", 1, 5), "bad argument #3 to 'F' (position out of bounds)", "offset i beyond")
eq(err(utf8.offset, "abc", 1, 0), "bad argument #3 to 'F' (position out of bounds)", "offset i zero")

-- utf8.codes
do
  local out = {}
  for p, c in utf8.codes("héllo") do out[#out + 1] = p .. ":" .. c end
  eq(table.concat(out, " "), "1:104 2:233 4:108 5:108 6:111", "codes")
  local n = 0
  for _ in utf8.codes("") do n = n + 1 end
  eq(n, 0, "codes empty")
  eq(err(function() for _ in utf8.codes("a\xffb") do end end), "invalid UTF-8 code", "codes invalid")
  eq(err(function() for _ in utf8.codes("\xed\xa0\x80") do end end), "invalid UTF-8 code", "codes surrogate")
  eq(err(function() for _ in utf8.codes("\xed\xa0\x80", true) do end end), "no error", "codes lax surrogate")
  local lax = {}
  for _, c in utf8.codes("\u{7FFFFFFF}", true) do lax[#lax + 1] = c end
  eq(lax[1], 0x7fffffff, "codes lax big")
  -- The manual: "raises an error if it meets any invalid byte sequence". Lua 5.4.4
  -- skipped a stray continuation byte after a character; 5.4.6 (and Weft) reject it.
  if WEFT then
    eq(err(function() for _ in utf8.codes("a\x80") do end end), "invalid UTF-8 code", "codes stray continuation")
    eq(err(function() for _ in utf8.codes("\x80a") do end end), "bad argument #1 to 'F' (invalid UTF-8 code)", "codes leading continuation")
  else
    T.checks = T.checks + 2  -- the two checks above, counted alike under lua5.4
  end
end

T.done()
