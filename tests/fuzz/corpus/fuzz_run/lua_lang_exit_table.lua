-- expect-exit: 1
-- An uncaught error with a table value (no __tostring).
print("start")
error({code = 1})
