-- The C module loader with the test modules of tests/package/modules (built into the
-- directory WEFT_CMODULES names): the C and Croot searchers, the luaopen_ naming rules,
-- package.loadlib, package.searchpath over cpath, and require's messages. Run by
-- cmodules_test.py under weft and lua5.4, whose outputs must both be cmodules.expected.
local dir = assert(os.getenv("WEFT_CMODULES"), "WEFT_CMODULES")
package.cpath = dir .. "/?.so"
local function hide(s) -- the build directory, as DIR, in every message
  s = tostring(s)
  while true do
    local at, stop = s:find(dir, 1, true)
    if not at then return s end
    s = s:sub(1, at - 1) .. "DIR" .. s:sub(stop + 1)
  end
end
local function show(...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = hide(t[i]) end
  print(table.unpack(t, 1, t.n))
end

-- The C searcher: luaopen_x in x.so, the file name as the loader's second argument.
local x, file = require "x"
show(x.answer, x.twice(21), x.file, file, require "x" == x, package.loaded.x == x)
show(pcall(x.fail, "boom"))
show(pcall(x.twice, "nope"))
-- The Croot searcher: x.inner from x.so (no x/inner.so), by luaopen_x_inner.
show(require "x.inner")
-- Dots become directory separators in the file and underscores in the function name.
show(require "a.b")
-- The hyphen rule: the part before the hyphen names the function, else the part after.
show(require "mod-v2")
show(require "v1-old")

-- package.loadlib: a function, "*" (open only, global symbols), and its failures.
local plain = package.loadlib(dir .. "/x.so", "x_plain")
show(type(plain), plain())
show(package.loadlib(dir .. "/x.so", "*"))
show(package.loadlib(dir .. "/x.so", "no_such_function"))
show(package.loadlib(dir .. "/missing.so", "luaopen_missing"))
show(package.loadlib(dir .. "/notlib.so", "*"))
show(pcall(package.loadlib, dir .. "/x.so"))

-- require's errors: a library without its open function, a file that is no library,
-- a root library without the submodule, and nothing found anywhere.
show(pcall(require, "bad"))
show(pcall(require, "notlib"))
show(pcall(require, "x.missing"))
show(pcall(require, "no.such.module"))
package.cpath = 42
show(pcall(require, "still.missing"))
package.cpath = {}
show(pcall(require, "still.missing"))
package.cpath = dir .. "/?.so"

-- package.searchpath over a cpath.
show(package.searchpath("a.b", package.cpath))
show(package.searchpath("a.b", dir .. "/?.dll;" .. dir .. "/?/?.so"))
show(package.searchpath("x_y", dir .. "/?.so", "_", "/"))
show(package.searchpath("nothing", ";" .. dir .. "/?.so;"))
