local t = {3, 1, 2, x = 1, [2.5] = "f", [true] = false}
table.insert(t, 4)
table.insert(t, 1, 0)
table.remove(t, 2)
table.sort(t)
local mt = setmetatable({}, {__index = t, __len = rawlen, __call = print})
local n = #mt + mt[1] + select("#", table.unpack(t)) + (math.tointeger(2.0) or 0)
local co = coroutine.wrap(pcall)
local ok = co(error, {code = n})
local r = {pcall(string.rep, "x", 2 ^ 40)}
return next(t), rawequal(t, mt), tostring(n // 0.0), math.max(1, 2.5), ok, r[2], 1 << 63 >> 1, 7 // 0.0, -7 % 3
