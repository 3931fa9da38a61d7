for i = 1, 3 do
  for j = 1, 3 do
    if j == 2 then goto continue end
    print(i, j)
    ::continue::
  end
end
do
  goto skip
  print("never")
  ::skip::
end
::top::
local x = 1
if x then goto done end
goto top
::done::
do
  local y = 1
  local f = function() return y end
  goto out
end
::out::
