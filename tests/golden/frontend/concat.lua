local a, b, c = ...
local s = a .. b
s = a .. b .. c
s = (a .. b) .. c
s = a .. (b .. c) .. a
s = "x" .. 1 .. 2.5
s = a .. b .. c .. a .. b .. c
return s
