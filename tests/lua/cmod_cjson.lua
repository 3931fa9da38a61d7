-- Debian's lua-cjson (cjson.so, built for lua5.4) loaded by require from the default
-- package.cpath: encoding, decoding, round trips, null and errors.
local cjson, file = require "cjson"
print(type(cjson), type(cjson.encode), cjson.null ~= nil, file)

print(cjson.encode({1, 2, 3, "x", true, false}))
print(cjson.encode({name = "weft"}))
print(cjson.encode("quote\" backslash\\ newline\n tab\t"))
print(cjson.encode(1.5), cjson.encode(-3), cjson.encode(cjson.null))

local doc = '{"a":[1,2,{"b":null}],"s":"\\u00e9t\\u00e9","n":-12.25,"t":true}'
local v = cjson.decode(doc)
print(#v.a, v.a[1], v.a[3].b == cjson.null, v.s, v.n, v.t)

-- Round trips: decode(encode(x)) has the same content.
local function same(x, y)
  if type(x) ~= type(y) then return false end
  if type(x) ~= "table" then return x == y end
  for k, xv in pairs(x) do if not same(xv, y[k]) then return false end end
  for k in pairs(y) do if x[k] == nil then return false end end
  return true
end
local values = {
  {1, 2, 3}, {x = {y = {z = "deep"}}}, {list = {"a", "b"}, n = 0.125, neg = -7},
  "plain", 12345, {mixed = {1, "two", {three = 3}}}, {},
}
for i, x in ipairs(values) do
  local text = cjson.encode(x)
  print(i, same(cjson.decode(text), x), same(cjson.decode(cjson.encode(cjson.decode(text))), x))
end
local big = {}
for i = 1, 1000 do big[i] = {id = i, name = "item" .. i, even = i % 2 == 0} end
local back = cjson.decode(cjson.encode(big))
print(#back, back[1000].name, back[999].even, same(back, big))

-- Errors raised from inside the C module.
print(pcall(cjson.decode, "{bad json"))
print(pcall(cjson.encode, {f = print}))
print(pcall(cjson.decode, "[1, 2"))
