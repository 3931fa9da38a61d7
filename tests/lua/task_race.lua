-- weft-only -- weft-tasks
-- Racing writes to shared tables from parallel tasks: the program must survive and the
-- table must stay sane. Read-modify-write races (appends by `#t + 1`, counters) may lose
-- updates, but no write raises an error (table.h invariant 7): every write is under
-- pcall so that an error is counted, not fatal, and the script checks there was none.
local NAME = "task_race"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function errorOf(f, ...)
  local ok, msg = pcall(f, ...)
  return not ok and tostring(msg):gsub("^[^:]*:%d+: ", "") or "no error"
end
local N, PER = 6, 60

local errors = {}
local function note(ok, e)
  if not ok then
    local msg = tostring(e):gsub("^[^:]*:%d+: ", "")
    errors[#errors + 1] = msg
  end
end
local function run(body)
  local ts = {}
  for w = 1, N do ts[w] = task.spawn(body, w) end
  local n = 0
  for w = 1, N do
    local ok, e = pcall(ts[w].await, ts[w])
    if ok then n = n + 1 else note(false, e) end
  end
  return n
end

-- Appends to one array.
local arr = {}
eq(run(function(w)
  for i = 1, PER do
    pcall(function() arr[#arr + 1] = w * 1000 + i end)
    if i % 16 == 0 then task.yield() end
  end
end), N, "append tasks finished")
local okvals, count = true, 0
for k, v in pairs(arr) do
  count = count + 1
  if math.type(k) ~= "integer" or k < 1 or k > N * PER then okvals = false end
  if math.type(v) ~= "integer" or v // 1000 < 1 or v // 1000 > N or v % 1000 < 1 or v % 1000 > PER then
    okvals = false
  end
end
check(okvals, "array keys and values are ones that were written")
check(count >= 1 and count <= N * PER, "array size in range: " .. count)
check(#arr <= N * PER, "length in range")

-- Distinct keys into one hash, forcing rehashes while others insert.
local h = {}
eq(run(function(w)
  for i = 1, PER do
    pcall(function() h["k" .. w .. "_" .. i] = w end)
    pcall(function() h[w * 100000 + i * 7] = i end)
    if i % 16 == 0 then task.yield() end
  end
end), N, "hash tasks finished")
okvals, count = true, 0
for k, v in pairs(h) do
  count = count + 1
  if type(k) == "string" then
    local w = tonumber(k:match("^k(%d+)_%d+$"))
    if w ~= v then okvals = false end
  elseif math.type(k) == "integer" then
    local w, i = k // 100000, (k % 100000) // 7
    if w < 1 or w > N or i ~= v or (k % 100000) % 7 ~= 0 then okvals = false end
  else
    okvals = false
  end
end
check(okvals, "every entry is a written key with its own value")
check(count <= 2 * N * PER, "hash size in range: " .. count)
local found = 0
for w = 1, N do
  for i = 1, PER do if h["k" .. w .. "_" .. i] == w then found = found + 1 end end
end
eq(found, N * PER, "every distinct key was written")
eq(count, 2 * N * PER, "and the traversal finds them all")
-- The table still works normally afterwards.
h.after = "yes"
eq(h.after, "yes", "usable after the race")
for w = 1, N do h["k" .. w .. "_1"] = nil end
eq(h["k1_1"], nil, "deletes work")

-- Increments of shared counters: lost updates allowed, never more than the total.
local ctr = {hits = 0, [1] = 0}
eq(run(function()
  for i = 1, PER do
    pcall(function() ctr.hits = ctr.hits + 1 end)
    pcall(function() ctr[1] = ctr[1] + 1 end)
  end
end), N, "counter tasks finished")
check(math.type(ctr.hits) == "integer" and ctr.hits >= 1 and ctr.hits <= N * PER, "hits in range: " .. tostring(ctr.hits))
check(math.type(ctr[1]) == "integer" and ctr[1] >= 1 and ctr[1] <= N * PER, "array counter in range")

-- Writers and deleters on the same keys, with readers traversing.
local mix = {}
local function writer(w)
  for i = 1, PER do
    local k = (i % 20) + 1
    pcall(function()
      if (i + w) % 3 == 0 then mix[k] = nil else mix[k] = w end
      mix["s" .. k] = (i % 2 == 0) and w or nil
    end)
    if i % 10 == 0 then task.yield() end
  end
end
local readers = {}
local stopread = false
for r = 1, 2 do
  readers[r] = task.spawn(function()
    local bad = 0
    while not stopread do
      pcall(function()
        for k, v in pairs(mix) do
          -- nil is allowed: the traversal may meet an entry while a writer clears it.
          if v ~= nil and (math.type(v) ~= "integer" or v < 1 or v > N) then
            if bad == 0 then print("reader saw " .. tostring(k) .. " = " .. tostring(v)) end
            bad = bad + 1
          end
        end
      end)
      task.yield()
    end
    return bad
  end)
end
eq(run(writer), N, "writer tasks finished")
stopread = true
local bad = 0
for r = 1, 2 do bad = bad + readers[r]:await() end
eq(bad, 0, "readers never saw a foreign value")
okvals = true
for k, v in pairs(mix) do
  if math.type(v) ~= "integer" or v < 1 or v > N then okvals = false end
  if not (math.type(k) == "integer" and k >= 1 and k <= 20) and
     not (type(k) == "string" and k:match("^s%d+$")) then okvals = false end
end
check(okvals, "mixed table entries sane")

-- table.insert / table.remove racing on one list.
local list = {}
eq(run(function(w)
  for i = 1, PER do
    pcall(table.insert, list, w)
    if i % 3 == 0 then pcall(table.remove, list) end
    if i % 16 == 0 then task.yield() end
  end
end), N, "insert/remove tasks finished")
okvals = true
for k, v in pairs(list) do
  if math.type(k) ~= "integer" or math.type(v) ~= "integer" or v < 1 or v > N then okvals = false end
end
check(okvals, "list entries sane")

-- Metatables set while others index.
local obj = {}
eq(run(function(w)
  for i = 1, 50 do
    pcall(setmetatable, obj, {__index = function() return w end})
    local okg, v = pcall(function() return obj.missing end)
    if okg and (math.type(v) ~= "integer" or v < 1 or v > N) then error("bad __index result") end
    if i % 8 == 0 then task.yield() end
  end
end), N, "metatable tasks finished")

-- Mixed types in the same slots: writers store tables, strings, integers, floats,
-- closures, booleans and nil into shared array slots, hash slots and upvalues (one
-- closed, one open in the main chunk) while churners add and remove other keys, so the
-- table grows, rebuilds and shrinks underneath. Readers use what they read as its type
-- says; a torn value (one store's tag with another's payload) would crash or be caught.
local tbl1, tbl2 = {tag = "t1"}, {tag = "t2"}
local function fn1() return "f1" end
local function fn2() return "f2" end
local LONG = string.rep("long string ", 8)
local VALUES = {tbl1, tbl2, "short", LONG, 42, -7, 2.5, 1e300, fn1, fn2, true, false}
local function valid(v)
  local ty = type(v)
  if ty == "nil" or ty == "boolean" then return true end
  if ty == "table" then return (v == tbl1 and v.tag == "t1") or (v == tbl2 and v.tag == "t2") end
  if ty == "string" then return (#v == 5 and v == "short") or (#v == #LONG and v == LONG) end
  if ty == "function" then local r = v(); return r == "f1" or r == "f2" end
  if math.type(v) == "integer" then local x = v * 3 - v * 2; return x == 42 or x == -7 end
  if math.type(v) == "float" then local x = v * 0.5 * 2; return x == 2.5 or x == 1e300 end
  return false
end
local SLOTS = 8
local marr, mhash = {}, {}
for k = 1, SLOTS do marr[k] = VALUES[k]; mhash["s" .. k] = VALUES[k] end
local getClosed, setClosed = (function()
  local u = fn1
  return function() return u end, function(v) u = v end
end)()
local openShared = tbl1  -- a main-chunk local: open while the tasks run
local KEYS = {}
for k = 1, SLOTS do KEYS[k] = "s" .. k end
local deadline = task.now() + 1.0
-- Writers and readers run batches of tight loops until the deadline, to maximise the
-- accesses that overlap.
local function mixedWriter(w)
  local n, i = #VALUES, 0
  while task.now() < deadline do
    pcall(function()
      for _ = 1, 2000 do
        i = i + 1
        local v = VALUES[(i * w) % (n + 1) + 1]  -- index n + 1 is nil
        local k = i % SLOTS + 1
        marr[k] = v
        mhash[KEYS[k]] = v
        setClosed(v)
        openShared = v
      end
    end)
  end
end
local function churner(w)
  local i = 0
  while task.now() < deadline do
    i = i + 1
    pcall(function()
      -- Grow the array past its slots, then empty it again: the next rehash shrinks it.
      for j = SLOTS + 1, SLOTS + 24 do marr[j] = j end
      for j = SLOTS + 1, SLOTS + 24 do marr[j] = nil end
      -- New hash keys force rebuilds; deleting them leaves dead keys the next one drops.
      for j = 1, 12 do mhash["c" .. w .. "_" .. j] = j end
      for j = 1, 12 do mhash["c" .. w .. "_" .. j] = nil end
      marr["x" .. (i % 7)] = i
      marr["x" .. (i % 7)] = nil
    end)
  end
end
local function mixedReader()
  local bad, reads = 0, 0
  while task.now() < deadline do
    for j = 1, 2000 do
      local k = j % SLOTS + 1
      if not valid(marr[k]) then bad = bad + 1 end
      if not valid(mhash[KEYS[k]]) then bad = bad + 1 end
      if not valid(getClosed()) then bad = bad + 1 end
      if not valid(openShared) then bad = bad + 1 end
    end
    -- A rebuild under the traversal may end it with "invalid key to 'next'".
    pcall(function()
      for k, v in pairs(mhash) do
        if k:sub(1, 1) == "s" and not valid(v) then bad = bad + 1 end
      end
    end)
    if #marr > SLOTS + 24 then bad = bad + 1 end
    reads = reads + 1
  end
  return bad, reads
end
local mixedTasks, mixedReaders = {}, {}
for r = 1, 3 do mixedReaders[r] = task.spawn(mixedReader) end
for w = 1, 3 do mixedTasks[#mixedTasks + 1] = task.spawn(mixedWriter, w) end
for w = 1, 2 do mixedTasks[#mixedTasks + 1] = task.spawn(churner, w) end
local mixedOk = 0
for _, t in ipairs(mixedTasks) do
  local ok, e = pcall(t.await, t)
  if ok then mixedOk = mixedOk + 1 else note(false, e) end
end
eq(mixedOk, 5, "mixed writers and churners finished")
local mixedBad, mixedReads = 0, 0
for r = 1, 3 do
  local ok, bad, reads = pcall(mixedReaders[r].await, mixedReaders[r])
  if ok then mixedBad, mixedReads = mixedBad + bad, mixedReads + reads
  else mixedBad = mixedBad + 1; print("reader failed: " .. tostring(bad)) end
end
eq(mixedBad, 0, "readers only ever saw values that were written")
check(mixedReads > 0, "readers ran")
for k = 1, SLOTS do check(valid(marr[k]) and valid(mhash["s" .. k]), "slot " .. k .. " holds a written value") end
check(valid(getClosed()) and valid(openShared), "upvalues hold written values")
marr[1] = "after"
eq(marr[1], "after", "mixed table usable after the race")

-- No write raised an error.
for _, msg in ipairs(errors) do print("unexpected error: " .. msg) end
eq(#errors, 0, "no write raised an error")

T.done()
