-- weft-gc-interval: 1000
-- Calls at depth (manual §3.4.10): proper tail calls run in constant stack space in
-- every form, 1,000,000 deep (10,000,000 for the plain loop), deeper than either
-- interpreter's stack could hold; deep non-tail recursion ends in a catchable "stack
-- overflow", and the stack recovers. Every call is a safepoint and a relocating
-- collection copies the whole heap, so the relocate run collects at every 1,000th
-- safepoint: 10,000 times in the plain loop (at every one, about an hour).
-- lang_calls.lua collects at every safepoint, at small depths.
local NAME = "lang_calls_deep"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

-- Proper tail calls.
local function loop(n, acc) if n == 0 then return acc end return loop(n - 1, acc + 1) end
eq(loop(10000000, 0), 10000000, "10,000,000 tail calls")
local isEven, isOdd
function isEven(n) if n == 0 then return true end return isOdd(n - 1) end
function isOdd(n) if n == 0 then return false end return isEven(n - 1) end
eq(isEven(1000001), false, "mutual tail recursion")
local obj = {n = 0}
function obj:count(k) if k == 0 then return self.n end self.n = self.n + 1 return self:count(k - 1) end
eq(obj:count(1000000), 1000000, "tail method calls")
local function viaVararg(n, ...) if n == 0 then return select("#", ...) end return viaVararg(n - 1, ...) end
eq(viaVararg(1000000, 1, 2, 3), 3, "tail calls with varargs")
local callable = setmetatable({}, {__call = function(self, n) if n == 0 then return "done" end return self(n - 1) end})
eq(callable(1000000), "done", "tail calls through __call")

-- Deep recursion ends in "stack overflow", which pcall catches.
local function deep(n) return 1 + deep(n + 1) end
local ok, msg = pcall(deep, 1)
eq(ok, false, "infinite recursion fails")
check(tostring(msg):find("stack overflow", 1, true) ~= nil, "message mentions stack overflow: " .. tostring(msg))
local function depthOk(n) if n == 0 then return 0 end return 1 + depthOk(n - 1) end
eq(depthOk(10000), 10000, "the stack works again after an overflow")
local ok2, msg2 = pcall(function() local t = setmetatable({}, {}) getmetatable(t).__index = function(t, k) return t[k] end return t.x end)
eq(ok2, false, "infinite __index recursion fails")
check(tostring(msg2):find("stack overflow", 1, true) ~= nil, "with a stack overflow message")
local co = coroutine.wrap(function() return pcall(deep, 1) end)
local cok, cmsg = co()
eq(cok, false, "overflow inside a coroutine")
check(tostring(cmsg):find("stack overflow", 1, true) ~= nil, "caught in the coroutine")
eq(depthOk(150), 150, "150-deep non-tail recursion")
local function sum(n) if n == 0 then return 0 end return n + sum(n - 1) end
eq(sum(100000), 5000050000, "100,000-deep non-tail recursion")

-- How deep recursion goes is set by the stack's size alone, as in Lua: the deeper the
-- smaller the frames (about 500,000 frames of two slots, a quarter as many of eight).
local reached = 0
local function small(n) reached = n; return 1 + small(n + 1) end
check(not pcall(small, 1), "small frames overflow")
check(reached > 490000 and reached <= 500000, "depth of two-slot frames: " .. reached)
local function large(n, a, b, c) reached = n; local x, y, z = a, b, c; return large(n + 1, x, y, z) + 1 end
check(not pcall(large, 1), "large frames overflow")
check(reached > 120000 and reached <= 125000, "depth of eight-slot frames: " .. reached)

T.done()
