-- Debian's lua-filesystem (lfs.so, built for lua5.4) loaded by require from the default
-- package.cpath: making, listing and removing a directory, attributes, errors.
local lfs, file = require "lfs"
print(type(lfs), type(lfs.dir), type(lfs.attributes), file)

local root = os.tmpname()
os.remove(root)
local function hide(s) -- the scratch directory's random name, as ROOT
  local at, stop = s:find(root, 1, true)
  return at and s:sub(1, at - 1) .. "ROOT" .. s:sub(stop + 1) or s
end
print(lfs.mkdir(root))
for _, name in ipairs {"b.txt", "a.txt", "c.lua"} do
  local f = assert(io.open(root .. "/" .. name, "w"))
  f:write(name:rep(3))
  f:close()
end
print(lfs.mkdir(root .. "/sub"))

local names = {}
for name in lfs.dir(root) do names[#names + 1] = name end
table.sort(names)
print(table.concat(names, " "))

for _, name in ipairs(names) do
  if name ~= "." and name ~= ".." then
    local a = lfs.attributes(root .. "/" .. name)
    print(name, a.mode, a.mode == "file" and a.size or "-")
  end
end
print(lfs.attributes(root .. "/a.txt", "size"), lfs.attributes(root, "mode"))

-- The directory object's methods, and closing early.
local iter, dir = lfs.dir(root)
local first = dir:next()
print(type(first), pcall(dir.close, dir))

print(lfs.attributes(root .. "/missing") == nil)
local ok, msg = lfs.mkdir(root)
print(ok, hide(msg))
local ok2, msg2 = pcall(lfs.dir, root .. "/missing")
print(ok2, hide(msg2))

for _, name in ipairs(names) do
  if name ~= "." and name ~= ".." then
    if name == "sub" then print(lfs.rmdir(root .. "/" .. name)) else os.remove(root .. "/" .. name) end
  end
end
print(lfs.rmdir(root))
print(lfs.attributes(root) == nil)
