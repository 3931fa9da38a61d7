-- weft-only
-- expect-exit: 3
-- weft-env: WEFT_FAULT=gc.marker
-- A major whose marker fails (one of several, or the requester's alone): the runtime
-- closes rather than run on a heap it marked in part. Nothing is printed before: the
-- stress modes run a major at the first safepoint.
local t = {}
for i = 1, 1000 do t[i] = {i} end
collectgarbage()
print("not reached")
