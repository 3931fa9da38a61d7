-- The string library's index and format rules as generated tables, compared with lua5.4
-- through NAME.expected: find over every init from -6 to 6 (plain and pattern), rep
-- with counts and separators, and string.format with every subset of the flags "-+ #0",
-- with and without width and precision, over every conversion (valid combinations print
-- their result, invalid ones the error).
local NAME = "lib_string_tables"
local T = dofile("helpers/check.lua")(NAME)
local check = T.check

local function all(...)
  local out = {}
  for i = 1, select("#", ...) do out[i] = tostring((select(i, ...))) end
  return table.concat(out, ",")
end

local function result(f, ...)
  local r = table.pack(pcall(f, ...))
  if not r[1] then return "E:" .. tostring(r[2]):gsub("^[^:]*:%d+: ", "") end
  return all(table.unpack(r, 2, r.n))
end

-- string.find: every init, plain and not, over patterns that anchor, match empty,
-- and hold magic characters.
local entries = 0
for _, pat in ipairs({"l", "", "o$", "^h", "l+", ".", "%a+", "(l)(o)"}) do
  for _, plain in ipairs({false, true}) do
    local row = {}
    for init = -6, 6 do
      row[#row + 1] = "[" .. result(string.find, "hello", pat, init, plain) .. "]"
      entries = entries + 1
    end
    print("find " .. string.format("%q", pat) .. " " .. tostring(plain) .. " " .. table.concat(row))
  end
end
check(entries == 8 * 2 * 13, "find table complete")

-- string.rep: counts around zero, with and without separators, of empty and short strings.
for _, s in ipairs({"", "ab"}) do
  local row = {}
  for _, n in ipairs({-1, 0, 1, 2, 3}) do
    for _, sep in ipairs({false, "", ","}) do
      row[#row + 1] = "[" .. (sep and result(string.rep, s, n, sep) or result(string.rep, s, n)) .. "]"
    end
  end
  print(string.format("rep %q %s", s, table.concat(row)))
end

-- string.format: every conversion with every subset of flags, each with no width, a
-- width, a precision and both.
local flagChars = {"-", "+", " ", "#", "0"}
local flagSets = {}
for mask = 0, 31 do
  local f = ""
  for bit = 1, 5 do
    if mask & (1 << (bit - 1)) ~= 0 then f = f .. flagChars[bit] end
  end
  flagSets[#flagSets + 1] = f
end
local conversions = {
  {"c", {65}}, {"d", {42, -42}}, {"i", {0}}, {"u", {42}}, {"o", {255}}, {"x", {255}},
  {"X", {-1}}, {"a", {1.0, -0.5}}, {"A", {255.5}}, {"e", {3.14159, -0.0}},
  {"E", {1e300}}, {"f", {2.5, math.huge}}, {"F", {-math.huge}}, {"g", {1e-5, 100000.0}},
  {"G", {1e20}}, {"s", {"hello"}}, {"p", {1}}, {"q", {"a\nb"}},
}
local formats = 0
for _, conv in ipairs(conversions) do
  for _, value in ipairs(conv[2]) do
    local row = {}
    for _, flags in ipairs(flagSets) do
      for _, size in ipairs({"", "8", ".3", "10.2"}) do
        local spec = "%" .. flags .. size .. conv[1]
        row[#row + 1] = spec .. "=[" .. result(string.format, spec, value) .. "]"
        formats = formats + 1
      end
    end
    print("format " .. conv[1] .. " " .. tostring(value) .. " " .. table.concat(row, " "))
  end
end
check(formats == 23 * 32 * 4, "format table complete: " .. formats)

T.done()
