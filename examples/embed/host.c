/* A C host of Lua 5.4 that uses nothing but lua.h, lauxlib.h and lualib.h: it builds
   unchanged against Weft's installed package or against PUC Lua (README.md). */
#include <stdio.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

static int greet(lua_State *L) {
  lua_pushfstring(L, "hello, %s", luaL_checkstring(L, 1));
  return 1;
}

int main(void) {
  lua_State *L = luaL_newstate();
  if (L == NULL) return 1;
  luaL_openlibs(L);
  lua_register(L, "greet", greet);
  if (luaL_dostring(L, "local t = {} for i = 1, 10 do t[i] = i * i end\n"
                       "return greet('embedder'), #t, t[10], type(package.loadlib)") != LUA_OK) {
    fprintf(stderr, "error: %s\n", lua_tostring(L, -1));
    lua_close(L);
    return 1;
  }
  printf("%s %d %d %s\n", lua_tostring(L, -4), (int)lua_tointeger(L, -3), (int)lua_tointeger(L, -2),
         lua_tostring(L, -1));
  lua_close(L);
  return 0;
}
