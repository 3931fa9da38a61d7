-- expect-exit: 1
-- An uncaught error ends the run with status 1, "PROG: message" and a traceback.
local function fail(x)
  error("boom " .. x)
end
print("before the error")
fail(42)
print("never printed")
