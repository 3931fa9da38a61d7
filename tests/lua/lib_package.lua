-- The package library (manual §6.3): require with preload and Lua-file searchers, the
-- loader's arguments and results, package.loaded, searchpath, config, and the errors.
-- Modules are written next to a scratch file from os.tmpname and removed at the end.
local NAME = "lib_package"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function err(f, ...)
  local ok, m = pcall(f, ...)
  if ok then return "no error" end
  m = tostring(m):gsub("^[^:]*:%d+: ", "")
  return (m:gsub("to '[%w%.]+' %(", "to 'F' ("))
end

local base = os.tmpname()
local created = {base}
local function module(name, text)
  local file = base .. "_" .. name .. ".lua"
  local f = assert(io.open(file, "w"))
  f:write(text)
  f:close()
  created[#created + 1] = file
  return file
end

eq(package.config, "/\n;\n?\n!\n-\n", "config")
eq(type(package.path), "string", "path")
eq(type(package.cpath), "string", "cpath")
eq(package.loaded.string, string, "loaded string")
eq(package.loaded._G, _G, "loaded _G")
eq(package.loaded.package, package, "loaded package")
eq(#package.searchers, 4, "four searchers")
eq(type(package.preload), "table", "preload")
eq(type(package.searchpath), "function", "searchpath")

-- preload
do
  local seen
  package.preload.pre = function(...) seen = table.pack(...) return {tag = "pre"} end
  local m, extra = require("pre")
  eq(m.tag, "pre", "preload result")
  eq(extra, ":preload:", "preload extra value")
  eq(seen[1] .. "|" .. seen[2], "pre|:preload:", "preload loader arguments")
  eq(require("pre"), m, "cached in package.loaded")
  eq(select("#", require("pre")), 1, "cached require returns one value")
  package.preload.none = function() end
  eq(require("none"), true, "nil result stores true")
  package.preload.self = function(name) package.loaded[name] = "set by loader" end
  eq(require("self"), "set by loader", "loader may fill package.loaded")
end

-- Lua files
do
  package.path = base .. "_?.lua"
  local file = module("mymod", "local name, path = ... return {name = name, path = path}")
  local m, extra = require("mymod")
  eq(m.name, "mymod", "module receives its name")
  eq(m.path, file, "module receives its file name")
  eq(extra, file, "require returns the file name")
  module("errmod", "error('boom')")
  eq(err(require, "errmod"), "boom", "errors in the module propagate")
  eq(package.loaded.errmod, nil, "failed module not recorded")
  local syn = module("synmod", "x = = 1")
  local msg = err(require, "synmod")
  check(msg:find("error loading module 'synmod' from file '" .. syn .. "':\n\t", 1, true) == 1, "syntax error message")
  module("shebang", "#!/usr/bin/env lua\nreturn 'ok'")
  eq(require("shebang"), "ok", "first line # is skipped")
  module("dot_sub", "return 'dotted'")
  package.path = base .. "_?.lua"
  eq(package.searchpath("dot.sub", package.path, ".", "_"), base .. "_dot_sub.lua", "searchpath with rep")
end

-- not found
do
  package.path = "/nonexistent/weft/?.lua;/nonexistent/weft/?/init.lua"
  local msg = err(require, "nomod")
  check(msg:find("module 'nomod' not found:\n\tno field package.preload['nomod']\n\tno file '/nonexistent/weft/nomod.lua'\n\tno file '/nonexistent/weft/nomod/init.lua'", 1, true) == 1,
        "not found lists every place: " .. msg)
  eq(select(2, package.searchpath("a.b", "/x/?.lua;/y/?/z.lua")), "no file '/x/a/b.lua'\n\tno file '/y/a/b/z.lua'", "searchpath message")
  eq(package.searchpath("a", "/nonexistent/?"), nil, "searchpath nil")
  eq(err(require), "bad argument #1 to 'F' (string expected, got no value)", "require no name")
  package.path = 5
  check(err(require, "zz"):find("no file '5'", 1, true) ~= nil, "numeric path is a string")
  local saved = package.searchers
  package.searchers = nil
  eq(err(require, "zz2"), "'package.searchers' must be a table", "searchers not a table")
  package.searchers = saved
  package.path = {}
  eq(err(require, "zz3"), "'package.path' must be a string", "path not a string")
  package.path = "./?.lua"
end

-- custom searchers
do
  table.insert(package.searchers, 2, function(name)
    if name == "virtual" then return function(n, x) return n .. ":" .. x end, "extra" end
    return "no virtual module '" .. name .. "'"
  end)
  eq(require("virtual"), "virtual:extra", "custom searcher")
  local msg = err(require, "other")
  check(msg:find("\n\tno virtual module 'other'", 1, true) ~= nil, "custom searcher message")
  table.remove(package.searchers, 2)
end

for _, f in ipairs(created) do os.remove(f) end
T.done()
