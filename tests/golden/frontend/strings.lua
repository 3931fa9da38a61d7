local s = "a\tb\nc\\d\"e'\065\x41\u{48}\u{7FFFFFFF}\z
          continued"
local l = [[
long string]]
local l2 = [==[with ]] inside]==]
local e = ''
local bin = "\0\1\255"
--[[ long
comment ]] --[==[ another ]==]
-- short comment
return s .. l .. l2 .. e .. bin
