-- A JSON-like encoder and decoder: a generated document of nested objects and arrays is
-- encoded to text, decoded back and re-encoded every round; the two texts must agree.
-- Exercises short-lived strings, string building and many small tables.
local byte, char, sub, find, concat, format = string.byte, string.char, string.sub, string.find, table.concat, string.format

local seed = 42
local function random(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n
end

local words = {"alpha", "beta", "gamma", "delta", "quote\"d", "back\\slash", "tab\tbed", "x"}

local function makeValue(depth)
  local pick = random(depth > 0 and 7 or 4)
  if pick == 0 then return random(100000) - 50000
  elseif pick == 1 then return (random(1000000) - 500000) / 64
  elseif pick == 2 then return words[random(#words) + 1] .. random(100)
  elseif pick == 3 then return random(3) == 0
  elseif pick <= 5 then
    local object = {}
    for i = 1, random(6) + 1 do object["k" .. i .. words[random(#words) + 1]] = makeValue(depth - 1) end
    return object
  else
    local array = {}
    for i = 1, random(8) + 1 do array[i] = makeValue(depth - 1) end
    return array
  end
end

local escapes = {['"'] = '\\"', ["\\"] = "\\\\", ["\t"] = "\\t", ["\n"] = "\\n"}

local encodeValue
local function encodeString(s, out)
  out[#out + 1] = '"' .. s:gsub('[%c"\\]', escapes) .. '"'
end

-- Keys in sorted order, so an object encodes to one text whatever its hash order.
local function encodeObject(t, out)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  out[#out + 1] = "{"
  for i, k in ipairs(keys) do
    if i > 1 then out[#out + 1] = "," end
    encodeString(k, out)
    out[#out + 1] = ":"
    encodeValue(t[k], out)
  end
  out[#out + 1] = "}"
end

function encodeValue(v, out)
  local kind = type(v)
  if kind == "string" then encodeString(v, out)
  elseif kind == "number" then out[#out + 1] = math.type(v) == "integer" and tostring(v) or format("%.17g", v)
  elseif kind == "boolean" then out[#out + 1] = tostring(v)
  elseif v[1] ~= nil then
    out[#out + 1] = "["
    for i, item in ipairs(v) do
      if i > 1 then out[#out + 1] = "," end
      encodeValue(item, out)
    end
    out[#out + 1] = "]"
  else
    encodeObject(v, out)
  end
end

local function encode(v)
  local out = {}
  encodeValue(v, out)
  return concat(out)
end

local unescapes = {['"'] = '"', ["\\"] = "\\", t = "\t", n = "\n"}
local decodeValue

local function skip(text, pos)
  return find(text, "[^ \n]", pos) or #text + 1
end

local function decodeString(text, pos)
  local pieces, start = {}, pos + 1
  while true do
    local stop = find(text, '["\\]', start)
    pieces[#pieces + 1] = sub(text, start, stop - 1)
    if byte(text, stop) == 34 then return concat(pieces), stop + 1 end
    pieces[#pieces + 1] = unescapes[sub(text, stop + 1, stop + 1)]
    start = stop + 2
  end
end

local function decodeArray(text, pos)
  local array = {}
  pos = skip(text, pos + 1)
  if byte(text, pos) == 93 then return array, pos + 1 end
  while true do
    array[#array + 1], pos = decodeValue(text, pos)
    pos = skip(text, pos)
    local c = byte(text, pos)
    pos = skip(text, pos + 1)
    if c == 93 then return array, pos end
  end
end

local function decodeObject(text, pos)
  local object = {}
  pos = skip(text, pos + 1)
  if byte(text, pos) == 125 then return object, pos + 1 end
  while true do
    local key
    key, pos = decodeString(text, pos)
    pos = skip(text, skip(text, pos) + 1)  -- the colon
    object[key], pos = decodeValue(text, pos)
    pos = skip(text, pos)
    local c = byte(text, pos)
    pos = skip(text, pos + 1)
    if c == 125 then return object, pos end
  end
end

function decodeValue(text, pos)
  local c = byte(text, pos)
  if c == 34 then return decodeString(text, pos)
  elseif c == 91 then return decodeArray(text, pos)
  elseif c == 123 then return decodeObject(text, pos)
  elseif c == 116 then return true, pos + 4
  elseif c == 102 then return false, pos + 5
  end
  local stop = find(text, "[,%]}]", pos) or #text + 1
  return tonumber(sub(text, pos, stop - 1)), stop
end

local rounds = tonumber(arg and arg[1]) or 600
local documents = {}
for i = 1, 20 do documents[i] = makeValue(5) end
local checksum = 0
for round = 1, rounds do
  for i = 1, #documents do
    local text = encode(documents[i])
    local decoded = decodeValue(text, 1)
    local again = encode(decoded)
    assert(again == text, "round trip differs")
    checksum = (checksum + #text * round + i) % 1000000007
    if round % 10 == 0 then documents[i] = decoded end
  end
end
print(rounds, checksum)
