/* Debian's C modules for lua5.4 (lua-lpeg, lua-cjson, lua-filesystem), built against
   liblua5.4, loaded by a C host with dlopen and run against Weft (binary compatibility:
   their lua_* and luaL_* references resolve against this executable's exports): pattern
   matching, JSON round trips and errors, directory listing, with collections between. */
#include <dlfcn.h>

#include "common.h"
#include "lauxlib.h"

#define MODULE_DIR "/usr/lib/x86_64-linux-gnu/lua/5.4/"

static void load(lua_State *L, const char *file, const char *opener, const char *name) {
  void *h = dlopen(file, RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    printf("dlopen %s failed\n", name);
    return;
  }
  luaL_requiref(L, name, (lua_CFunction)dlsym(h, opener), 1);
  lua_pop(L, 1);
}

int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  load(L, MODULE_DIR "lpeg.so", "luaopen_lpeg", "lpeg");
  load(L, MODULE_DIR "cjson.so", "luaopen_cjson", "cjson");
  load(L, MODULE_DIR "lfs.so", "luaopen_lfs", "lfs");
  run(L, "local p = lpeg.C(lpeg.R'az'^1) * lpeg.P' '^0 * lpeg.C(lpeg.R'09'^1)\n"
         "print(p:match('hello 123'))\n"
         "local g = lpeg.P{'S', S = '(' * lpeg.V'S'^0 * ')'} print(g:match('(()(()))'), g:match('(('))\n"
         "local words = {} for w in ('the quick brown fox'):gmatch('%a+') do\n"
         "  words[#words + 1] = lpeg.match(lpeg.C(lpeg.P(1)^1) / string.upper, w) collectgarbage() end\n"
         "print(table.concat(words, ','))\n"
         "print(table.concat(lpeg.match(lpeg.Ct((lpeg.C(lpeg.R'09'^1) + 1)^0), 'a1b22c333'), '+'))\n"
         "print(#lpeg.match(lpeg.Ct((lpeg.C(lpeg.R'09'^1) + 1)^0), 'a1b22c333'))\n");
  run(L, "local s = cjson.encode({a = {1, 2, 3}, b = 'x\\n', c = true}) local t = cjson.decode(s)\n"
         "print(#t.a, t.b == 'x\\n', t.c)\n"
         "print(cjson.encode(cjson.decode('[1,2.5,\"s\",null,{\"k\":[]}]')))\n"
         "print(pcall(cjson.decode, '{bad'))\n"
         "local big = {} for i = 1, 300 do big[i] = {id = i, name = 'n' .. i} end\n"
         "local back = cjson.decode(cjson.encode(big)) print(#back, back[300].name)\n");
  run(L, "local n = 0 for f in lfs.dir('" MODULE_DIR "') do n = n + 1 end print('entries', n >= 5)\n"
         "print(lfs.attributes('" MODULE_DIR "lpeg.so', 'mode'), lfs.attributes('/nonexistent', 'mode'))\n"
         "print(type(lfs.currentdir()))\n");
  lua_close(L);
  return 0;
}
