-- weft-gc-interval: 8 (grow's 9,000 keys copied at every safepoint took five minutes)
-- Tables built and grown in hot loops: constructors (NEWTABLE, SETLIST, with EXTRAARG
-- past 255 items), stores that insert keys, delete them or meet __newindex set mid-loop,
-- and the keys a raw set refuses. The jit and eager runs compile the loops
-- (docs/design/jit.md, "Allocation and inserting stores").

local function sum(t)
  local s = 0
  for _, v in pairs(t) do s = s + (type(v) == "number" and v or 0) end
  return s
end

-- Keys made outside the loops below, which concatenation would leave interpreted.
local NAMES = {}
for i = 1, 3000 do NAMES[i] = "r" .. i end

-- Constructors of every shape, each round.
local function build(n)
  local total, last = 0, nil
  for i = 1, n do
    local pair = {i, i + 1}
    local rec = {name = NAMES[i], size = i, [i] = true}
    local mixed = {i, i * 2, x = i, i * 3}
    local empty = {}
    empty[1] = i
    total = total + pair[1] + pair[2] + rec.size + #mixed + mixed.x + empty[1]
    last = rec
  end
  return total, last.name, last[n]
end
print("build", build(2000))

-- A constructor of 300 items (SETLIST with its EXTRAARG) and one with room for 300.
local function wide(n)
  local s = 0
  for r = 1, n do
    local t = {r, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
      26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50,
      51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75,
      76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100,
      101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120,
      121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140,
      141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160,
      161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180,
      181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200,
      201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220,
      221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240,
      241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260,
      261, 262, 263, 264, 265, 266, 267, 268, 269, 270, 271, 272, 273, 274, 275, 276, 277, 278, 279, 280,
      281, 282, 283, 284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294, 295, 296, 297, 298, 299, 300}
    s = s + #t + t[1] + t[300]
  end
  return s
end
print("wide", wide(300))

-- Inserting stores: new integer keys past the array, strided and negative ones, new
-- string keys, deletions; the table grows under the loop.
local function grow(n)
  local t, names = {}, {}
  for i = 1, n do
    t[i] = i
    t[-i] = i
    t[i * 7919] = 1
    names[NAMES[i % 50 + 1]] = i
    t[NAMES[i]] = i
    if i % 3 == 0 then t[NAMES[i]] = nil end
  end
  local count = 0
  for _ in pairs(t) do count = count + 1 end
  return #t, count, sum(t), sum(names)
end
print("grow", grow(3000))

-- __newindex set in the middle of a loop that inserted raw until then: later new keys
-- go to the metamethod, existing ones are still stored raw.
local function newindex(n)
  local t, seen = {}, 0
  for i = 1, n do
    if i == n // 2 then
      setmetatable(t, {__newindex = function(tt, k, v) seen = seen + 1; rawset(tt, k, v * 10) end})
    end
    t[NAMES[i % 700 + 1]] = i
    t[i] = i
  end
  return seen, t.r1, t[1], t[n]
end
print("newindex", newindex(2000))

-- Keys a raw set refuses: the interpreter's errors, with their positions.
local function badKey(k)
  local t = {}
  for i = 1, 300 do
    t[i] = i
    if i == 250 then t[k] = i end
  end
  return #t
end
-- (lua5.4.4 says "table index is nil", 5.4.8 and Weft "index is nil": the tail is checked.)
local function keyError(k)
  local ok, msg = pcall(badKey, k)
  return ok, msg:match("^[^:]+:(%d+):"), msg:match("index is %a+$")
end
print("nan", keyError(0 / 0))
print("nil", keyError(nil))
-- A float key with an integer value is that integer.
local function floatKeys(n)
  local t = {}
  for i = 1, n do t[i + 0.0] = i; t[i + 0.5] = -i end
  return #t, t[3], t[3.5], math.type(next({[2.0] = 1}))
end
print("float", floatKeys(500))
