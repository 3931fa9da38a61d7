/* Test module a.b, built as a/b.so: require "a.b" finds it by the C searcher. */
#include "lua.h"

int luaopen_a_b(lua_State *L) {
  lua_pushfstring(L, "a.b loaded as %s", lua_tostring(L, 1));
  return 1;
}
