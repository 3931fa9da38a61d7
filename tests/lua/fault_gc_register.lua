-- weft-only
-- expect-exit: 3
-- weft-env: WEFT_FAULT=gc.register
-- A worker whose mutator cannot register with the collector: the workers start at the
-- first spawn, which closes the runtime instead of returning.
print("before the first spawn")
task.spawn(function() end)
print("not reached")
