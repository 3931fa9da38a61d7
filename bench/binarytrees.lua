-- Binary trees: allocation-heavy, exercises the collector.
local function bottomUp(depth)
  if depth == 0 then return {} end
  depth = depth - 1
  return {bottomUp(depth), bottomUp(depth)}
end
local function check(tree)
  if tree[1] then return 1 + check(tree[1]) + check(tree[2]) end
  return 1
end
local N = tonumber(arg and arg[1]) or 14
local maxDepth = math.max(6, N)
print("stretch tree of depth " .. (maxDepth + 1) .. "\t check: " .. check(bottomUp(maxDepth + 1)))
local longLived = bottomUp(maxDepth)
for depth = 4, maxDepth, 2 do
  local iters = 2 ^ (maxDepth - depth + 4) // 1
  local sum = 0
  for _ = 1, iters do sum = sum + check(bottomUp(depth)) end
  print(string.format("%d\t trees of depth %d\t check: %d", iters, depth, sum))
end
print("long lived tree of depth " .. maxDepth .. "\t check: " .. check(longLived))
