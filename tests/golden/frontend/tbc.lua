local function open() return setmetatable({}, {__close = function() end}) end
do
  local a <close> = open()
  local b <const> = 10
  print(a, b)
end
local function f()
  local c <close> = open()
  return g()
end
local function h()
  local d <close> = open()
  return 1, 2
end
for k in pairs({}) do end
return f, h
