local o = ...
print("hello")
print "hello"
print { 1, 2 }
o:m(1, 2)
o.f.g:h()
local x = o:m()
local y, z = o(1, ...)
print(o(...))
print((o()))
local t = { o() }
local u = { o(), o() }
local v = { ..., 1 }
return o(1, 2)
