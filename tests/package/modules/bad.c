/* Test module bad.so: a library without luaopen_bad. */
#include "lua.h"

int luaopen_other(lua_State *L) {
  lua_pushboolean(L, 1);
  return 1;
}
