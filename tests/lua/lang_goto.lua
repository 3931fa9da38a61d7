-- goto and labels (manual §3.3.4): continue idioms, nested loops, closing upvalues and
-- to-be-closed variables on jumps, visibility rules and their messages.
local NAME = "lang_goto"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function msgOf(f, ...)
  local ok, msg = pcall(f, ...)
  if ok then return "no error" end
  return msg
end
local function bare(f, ...)
  local m = msgOf(f, ...)
  return type(m) == "string" and (m:gsub("^[^:]*:%d+: ", "")) or m
end

-- continue idiom.
do
  local sum = 0
  for i = 1, 10 do
    if i % 2 == 0 then goto continue end
    sum = sum + i
    ::continue::
  end
  eq(sum, 25, "continue in numeric for")
  local out = {}
  for _, v in ipairs({1, 2, 3, 4, 5, 6}) do
    if v % 3 == 0 then goto next end
    out[#out + 1] = v
    ::next::
  end
  eq(table.concat(out, ","), "1,2,4,5", "continue in generic for")
  local i, n = 0, 0
  while i < 10 do
    i = i + 1
    if i > 3 and i < 8 then goto cont end
    n = n + 1
    ::cont::
  end
  eq(n, 6, "continue in while")
  local j, m = 0, 0
  repeat
    j = j + 1
    if j % 2 == 1 then goto skip end
    m = m + j
    ::skip::
  until j >= 10
  eq(m, 30, "continue in repeat")
end

-- Backward goto as a loop.
do
  local i = 1
  local acc = {}
  ::top::
  acc[#acc + 1] = i
  i = i + 1
  if i <= 5 then goto top end
  eq(table.concat(acc), "12345", "backward goto loop")
end

-- Breaking out of nested loops.
do
  local found
  for i = 1, 5 do
    for j = 1, 5 do
      if i * j == 12 then
        found = i .. "x" .. j
        goto done
      end
    end
  end
  ::done::
  eq(found, "3x4", "goto out of nested loops")
  local count = 0
  for i = 1, 3 do
    for j = 1, 3 do
      for k = 1, 3 do
        if k == 2 then goto nextj end
        count = count + 1
      end
      ::nextj::
    end
  end
  eq(count, 9, "goto to the end of a middle loop")
end

-- Goto out of blocks closes upvalues: each iteration's closure sees its own variable.
do
  local fns = {}
  local i = 1
  ::again::
  do
    local x = i * 10
    fns[#fns + 1] = function() return x end
    i = i + 1
    if i <= 3 then goto again end
  end
  eq(#fns, 3, "three closures")
  eq(fns[1](), 10, "first closure kept its own x")
  eq(fns[2](), 20, "second closure kept its own x")
  eq(fns[3](), 30, "third closure kept its own x")
end
do
  local fns = {}
  local k = 0
  ::loop::
  local v = k
  fns[#fns + 1] = function() v = v + 1; return v end
  k = k + 1
  if k < 3 then goto loop end
  eq(fns[1](), 1, "backward goto over a local closes it (1)")
  eq(fns[1](), 2, "closed upvalue keeps state")
  eq(fns[2](), 2, "backward goto over a local closes it (2)")
  eq(fns[3](), 3, "the last one is still open and works")
end
do
  local getters = {}
  for i = 1, 3 do
    local captured = i
    getters[i] = function() return captured end
    if i == 2 then goto out end
  end
  ::out::
  eq(getters[1](), 1, "goto out of a for body: first")
  eq(getters[2](), 2, "goto out of a for body: second")
  eq(getters[3], nil, "loop left early")
end

-- Labels: visibility and the rules of §3.3.4.
local function compiles(src)
  local f, err = load(src)
  if f then return true end
  return (err:gsub('^%[string ".-"%]:%d+: ', ""))
end
eq(compiles("goto nowhere"), "no visible label 'nowhere' for <goto> at line 1", "undefined label")
eq(compiles("do ::a:: end goto a"), "no visible label 'a' for <goto> at line 1", "label in a nested block is invisible")
eq(compiles("::a:: ::a::"), "label 'a' already defined on line 1", "duplicate label")
eq(compiles("::a:: do ::a:: end"), "label 'a' already defined on line 1", "same name in nested block")
eq(compiles("goto f; local x; ::f:: print(x)"), "<goto f> at line 1 jumps into the scope of local 'x'", "jump into the scope of a local")
eq(compiles("do goto f; local x; ::f:: end"), true, "label at the end of the block: allowed")
eq(compiles("do goto f; local x; ::f:: ; ; end"), true, "void statements after the label")
eq(compiles("for i = 1, 2 do ::l:: end for i = 1, 2 do ::l:: end"), true, "same label in sibling blocks")
eq(compiles("local function f() goto out end ::out::"), "no visible label 'out' for <goto> at line 1", "goto cannot leave a function")
eq(compiles("::goto_:: goto goto_"), true, "label names are names")
eq(compiles("while true do break; ::x:: end"), true, "label after break")
eq(compiles("goto = 1"), "<name> expected near '='", "goto is reserved")
eq(compiles("repeat local z = 1; goto cont; ::cont:: until z"), true, "goto to the end of repeat body")
eq(compiles("repeat goto cont; local z; ::cont:: until z"), "<goto cont> at line 1 jumps into the scope of local 'z'", "until sees the locals")

-- Goto inside functions and coroutines.
do
  local function classify(n)
    if n < 0 then goto negative end
    if n == 0 then goto zero end
    do return "positive" end
    ::negative:: do return "negative" end
    ::zero:: return "zero"
  end
  eq(classify(-5), "negative", "goto to a return (negative)")
  eq(classify(0), "zero", "goto to a return (zero)")
  eq(classify(3), "positive", "no goto taken")
  local co = coroutine.wrap(function()
    local i = 0
    ::again::
    i = i + 1
    coroutine.yield(i)
    if i < 3 then goto again end
    return "end"
  end)
  eq(co(), 1, "goto loop in coroutine (1)")
  eq(co(), 2, "goto loop in coroutine (2)")
  eq(co(), 3, "goto loop in coroutine (3)")
  eq(co(), "end", "goto loop in coroutine ends")
end

-- A state machine written with goto.
do
  local input = "aabbbc"
  local pos, counts = 1, {a = 0, b = 0, other = 0}
  ::state_start::
  if pos > #input then goto state_end end
  do
    local c = input:sub(pos, pos)
    pos = pos + 1
    if c == "a" then counts.a = counts.a + 1 goto state_start end
    if c == "b" then counts.b = counts.b + 1 goto state_start end
    counts.other = counts.other + 1
    goto state_start
  end
  ::state_end::
  eq(counts.a, 2, "state machine a")
  eq(counts.b, 3, "state machine b")
  eq(counts.other, 1, "state machine other")
end

-- goto out of a block with a to-be-closed variable closes it.
do
  local log = {}
  local function closer(name) return setmetatable({}, {__close = function() log[#log + 1] = name end}) end
  do
    local a <close> = closer("a")
    do
      local b <close> = closer("b")
      goto after
    end
  end
  ::after::
  eq(table.concat(log, ","), "b,a", "goto closes tbc variables in order")
  local n = 0
  ::rep::
  do
    local c <close> = closer("c" .. n)
    n = n + 1
    if n < 3 then goto rep end
  end
  eq(table.concat(log, ","), "b,a,c0,c1,c2", "backward goto closes each iteration")
end

-- Many labels and gotos in one function.
do
  local trace = {}
  local i = 0
  ::l1:: i = i + 1; trace[#trace + 1] = "1"; if i < 2 then goto l1 end
  ::l2:: i = i + 1; trace[#trace + 1] = "2"; if i < 4 then goto l2 end
  ::l3:: i = i + 1; trace[#trace + 1] = "3"; if i < 5 then goto l3 end
  eq(table.concat(trace), "11223", "chained labels")
end

T.done()
