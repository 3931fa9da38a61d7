local a = 1
local function f(x, y)
  local function g() return a + x end
  return g
end
function h(...)
  local t = {...}
  return select('#', ...), ...
end
function obj.method(self, z) return self, z end
function obj:method2(z) return self.v + z end
function obj.a.b.c:d() end
local c = function(...) local a, b = ... return a end
do
  local p = 1
  local function q() p = p + 1 end
end
return f, function() a = a + 1 end
