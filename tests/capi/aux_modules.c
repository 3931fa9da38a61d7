/* Debian's lua5.4 C modules (lua-lpeg, lua-cjson, lua-filesystem) running on Weft's
   lauxlib: in the aux variant their luaL_* calls (buffers in lpeg's substitutions and
   lfs, argument checks and their messages, luaL_Stream through lfs.lock, newmetatable
   and checkudata for lfs's dir objects and lpeg's patterns) resolve to
   runtime/capi/lauxlib.cpp. Skipped (prints so, alike in both builds) if a module is
   not installed. */
#include "capi_test.h"

static const char *script =
    CAPI_TRY_LUA
    "local okLpeg, lpeg = pcall(require, 'lpeg')\n"
    "if okLpeg then\n"
    "  local digit = lpeg.R('09')\n"
    "  local number = lpeg.C(digit^1) / tonumber\n"
    "  local list = lpeg.Ct(number * (',' * number)^0)\n"
    "  print(table.concat(list:match('10,20,30,4'), ' '))\n"
    "  local upper = lpeg.Cs((lpeg.R('az') / string.upper + 1)^0)\n"
    "  print(upper:match(string.rep('abc-', 2000)):sub(1, 12), #upper:match(string.rep('abc-', 2000)))\n"
    "  print(lpeg.match(lpeg.P('x')^0 * -1, string.rep('x', 100000)))\n"
    "  try(lpeg.match, 1, 'x') try(lpeg.R, 'abc') try(lpeg.P, {})\n"
    "  print(lpeg.type(digit), lpeg.type(1), lpeg.version ~= nil)\n"
    "  local re = require('re')\n"
    "  print(re.gsub('hello world', '[aeiou]', '*'))\n"
    "else print('lpeg not installed') end\n"
    "local okJson, cjson = pcall(require, 'cjson')\n"
    "if okJson then\n"
    "  print(cjson.encode({1, 2, 3, 'x\\n', true}))\n"
    "  local t = cjson.decode('{\"a\": [1, 2.5, \"s\", null, false], \"b\": {\"c\": \"d\"}}')\n"
    "  print(t.a[1], t.a[2], t.a[3], t.a[4] == cjson.null, t.a[5], t.b.c)\n"
    "  local big = {} for i = 1, 20000 do big[i] = i * 3 end\n"
    "  local s = cjson.encode(big) print(#s, s:sub(1, 20), #cjson.decode(s))\n"
    "  try(cjson.decode, '{bad json') try(cjson.encode, function() end)\n"
    "  try(cjson.encode_max_depth, 'x')\n"
    "else print('cjson not installed') end\n"
    "local okLfs, lfs = pcall(require, 'lfs')\n"
    "if okLfs then\n"
    "  assert(lfs.mkdir('sub'))\n"
    "  for i = 1, 3 do local f = assert(io.open('sub/f' .. i .. '.txt', 'w')) f:write(string.rep('x', i * 10)) f:close() end\n"
    "  local names = {} for name in lfs.dir('sub') do names[#names + 1] = name end\n"
    "  table.sort(names) print(table.concat(names, ' '))\n"
    "  print(lfs.attributes('sub/f2.txt', 'size'), lfs.attributes('sub', 'mode'), lfs.attributes('sub/f1.txt').mode)\n"
    "  print(lfs.attributes('missing'))\n"
    "  try(lfs.attributes, 'sub', 'bogus')\n"
    "  try(lfs.dir, 'missing')\n"
    "  local iter, dir = lfs.dir('sub') print(type(dir), pcall(dir.next, dir) and 'next ok') dir:close()\n"
    "  try(dir.next, dir)\n"
    "  local f = assert(io.open('sub/f3.txt', 'r+'))\n"
    "  print('lock', lfs.lock(f, 'w'), lfs.unlock(f)) f:close()\n"
    "  try(lfs.lock, f, 'w') try(lfs.lock, {}, 'w')\n"
    "  print(lfs.currentdir() ~= nil, lfs.rmdir('sub'))\n"
    "  for i = 1, 3 do os.remove('sub/f' .. i .. '.txt') end print(lfs.rmdir('sub'))\n"
    "else print('lfs not installed') end\n";

int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  /* Debian's default path for lua5.4 modules only, the same in both builds */
  runLua(L, "package.cpath = '/usr/lib/x86_64-linux-gnu/lua/5.4/?.so'\n"
            "package.path = '/usr/share/lua/5.4/?.lua'");
  runLua(L, script);
  lua_close(L);
  return 0;
}
