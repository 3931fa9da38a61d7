local a, b, c = 1, 2, 3
local function f()
  local function g()
    local function h() return a + b + c end
    return h
  end
  a = 5
  return g
end
local x = 0
local inc = function() x = x + 1; return x end
local t = {}
function t.get() return x, t end
return f, inc
