-- weft-only
-- expect-exit: 3
-- weft-env: WEFT_FAULT=gc.register
-- A worker whose mutator cannot register with the collector: the runtime never starts.
print("not reached")
