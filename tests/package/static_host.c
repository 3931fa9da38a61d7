/* A host linked with libweft.a that loads Debian's lpeg and cjson: the executable must
   export the C API for them, as lua5.4 does (docs/embedding.md, "Static linking"). */
#include <stdio.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

int main(void) {
  lua_State *L = luaL_newstate();
  if (L == NULL) return 1;
  luaL_openlibs(L);
  if (luaL_dostring(L, "local lpeg, cjson = require 'lpeg', require 'cjson'\n"
                       "return lpeg.match(lpeg.C(lpeg.R'az'^1), 'static host'), cjson.encode({1, 2})") != LUA_OK) {
    fprintf(stderr, "error: %s\n", lua_tostring(L, -1));
    lua_close(L);
    return 1;
  }
  printf("%s %s\n", lua_tostring(L, -2), lua_tostring(L, -1));
  lua_close(L);
  return 0;
}
