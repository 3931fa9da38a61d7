-- The table library (manual §6.6): concat, insert, move, pack, remove, sort, unpack,
-- with metamethods honoured as lua_geti/lua_seti do, and the error messages.
local NAME = "lib_table"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function err(f, ...)
  local ok, m = pcall(f, ...)
  if ok then return "no error" end
  m = tostring(m):gsub("^[^:]*:%d+: ", "")
  return (m:gsub("to '[%w%.]+' %(", "to 'F' ("))
end
local function list(t, n) return table.concat(t, ",", 1, n or #t) end
-- Lua 5.4.4 names argument #1 for remove's bad position; 5.4.6 fixed it to #2. The
-- runner sets WEFT_TEST for Weft runs only; both branches count one check.
local WEFT = os.getenv("WEFT_TEST") ~= nil

-- table.concat
eq(table.concat({}), "", "concat empty")
eq(table.concat({1, 2, 3}), "123", "concat")
eq(table.concat({1, 2, 3}, ", "), "1, 2, 3", "concat sep")
eq(table.concat({1, 2.5, "x"}, "-"), "1-2.5-x", "concat numbers")
eq(table.concat({1, 2, 3, 4}, ",", 2, 3), "2,3", "concat range")
eq(table.concat({1, 2}, ",", 3), "", "concat empty range")
eq(table.concat({[-1] = "a", [0] = "b"}, ",", -1, 0), "a,b", "concat nonpositive")
eq(table.concat({"a\0b", "c"}, "\0"), "a\0b\0c", "concat zeros")
eq(err(table.concat, {1, {}, 3}), "invalid value (table) at index 2 in table for 'concat'", "concat bad value")
eq(err(table.concat, {1, 2}, ",", 1, 3), "invalid value (nil) at index 3 in table for 'concat'", "concat hole")
eq(err(table.concat, 1), "bad argument #1 to 'F' (table expected, got number)", "concat type")
eq(err(table.concat, {}, {}), "bad argument #2 to 'F' (string expected, got table)", "concat sep type")
do
  local proxy = setmetatable({}, {__index = function(_, k) return k * 10 end, __len = function() return 3 end})
  eq(table.concat(proxy, ","), "10,20,30", "concat __index/__len")
  eq(err(table.concat, setmetatable({}, {__len = function() return 1.5 end})), "object length is not an integer", "concat bad __len")
  eq(table.concat(setmetatable({}, {__len = function() return 2.0 end, __index = function() return "z" end})), "zz", "__len float")
  local big = {}
  for i = 1, 1000 do big[i] = i end
  eq(#table.concat(big), 2893, "concat 1000")
end

-- table.insert
do
  local t = {}
  table.insert(t, "a")
  table.insert(t, "c")
  table.insert(t, 2, "b")
  table.insert(t, 1, "z")
  eq(list(t), "z,a,b,c", "insert")
  table.insert(t, 5, "end")
  eq(list(t), "z,a,b,c,end", "insert at n+1")
  eq(err(table.insert, t, 7, "x"), "bad argument #2 to 'F' (position out of bounds)", "insert beyond")
  eq(err(table.insert, t, 0, "x"), "bad argument #2 to 'F' (position out of bounds)", "insert 0")
  eq(err(table.insert, t, -1, "x"), "bad argument #2 to 'F' (position out of bounds)", "insert negative")
  eq(err(table.insert, t, 1, 2, 3), "wrong number of arguments to 'insert'", "insert 4 args")
  eq(err(table.insert, t), "wrong number of arguments to 'insert'", "insert 1 arg")
  eq(err(table.insert, nil, 1), "bad argument #1 to 'F' (table expected, got nil)", "insert nil")
  eq(err(table.insert, t, 1.5, 1), "bad argument #2 to 'F' (number has no integer representation)", "insert float pos")
  table.insert(t, 1, nil)
  eq(t[1], nil, "insert nil value")
  local log = {}
  local p = setmetatable({}, {__newindex = function(tt, k, v) log[#log + 1] = k; rawset(tt, k, v) end})
  table.insert(p, "x")
  table.insert(p, "y")
  eq(list(log), "1,2", "insert __newindex")
end

-- table.remove
do
  local t = {1, 2, 3, 4}
  eq(table.remove(t), 4, "remove last")
  eq(table.remove(t, 1), 1, "remove first")
  eq(list(t), "2,3", "after remove")
  eq(table.remove(t, #t + 1), nil, "remove n+1")
  eq(table.remove({}), nil, "remove empty")
  eq(table.remove({}, 0), nil, "remove 0 of empty")
  eq(select("#", table.remove({})), 1, "remove returns one value")
  local z = {[0] = "zero"}
  eq(table.remove(z, 0), "zero", "remove index 0 of empty")
  eq(z[0], nil, "remove cleared 0")
  if WEFT then
    eq(err(table.remove, {1, 2}, 5), "bad argument #2 to 'F' (position out of bounds)", "remove beyond")
  else
    eq(err(table.remove, {1, 2}, 5), "bad argument #1 to 'F' (position out of bounds)", "remove beyond")
  end
  local h = {n = 0}
  local p = setmetatable({}, {__len = function() return 2 end, __index = function(_, k) return "v" .. k end,
                               __newindex = function(_, k, v) h.n = h.n + 1 end})
  eq(table.remove(p, 1), "v1", "remove via metamethods")
  eq(h.n, 2, "remove shifted via __newindex")
end

-- table.move
do
  eq(list(table.move({1, 2, 3}, 1, 3, 2)), "1,1,2,3", "move up overlapping")
  eq(list(table.move({1, 2, 3}, 2, 3, 1)), "2,3,3", "move down overlapping")
  eq(list(table.move({1, 2, 3}, 1, 3, 1, {})), "1,2,3", "move to other table")
  eq(list(table.move({1, 2, 3}, 1, 0, 5)), "1,2,3", "move empty range")
  local dst = {}
  eq(table.move({1, 2}, 1, 2, 3, dst), dst, "move returns destination")
  eq(dst[3] + dst[4], 3, "move destination contents")
  eq(err(table.move, {1}, 1, math.maxinteger, 2), "bad argument #4 to 'F' (destination wrap around)", "move wrap")
  eq(err(table.move, {1}, -1, math.maxinteger, 2), "bad argument #3 to 'F' (too many elements to move)", "move too many")
  eq(err(table.move, {1}, 1, 2, math.maxinteger), "bad argument #4 to 'F' (destination wrap around)", "move dest wrap")
  eq(err(table.move, {1}, 1, 1), "bad argument #4 to 'F' (number expected, got no value)", "move missing arg")
  local reads = {}
  local src = setmetatable({}, {__index = function(_, k) reads[#reads + 1] = k; return k end})
  local out = table.move(src, 1, 3, 1, {})
  eq(list(out), "1,2,3", "move via __index")
  eq(list(reads), "1,2,3", "move read order")
end

-- table.pack / table.unpack
do
  local p = table.pack(1, nil, 3)
  eq(p.n, 3, "pack n")
  eq(p[3], 3, "pack values")
  eq(table.pack().n, 0, "pack empty")
  eq(select("#", table.unpack({1, 2, 3})), 3, "unpack count")
  eq(table.concat({table.unpack({1, 2, 3}, 2)}, ","), "2,3", "unpack from")
  eq(table.concat({table.unpack({1, 2, 3}, 2, 3)}, ","), "2,3", "unpack range")
  eq(select("#", table.unpack({}, 1, 3)), 3, "unpack nils")
  eq(select("#", table.unpack({1}, 3, 2)), 0, "unpack empty range")
  eq(select("#", table.unpack({1, 2, 3}, -1, 1)), 3, "unpack negative start")
  eq(table.unpack({1, 2, 3}, 3), 3, "unpack last")
  eq(err(table.unpack, {}, 1, 1e8), "too many results to unpack", "unpack too many")
  eq(err(table.unpack, {}, math.mininteger, math.maxinteger), "too many results to unpack", "unpack huge range")
  eq(select(2, table.unpack(setmetatable({}, {__index = function(_, k) return k * 2 end}), 1, 2)), 4, "unpack __index")
  eq(select("#", table.unpack(setmetatable({}, {__len = function() return 4 end}))), 4, "unpack __len")
  eq(select("#", table.unpack({1, 2}, math.maxinteger)), 0, "unpack from maxinteger")
  eq(select("#", table.unpack({}, math.maxinteger - 1, math.maxinteger)), 2, "unpack near maxinteger")
end

-- table.sort
do
  local t = {5, 2, 8, 1, 9, 3}
  table.sort(t)
  eq(list(t), "1,2,3,5,8,9", "sort numbers")
  table.sort(t, function(a, b) return a > b end)
  eq(list(t), "9,8,5,3,2,1", "sort comparator")
  local s = {"pear", "apple", "fig", "banana"}
  table.sort(s)
  eq(list(s), "apple,banana,fig,pear", "sort strings")
  local m = {3, 1.5, 2, -1, 0.5}
  table.sort(m)
  eq(list(m), "-1,0.5,1.5,2,3", "sort mixed numbers")
  local e = {}
  table.sort(e)
  eq(#e, 0, "sort empty")
  local one = {1}
  table.sort(one)
  eq(one[1], 1, "sort one")
  local big = {}
  local x = 12345
  for i = 1, 2000 do x = (x * 1103515245 + 12345) % 2147483648; big[i] = x % 1000 end
  table.sort(big)
  local sorted = true
  for i = 2, #big do if big[i - 1] > big[i] then sorted = false end end
  check(sorted, "sort 2000 with duplicates")
  local desc = {}
  for i = 1, 1000 do desc[i] = 1001 - i end
  table.sort(desc)
  eq(desc[1] + desc[1000], 1001, "sort descending input")
  local same = {}
  for i = 1, 500 do same[i] = 7 end
  table.sort(same)
  eq(same[250], 7, "sort all equal")
  local recs = {{k = 3}, {k = 1}, {k = 2}}
  table.sort(recs, function(a, b) return a.k < b.k end)
  eq(recs[1].k * 100 + recs[2].k * 10 + recs[3].k, 123, "sort records")
  eq(err(table.sort, {1, "x"}), "attempt to compare string with number", "sort mixed types")
  eq(err(table.sort, {3, 2, 1}, function(a, b) error("cmp") end), "cmp", "comparator error propagates")
  eq(err(table.sort, {1, 2}, 3), "bad argument #2 to 'F' (function expected, got number)", "sort comparator type")
  -- An inconsistent order must neither hang nor corrupt: it may raise the error.
  local bad = {}
  for i = 1, 100 do bad[i] = i % 7 end
  local ok, msg = pcall(table.sort, bad, function(a, b) return true end)
  check(ok or tostring(msg):find("invalid order function for sorting", 1, true), "inconsistent order detected")
  local n = 0
  for i = 1, 100 do if bad[i] ~= nil then n = n + 1 end end
  eq(n, 100, "no element lost by a bad comparator")
  local proxy = setmetatable({}, {__index = {30, 10, 20}, __len = function() return 3 end,
                                  __newindex = function(t, k, v) rawset(t, k, v) end})
  table.sort(proxy)
  eq(rawget(proxy, 1), 10, "sort through metamethods")
  local nan = {3, 0/0, 1, 2}
  pcall(table.sort, nan)
  eq(#nan, 4, "sort with nan keeps the length")
  local objs = {}
  for i = 1, 50 do objs[i] = setmetatable({v = (i * 37) % 50}, {__lt = function(a, b) return a.v < b.v end}) end
  table.sort(objs)
  eq(objs[1].v .. "," .. objs[50].v, "0,49", "sort with __lt")
end

T.done()
