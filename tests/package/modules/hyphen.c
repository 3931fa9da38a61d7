/* Built twice (tests/package/CMakeLists.txt): as mod-v2.so with HYPHEN_NEW, whose open
   function is named by the part before the hyphen (luaopen_mod); as v1-old.so, which
   only has the older name, from the part after it (luaopen_old). */
#include "lua.h"

#ifdef HYPHEN_NEW
int luaopen_mod(lua_State *L) {
  lua_pushstring(L, "luaopen_mod");
  return 1;
}
#else
int luaopen_old(lua_State *L) {
  lua_pushstring(L, "luaopen_old");
  return 1;
}
#endif
