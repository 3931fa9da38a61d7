local function outer(a)
  return function(b)
    return function(c)
      return a + b + c
    end
  end
end
local deep = {{{{{}}}}}
local e = ((((1 + 2) * 3) - 4) / 5)
return outer(1)(2)(3), deep, e
