-- Method calls through metatables (class-style objects with inheritance).
local Point = {}
Point.__index = Point
function Point.new(x, y) return setmetatable({x = x, y = y}, Point) end
function Point:add(o) return Point.new(self.x + o.x, self.y + o.y) end
function Point:dot(o) return self.x * o.x + self.y * o.y end
function Point:scale(k) self.x, self.y = self.x * k, self.y * k; return self end

local Point3 = setmetatable({}, {__index = Point})
Point3.__index = Point3
function Point3.new(x, y, z) local p = Point.new(x, y); p.z = z; return setmetatable(p, Point3) end
function Point3:dot(o) return Point.dot(self, o) + self.z * (o.z or 0) end

local n = tonumber(arg and arg[1]) or 1500000
local acc = Point.new(0, 0)
local p3 = Point3.new(1, 2, 3)
local total = 0
for i = 1, n do
  local p = Point.new(i % 10, i % 7)
  acc = acc:add(p)
  total = total + p3:dot(p3) + p:dot(acc) % 13
  if i % 1000 == 0 then acc:scale(0) end
end
print(total, acc.x, acc.y)
