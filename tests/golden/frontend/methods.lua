local obj = {}
function obj:new(o) o = o or {} setmetatable(o, self) self.__index = self return o end
function obj:get() return self.value end
local o = obj:new({value = 3})
print(o:get(), o:get(1, 2), o["get"](o))
local s = ("x"):rep(3)
return ("abc"):upper()
