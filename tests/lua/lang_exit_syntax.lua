-- expect-exit: 1
-- A syntax error in the script is reported like lua: no traceback, status 1.
print("not run")
local x = = 1
