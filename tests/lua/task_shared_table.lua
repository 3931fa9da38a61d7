-- weft-only -- weft-tasks
-- weft-gc-interval: 200
-- `results[i] = f(i)` from many tasks into one table (table.h invariant 7,
-- docs/design/shared-tables.md): distinct keys written by parallel tasks, into the array
-- part, the hash part and across every resize, never raise an error and are never lost.
-- Every task writes each of its keys twice, the second time into the key's existing
-- slot, which another task's rebuild may be copying at that moment.
local NAME = "task_shared_table"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq

local TASKS, PER = 16, 2000
local function f(i) return i * 3 + 1 end

-- Runs body(w) in TASKS tasks and awaits them all; returns how many ended with an error
-- and the first message.
local function runAll(body)
  local ts = {}
  for w = 1, TASKS do ts[w] = task.spawn(body, w) end
  local failed, first = 0, nil
  for w = 1, TASKS do
    local ok, e = pcall(ts[w].await, ts[w])
    if not ok then failed = failed + 1; first = first or tostring(e) end
  end
  return failed, first
end

-- Array part: task w owns keys w, w + TASKS, ...; the table starts empty, so it grows
-- through appends and rehashes while the tasks write.
local results = {}
local failed, first = runAll(function(w)
  for i = w, TASKS * PER, TASKS do
    results[i] = -i
    if i % 64 == 0 then task.yield() end
  end
  for i = w, TASKS * PER, TASKS do results[i] = f(i) end
end)
eq(failed, 0, "array writers raised no error " .. tostring(first))
local wrong = 0
for i = 1, TASKS * PER do if results[i] ~= f(i) then wrong = wrong + 1 end end
eq(wrong, 0, "every array result is there")
eq(#results, TASKS * PER, "length of the results")

-- Hash part: string keys and sparse integer keys, so every key lives in the hash part,
-- through rawset and the interpreter alike.
local h = {}
failed, first = runAll(function(w)
  for i = 1, PER do
    h["k" .. w .. "_" .. i] = 0
    rawset(h, w * 1000003 + i * TASKS, 0)
  end
  for i = 1, PER do
    h["k" .. w .. "_" .. i] = f(i)
    h[w * 1000003 + i * TASKS] = w
  end
end)
eq(failed, 0, "hash writers raised no error " .. tostring(first))
wrong = 0
for w = 1, TASKS do
  for i = 1, PER do
    if h["k" .. w .. "_" .. i] ~= f(i) then wrong = wrong + 1 end
    if h[w * 1000003 + i * TASKS] ~= w then wrong = wrong + 1 end
  end
end
eq(wrong, 0, "every hash result is there")
local count = 0
for _ in pairs(h) do count = count + 1 end
eq(count, 2 * TASKS * PER, "no extra keys")

-- Existing fields rewritten while other tasks keep adding keys (rebuilds): each writer
-- counts its own field up, through SETFIELD-style and SETI/SETTABLE-style stores.
local shared = {}
for w = 1, TASKS do shared["c" .. w] = 0; shared[w] = 0 end
local ROUNDS = 3000
failed, first = runAll(function(w)
  local field = "c" .. w
  if w % 4 == 0 then
    for i = 1, ROUNDS do shared["new" .. w .. "_" .. i] = i end  -- growth
  else
    for i = 1, ROUNDS do
      shared[field] = shared[field] + 1
      shared[w] = shared[w] + 1
      if i % 256 == 0 then task.yield() end
    end
  end
end)
eq(failed, 0, "counting writers raised no error " .. tostring(first))
wrong = 0
for w = 1, TASKS do
  local want = w % 4 == 0 and 0 or ROUNDS
  if shared["c" .. w] ~= want or shared[w] ~= want then wrong = wrong + 1 end
end
eq(wrong, 0, "each task's own counters are exact")

-- table.insert at distinct positions and table.move into distinct ranges.
local moved = {}
failed, first = runAll(function(w)
  local src = {}
  for i = 1, 100 do src[i] = w * 1000 + i end
  table.move(src, 1, 100, (w - 1) * 100 + 1, moved)
end)
eq(failed, 0, "table.move writers raised no error " .. tostring(first))
wrong = 0
for w = 1, TASKS do
  for i = 1, 100 do if moved[(w - 1) * 100 + i] ~= w * 1000 + i then wrong = wrong + 1 end end
end
eq(wrong, 0, "every moved value is there")

T.done()
