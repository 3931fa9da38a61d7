local a, b, c = ...
local t = {...}
local n = select("#", ...)
local function f(...) return ... end
local function g(x, ...) local y = ... return x, y end
local function k(x, y, ...) return end
return f(...), g(1, ...), ...
