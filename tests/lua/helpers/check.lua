-- The checks every conformance script shares, loaded once per script (the runner starts
-- scripts in tests/lua, so the relative path works under weft and lua5.4 alike):
--
--   local T = dofile("helpers/check.lua")("lang_x")
--   T.eq(1 + 1, 2, "addition")
--   T.done()   -- prints "lang_x: N checks passed" (and how many failed)
--
-- A failed check prints "FAIL #N: message" at once and the run goes on, so the output's
-- diff against NAME.expected shows every failure, not only the first.
return function(name)
  local T = {checks = 0, failures = 0}

  function T.check(cond, msg)
    T.checks = T.checks + 1
    if not cond then
      T.failures = T.failures + 1
      print("FAIL #" .. T.checks .. ": " .. tostring(msg))
    end
  end

  -- Equal values of the same subtype: 1 and 1.0 differ.
  function T.eq(got, want, msg)
    T.check(got == want and math.type(got) == math.type(want),
            (msg or "") .. ": got " .. tostring(got) .. ", want " .. tostring(want))
  end

  -- The error f(...) raises ("no error" if none), as raised.
  function T.msgOf(f, ...)
    local ok, msg = pcall(f, ...)
    if ok then return "no error" end
    return msg
  end

  -- The same, with a string message's "chunk:line: " position removed.
  function T.errorOf(f, ...)
    local msg = T.msgOf(f, ...)
    return type(msg) == "string" and (msg:gsub("^[^:]*:%d+: ", "")) or msg
  end

  function T.done()
    print(name .. ": " .. T.checks .. " checks passed"
          .. (T.failures > 0 and (", " .. T.failures .. " FAILED") or ""))
  end

  return T
end
