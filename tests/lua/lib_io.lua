-- The io library (manual §6.8): open/close/read/write/lines/seek/setvbuf, the default
-- files, popen, tmpfile, type, the file metatable, and the error conventions. Uses a
-- scratch file from os.tmpname and removes it.
local NAME = "lib_io"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function err(f, ...)
  local ok, m = pcall(f, ...)
  if ok then return "no error" end
  m = tostring(m):gsub("^[^:]*:%d+: ", "")
  return (m:gsub("to '[%w%.%?]+' %(", "to 'F' ("))
end
local function all(...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = tostring(t[i]) end
  return table.concat(t, ",", 1, t.n)
end

local path = os.tmpname()
local function writeFile(text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- io.open and modes
eq(all(io.open("/nonexistent/weft/x")), "nil,/nonexistent/weft/x: No such file or directory,2", "open missing")
eq(err(io.open, path, "rw"), "bad argument #2 to 'F' (invalid mode)", "mode rw")
eq(err(io.open, path, "x"), "bad argument #2 to 'F' (invalid mode)", "mode x")
eq(err(io.open, path, ""), "bad argument #2 to 'F' (invalid mode)", "mode empty")
for _, m in ipairs({"r", "rb", "r+", "r+b", "w", "wb", "a", "a+b", "rbb"}) do
  local f = io.open(path, m)
  check(f ~= nil, "mode " .. m)
  if f then f:close() end
end

-- write and read formats
writeFile("line1\nline2\n12 0x1F -3.5e2 nan\nlast")
do
  local f = assert(io.open(path))
  eq(io.type(f), "file", "io.type open")
  check(tostring(f):match("^file %(") ~= nil, "tostring of a file")
  eq(all(f:read("l", "L")), "line1,line2\n", "read l L")
  eq(all(f:read("n", "n", "n", "n")), "12,31,-350.0,nil", "read n stops at a failure")
  eq(f:read("l"), "nan", "after failed number")
  eq(f:read("a"), "last", "read a")
  eq(f:read("a"), "", "read a at end")
  eq(f:read("l"), nil, "read l at end")
  eq(f:read(0), nil, "read 0 at end")
  eq(f:read(5), nil, "read n at end")
  eq(f:seek("set", 2), 2, "seek set")
  eq(f:read(3), "ne1", "read count")
  eq(f:seek(), 5, "seek default cur")
  eq(f:seek("cur", -1), 4, "seek cur back")
  eq(f:seek("end"), 35, "seek end")
  eq(f:seek("set"), 0, "seek start")
  eq(all(f:read(1, 0, 2)), "l,,in", "read counts")
  eq(f:read("*l"), "e1", "old *l form")
  eq(err(f.seek, f, "bogus"), "bad argument #2 to 'F' (invalid option 'bogus')", "seek bad whence")
  eq(err(f.read, f, "x"), "bad argument #2 to 'F' (invalid format)", "read bad format")
  eq(err(f.read, f, 1.5), "bad argument #2 to 'F' (number has no integer representation)", "read float count")
  eq(f:close(), true, "close")
  eq(io.type(f), "closed file", "io.type closed")
  eq(tostring(f), "file (closed)", "tostring closed")
  eq(err(f.read, f), "attempt to use a closed file", "read closed")
  eq(err(f.close, f), "attempt to use a closed file", "close twice")
end
eq(io.type(42), nil, "io.type other")
eq(io.type(io.stdout), "file", "io.type stdout")
eq(err(io.type), "bad argument #1 to 'F' (value expected)", "io.type missing")

-- numerals
writeFile("0x1p4 1e+ 12345678901234567890 .5 - 5 +7 0x 1e5")
do
  local f = assert(io.open(path))
  eq(all(f:read("n", "n")), "16.0,nil", "hex float then bad exponent")
  eq(f:read("n"), tonumber("12345678901234567890"), "big integer numeral reads as float")
  eq(f:read("n"), 0.5, "leading dot")
  eq(f:read("n"), nil, "lone minus")
  eq(f:read("n"), 5, "after failure")
  eq(f:read("n"), 7, "plus sign")
  eq(f:read("n"), nil, "0x alone")
  eq(f:read("n"), 1e5, "exponent")
  eq(f:read("n"), nil, "number at end")
  f:close()
end

-- write
do
  local f = assert(io.open(path, "w"))
  eq(f:write("a", 1, 2.5, " ", 1.0, "\n"), f, "write returns the file")
  eq(err(f.write, f, {}), "bad argument #2 to 'F' (string expected, got table)", "write table")
  eq(f:setvbuf("no"), true, "setvbuf no")
  eq(f:setvbuf("full", 1024), true, "setvbuf full")
  eq(f:setvbuf("line"), true, "setvbuf line")
  eq(err(f.setvbuf, f, "x"), "bad argument #2 to 'F' (invalid option 'x')", "setvbuf bad")
  eq(f:flush(), true, "flush")
  f:close()
  local g = assert(io.open(path))
  eq(g:read("a"), "a12.5 1\n", "written numbers (floats as %.14g)")
  g:close()
  local a = assert(io.open(path, "a"))
  a:write("more")
  a:close()
  g = assert(io.open(path))
  eq(g:read("a"), "a12.5 1\nmore", "append")
  g:close()
end

-- lines
writeFile("one\ntwo\n\nthree")
do
  local got = {}
  for l in io.lines(path) do got[#got + 1] = "[" .. l .. "]" end
  eq(table.concat(got), "[one][two][][three]", "io.lines")
  got = {}
  for l in io.lines(path, "L") do got[#got + 1] = l end
  eq(table.concat(got, "|"), "one\n|two\n|\n|three", "io.lines L")
  got = {}
  for a, b in io.lines(path, 1, "l") do got[#got + 1] = a .. "/" .. tostring(b) end
  eq(table.concat(got, " "), "o/ne t/wo \n/three", "io.lines formats")
  eq(select("#", io.lines(path)), 4, "io.lines returns four values")
  eq(err(io.lines, "/nonexistent/weft/x"), "cannot open file '/nonexistent/weft/x' (No such file or directory)", "io.lines missing")
  local f = assert(io.open(path))
  local it = f:lines()
  eq(it(), "one", "file:lines")
  eq(it(), "two", "file:lines 2")
  f:close()
  eq(err(it), "file is already closed", "lines after close")
  local keep = assert(io.open(path))
  for _ in keep:lines() do end
  eq(io.type(keep), "file", "file:lines does not close")
  keep:close()
  local n = 0
  for _ in io.lines(path, "a") do n = n + 1; if n > 3 then break end end
  check(n >= 1, "lines with a")
end

-- default input and output
do
  local old = io.output()
  eq(io.type(old), "file", "default output")
  eq(io.input(), io.stdin, "default input is stdin")
  io.output(path)
  io.write("via io.write ", 42)
  eq(io.write("!"), io.output(), "io.write returns the default output")
  io.close()
  io.output(old)
  io.input(path)
  eq(io.read("a"), "via io.write 42!", "io.read from default input")
  io.input():close()
  eq(err(io.read), "default input file is closed", "read closed default input")
  io.input(io.stdin)
  eq(err(io.input, "/nonexistent/weft/x"), "cannot open file '/nonexistent/weft/x' (No such file or directory)", "io.input missing")
  eq(all(io.stdout:close()), "nil,cannot close standard file", "close stdout")
  eq(getmetatable(io.stdout).__name, "FILE*", "__name")
  eq(err(io.close, 42), "bad argument #1 to 'F' (FILE* expected, got number)", "io.close type")
end

-- popen and tmpfile
do
  local p = io.popen("echo hi")
  eq(p:read("a"), "hi\n", "popen read")
  eq(all(p:close()), "true,exit,0", "pclose status")
  p = io.popen("exit 5")
  eq(all(p:close()), "nil,exit,5", "pclose failure")
  eq(err(io.popen, "ls", "rw"), "bad argument #2 to 'F' (invalid mode)", "popen mode")
  local t = io.tmpfile()
  t:write("xyz")
  t:seek("set")
  eq(t:read("a"), "xyz", "tmpfile")
  t:close()
end

-- to-be-closed files and collection
do
  local f
  do
    local h <close> = assert(io.open(path))
    f = h
  end
  eq(io.type(f), "closed file", "<close> closes the file")
end
-- A file the script drops is collected, and the collector closes it, which flushes what
-- it buffered: the text reaches the disk only through that close.
do
  local function readAll()
    local r = assert(io.open(path, "rb"))
    local text = r:read("a")
    r:close()
    return text
  end
  -- Returns its files in a table made weak on the way out: once it has returned, no
  -- frame holds them.
  local function dropFiles(text)
    local files = {}
    for i = 1, 50 do files[i] = assert(io.open(path)) end
    local out = assert(io.open(path, "wb"))
    out:setvbuf("full", 1024)
    out:write(text)
    eq(readAll(), "", "a buffered write is not on disk yet")
    files[#files + 1] = out
    return setmetatable(files, {__mode = "v"})
  end
  local dropped = dropFiles("flushed when collected")
  collectgarbage()
  eq(next(dropped), nil, "unreferenced files are collected")
  eq(readAll(), "flushed when collected", "collecting a file closes it")
end

os.remove(path)
T.done()
