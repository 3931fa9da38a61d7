-- The os library (manual §6.9): clock, date, difftime, execute, getenv, remove,
-- rename, setlocale, time, tmpname (exit has its own scripts). Output does not depend
-- on the time zone: dates are formatted in UTC and local times compared relatively.
local NAME = "lib_os"
local T = dofile("helpers/check.lua")(NAME)
local check, eq = T.check, T.eq
local function err(f, ...)
  local ok, m = pcall(f, ...)
  if ok then return "no error" end
  m = tostring(m):gsub("^[^:]*:%d+: ", "")
  return (m:gsub("to '[%w%.]+' %(", "to 'F' ("))
end
local function all(...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = tostring(t[i]) end
  return table.concat(t, ",", 1, t.n)
end

-- os.clock / os.time / os.difftime
eq(math.type(os.clock()), "float", "clock is a float")
check(os.clock() >= 0, "clock non-negative")
eq(math.type(os.time()), "integer", "time is an integer")
eq(os.difftime(10, 5), 5.0, "difftime")
eq(os.difftime(5, 10), -5.0, "difftime negative")
eq(err(os.difftime, 10), "bad argument #2 to 'F' (number expected, got no value)", "difftime missing")
eq(err(os.difftime, 1.5, 1), "bad argument #1 to 'F' (number has no integer representation)", "difftime float")
do
  local base = os.time({year = 2000, month = 1, day = 1, hour = 0})
  eq(os.time({year = 2000, month = 1, day = 2, hour = 0}) - base, 86400, "time one day later")
  eq(os.time({year = 2000, month = 1, day = 1}) - base, 12 * 3600, "hour defaults to 12")
  eq(os.time({year = 2000, month = 1, day = 1, hour = 0, min = 1, sec = 1}) - base, 61, "min and sec")
  eq(os.time({year = "2000", month = "1", day = 1, hour = 0}), base, "string fields")
  local t = {year = 2000, month = 13, day = 32, hour = -1}
  os.time(t)
  eq(all(t.year, t.month, t.day, t.hour, t.min, t.sec), "2001,1,31,23,0,0", "time normalises the table")
  eq(all(t.wday, t.yday), "4,31", "normalised wday and yday")
  eq(os.time({year = 2000, month = 3, day = 0, hour = 0}) - base, 59 * 86400, "day 0 is the previous month's last")
end
eq(err(os.time, {year = 2000}), "field 'month' missing in date table", "time month missing")
eq(err(os.time, {year = 2000, month = 1}), "field 'day' missing in date table", "time day missing")
eq(err(os.time, {year = "x", month = 1, day = 1}), "field 'year' is not an integer", "time year type")
eq(err(os.time, {year = 2000, month = 1.5, day = 1}), "field 'month' is not an integer", "time month float")
eq(err(os.time, {year = 2^40, month = 1, day = 1}), "field 'year' is out-of-bound", "time year bound")
eq(err(os.time, {year = 2000, month = 1, day = 1, min = 2^31}), "field 'min' is out-of-bound", "time min bound")
eq(err(os.time, 1), "bad argument #1 to 'F' (table expected, got number)", "time type")

-- os.date
do
  local t = 86400 * 365  -- 1971-01-01 00:00:00 UTC, a Friday
  eq(os.date("!%Y-%m-%d %H:%M:%S", t), "1971-01-01 00:00:00", "date basic")
  eq(os.date("!%a %A %b %B %p", t), "Fri Friday Jan January AM", "date names")
  eq(os.date("!%c", t), "Fri Jan  1 00:00:00 1971", "date %c")
  eq(os.date("!%x %X %D %F %R %T", t), "01/01/71 00:00:00 01/01/71 1971-01-01 00:00 00:00:00", "date composites")
  eq(os.date("!%j %u %w %y %C %e %I %m %M %S", t), "001 5 5 71 19  1 12 01 00 00", "date numbers")
  eq(os.date("!%g %G %V %U %W %h", t), "70 1970 53 00 00 Jan", "date weeks")
  eq(os.date("!%Ec|%EC|%Ex|%EX|%Ey|%EY", t), "Fri Jan  1 00:00:00 1971|19|01/01/71|00:00:00|71|1971", "date E modifiers")
  eq(os.date("!%Od %Oe %OH %OI %Om %OM %OS %Ou %OU %OV %Ow %OW %Oy", t), "01  1 00 12 01 00 00 5 00 53 5 00 71", "date O modifiers")
  eq(os.date("!%% %n %t|", t), "% \n \t|", "date %% %n %t")
  eq(os.date("!", t), "", "date empty format")
  eq(os.date("!%H", 3600 * 5 + 7), "05", "date hour")
  eq(os.date("!x\0y", t), "x\0y", "date keeps zeros")
  eq(os.date(1, 1), "1", "numeric format")
  local d = os.date("!*t", 3600)
  eq(all(d.year, d.month, d.day, d.hour, d.min, d.sec, d.wday, d.yday, d.isdst), "1970,1,1,1,0,0,5,1,false", "date !*t")
  local l = os.date("*t", 0)
  eq(math.type(l.year), "integer", "date *t local")
  eq(type(os.date()), "string", "date default")
  local now = os.time()
  local back = os.time(os.date("*t", now))
  eq(back, now, "date/time round trip")
  eq(err(os.date, "%Q", 0), "bad argument #1 to 'F' (invalid conversion specifier '%Q')", "date %Q")
  eq(err(os.date, "%", 0), "bad argument #1 to 'F' (invalid conversion specifier '%')", "date lone %")
  eq(err(os.date, "%Ez", 0), "bad argument #1 to 'F' (invalid conversion specifier '%Ez')", "date %Ez")
  eq(err(os.date, "%H %k %l", 0), "bad argument #1 to 'F' (invalid conversion specifier '%k %l')", "date quotes the rest")
  eq(err(os.date, "*t", 1.5), "bad argument #2 to 'F' (number has no integer representation)", "date time float")
  eq(err(os.date, "*t", 2^60), "date result cannot be represented in this installation", "date out of range")
end

-- os.getenv
eq(type(os.getenv("PATH")), "string", "getenv PATH")
eq(os.getenv("WEFT_SURELY_NOT_SET_XYZ"), nil, "getenv missing")
eq(err(os.getenv), "bad argument #1 to 'F' (string expected, got no value)", "getenv missing arg")

-- os.remove / os.rename / os.tmpname
do
  eq(all(os.remove("/nonexistent/weft/x")), "nil,/nonexistent/weft/x: No such file or directory,2", "remove missing")
  eq(all(os.rename("/nonexistent/weft/x", "/nonexistent/weft/y")), "nil,No such file or directory,2", "rename missing")
  local name = os.tmpname()
  eq(type(name), "string", "tmpname")
  local f = io.open(name, "w")
  f:write("data")
  f:close()
  local moved = name .. ".moved"
  eq(os.rename(name, moved), true, "rename")
  eq(io.open(name), nil, "rename removed the old name")
  eq(os.remove(moved), true, "remove")
  eq(io.open(moved), nil, "remove removed it")
end

-- os.execute
eq(os.execute(), true, "execute: a shell exists")
eq(all(os.execute("exit 3")), "nil,exit,3", "execute exit status")
eq(all(os.execute("true")), "true,exit,0", "execute success")
eq(all(os.execute("kill -9 $$")), "nil,signal,9", "execute signal")

-- os.setlocale
eq(os.setlocale("C"), "C", "setlocale C")
eq(os.setlocale(), "C", "setlocale query")
eq(os.setlocale(nil, "numeric"), "C", "setlocale category")
eq(os.setlocale("xx_YY.nonexistent"), nil, "setlocale unknown")
eq(err(os.setlocale, "C", "bogus"), "bad argument #2 to 'F' (invalid option 'bogus')", "setlocale bad category")

T.done()
